package login_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/web"
)

// Protecting a handler with the session login: the provider mounts its
// login page and logout, and RequireAuth sends a browser that is not signed
// in to the login page with next set, and answers an API client 401.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	hash, _ := bcrypt.GenerateFromPassword([]byte("alice-pw"), bcrypt.MinCost) // use `backupweb user add`
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+string(hash)+"\n"), 0o600)

	p, err := login.New(login.Config{UsersFile: users, UseBcrypt: true},
		auth.Deps{
			SecretKey: []byte(strings.Repeat("k", 32)), // BACKUP_SECRET_KEY, from `backupweb gen-secret`
			StateDir:  filepath.Join(dir, "state"),
			Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	mux := http.NewServeMux()
	p.Mount(mux) // GET/POST /login, POST /logout, the stylesheet under /_backupweb/
	mux.Handle("GET /private", auth.RequireAuth(p, nil, auth.Audit{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := auth.FromContext(r.Context())
		fmt.Fprintln(w, "hello", u.Name)
		// A page of the host application signs the user out with this
		// form (put it in an html/template page as is).
		fmt.Fprintln(w, ui.LogoutButton(u.CSRFToken()))
	})))
	// The security headers and the cross-origin protection of the
	// program's own pages (web.CrossOrigin takes the error writer).
	srv := httptest.NewServer(web.SecurityHeaders(web.CrossOrigin(nil)(mux)))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	browser, _ := http.NewRequest("GET", srv.URL+"/private?x=1", nil)
	browser.Header.Set("Accept", "text/html")
	resp, _ := client.Do(browser)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))

	resp, _ = client.Get(srv.URL + "/private")
	resp.Body.Close()
	fmt.Println(resp.StatusCode)

	resp, _ = client.Get(srv.URL + "/_backupweb/style.css")
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	// Output:
	// 303 /login?next=%2Fprivate%3Fx%3D1
	// 401
	// 200 text/css; charset=utf-8
}
