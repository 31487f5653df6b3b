package backupweb_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backupweb/backupweb"
)

// A chi router (or gorilla/mux, or any router) serves the type's own
// routes through Routes, routing each of Paths to it; the rest of the
// application is wrapped with RequireAuth as usual.
func ExampleProvider_Routes() {
	dir, _ := os.MkdirTemp("", "backupweb-example")
	defer os.RemoveAll(dir)
	users := filepath.Join(dir, "users")
	// A password hash made with `backupweb hash-password` belongs here,
	// with use_bcrypt = true.
	os.WriteFile(users, []byte("alice:a plain password for the example\n"), 0o600)
	p, err := backupweb.NewProvider("flask-login", map[string]string{"users_file": users},
		backupweb.Options{SecretKey: strings.Repeat("s", 32), StateDir: filepath.Join(dir, "state")})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	r := chi.NewRouter()
	routes := p.Routes()
	for _, path := range p.Paths() {
		if strings.HasSuffix(path, "/") {
			path += "*" // chi writes a prefix with a star
		}
		r.Handle(path, routes)
	}
	r.With(p.RequireAuth).Get("/api/me", me)

	fmt.Println(get(r, "/login").StatusCode)
	fmt.Println(get(r, "/_backupweb/style.css").Header.Get("Content-Type"))
	fmt.Println(get(r, "/api/me", "Accept", "text/html").Header.Get("Location"))
	// Output:
	// 200
	// text/css; charset=utf-8
	// /login?next=%2Fapi%2Fme
}

// Code below the handler that is handed the request's context, not the
// request, reads the user with FromContext.
func ExampleFromContext() {
	p, err := backupweb.NewProvider("none", nil, backupweb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	audit := func(ctx context.Context, what string) {
		u, _ := backupweb.FromContext(ctx)
		fmt.Printf("%s by %s\n", what, u.Username)
	}
	h := p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit(r.Context(), "download")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/backups/db.sql", nil))
	// Output:
	// download by anonymous
}

// Errors are values a program can test: a missing file is fs.ErrNotExist,
// a file without an [authentication] section ErrNoType, and every problem
// of a file a *ConfigError naming its file, line and key.
func ExampleConfigError() {
	dir, _ := os.MkdirTemp("", "backupweb-example")
	defer os.RemoveAll(dir)

	_, err := backupweb.ReadConfig(filepath.Join(dir, "missing.ini"))
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	other := filepath.Join(dir, "other.ini")
	os.WriteFile(other, []byte("[server]\nlisten = 127.0.0.1:8080\n"), 0o600)
	_, err = backupweb.ReadConfig(other)
	fmt.Println(errors.Is(err, backupweb.ErrNoType))

	bad := filepath.Join(dir, "bad.ini")
	os.WriteFile(bad, []byte("[authentication]\ntype = basic\nusername = admin\npassword = x\nmax_failures = many\n"), 0o600)
	cfg, _ := backupweb.ReadConfig(bad)
	_, err = backupweb.NewProvider("", cfg, backupweb.Options{})
	var ce *backupweb.ConfigError
	if errors.As(err, &ce) {
		fmt.Println(ce.Section, ce.Key)
	}
	// Output:
	// true
	// true
	// authentication max_failures
}

// Mount adds the type's own pages to a ServeMux: here basic, whose only
// pages are the stylesheet and icon its refusals use.
func ExampleProvider_Mount() {
	p, err := backupweb.NewProvider("basic", map[string]string{"username": "admin", "password": "a long enough password"}, backupweb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Mount(mux)
	fmt.Println(p.Paths())
	fmt.Println(get(mux, "/_backupweb/style.css").StatusCode)
	// Output:
	// [/_backupweb/]
	// 200
}

// RequireAuth lets through only what the provider admits: with basic, a
// request without the password gets 401 and the challenge.
func ExampleProvider_RequireAuth() {
	p, err := backupweb.NewProvider("basic", map[string]string{"username": "admin", "password": "a long enough password"}, backupweb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	h := p.RequireAuth(http.HandlerFunc(me))
	fmt.Println(get(h, "/api/me").StatusCode)
	fmt.Print(get(h, "/api/me", "Authorization", "Basic YWRtaW46YSBsb25nIGVub3VnaCBwYXNzd29yZA==").StatusCode, "\n")
	// Output:
	// 401
	// 200
}

// CurrentUser reads, in a handler behind RequireAuth, who made the request.
func ExampleCurrentUser() {
	p, err := backupweb.NewProvider("none", nil, backupweb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	h := p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := backupweb.CurrentUser(r)
		fmt.Println(u.Username, u.Type, ok)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	// Output:
	// anonymous none true
}
