package auth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
)

// Reading the current user in a protected handler: FromContext gives the
// user RequireAuth admitted, Record the current-user mapping (at least
// "username" and "auth_type").
func ExampleFromContext() {
	me := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := auth.FromContext(r.Context())
		if !ok {
			http.Error(w, "not behind RequireAuth", http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(u.Record())
	})
	h := auth.RequireAuth(none.Provider{}, nil, auth.Audit{})(me)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/me", nil))
	fmt.Print(rec.Body.String())
	// Output:
	// {"auth_type":"none","username":"anonymous"}
}
