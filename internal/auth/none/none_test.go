package none

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
)

func TestRequireAuthLetsEveryoneThrough(t *testing.T) {
	var got auth.User
	h := auth.RequireAuth(Provider{}, nil, auth.Audit{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = auth.FromContext(r.Context())
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/me", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if got.Name != "anonymous" || got.Type != "none" {
		t.Fatalf("user = %+v", got)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatal("protected response without Cache-Control: no-store")
	}
}
