package basic_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"golang.org/x/crypto/bcrypt"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
)

// Protecting a handler with HTTP Basic authentication, and reading the
// current user in it.
func Example() {
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost) // use `backupweb hash-password`
	p, err := basic.New(basic.Config{Username: "api", Password: string(hash), UseBcrypt: true, Realm: "Backups"}, auth.Deps{})
	if err != nil {
		fmt.Println(err) // a missing or malformed hash is refused here
		return
	}

	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := auth.FromContext(r.Context()) // the current user
		fmt.Fprintf(w, "hello %s (%s)", u.Name, u.Type)
	})
	mux := http.NewServeMux()
	mux.Handle("GET /private", auth.RequireAuth(p, nil, auth.Audit{})(hello)) // nil: refusals as plain text (or JSON)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, pw := range []string{"", "s3cret"} {
		req, _ := http.NewRequest("GET", srv.URL+"/private", nil)
		if pw != "" {
			req.SetBasicAuth("api", pw)
		}
		resp, _ := http.DefaultClient.Do(req)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			fmt.Println(resp.StatusCode, string(body))
		} else {
			fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// Output:
	// 401 Basic realm="Backups"
	// 200 hello api (basic)
}
