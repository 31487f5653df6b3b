package backupweb_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"

	"github.com/backupweb/backupweb"
)

// me answers the current-user record as JSON, as backupweb's /api/me does.
func me(w http.ResponseWriter, r *http.Request) {
	u, ok := backupweb.CurrentUser(r)
	if !ok {
		http.Error(w, "not behind RequireAuth", http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(u.Record())
}

// get sends a GET for target through h, with the given headers (name,
// value pairs), and returns the answer.
func get(h http.Handler, target string, header ...string) *http.Response {
	r := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Result()
}

// Type none admits every request as "anonymous": it must be named, never a
// default. Its zero Options are enough.
func ExampleNewProvider_none() {
	p, err := backupweb.NewProvider("none", nil, backupweb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /api/me", p.RequireAuth(http.HandlerFunc(me)))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/api/me", nil))
	fmt.Print(rec.Body.String())
	// Output:
	// {"auth_type":"none","username":"anonymous"}
}

// Type basic checks one user with HTTP Basic authentication; the keys are
// those of the [authentication] section, ${NAME} read from the
// environment (here from Options.LookupEnv). Its zero Options are enough.
func ExampleNewProvider() {
	env := map[string]string{"API_PASSWORD": "correct horse battery staple"}
	p, err := backupweb.NewProvider("basic", map[string]string{
		"username": "backup-api",
		"password": "${API_PASSWORD}",
		"realm":    "Backups",
	}, backupweb.Options{LookupEnv: func(name string) (string, bool) { v, ok := env[name]; return v, ok }})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /api/me", p.RequireAuth(http.HandlerFunc(me)))
	h := p.Handler(mux)

	resp := get(h, "/api/me")
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))

	r := httptest.NewRequest("GET", "/api/me", nil)
	r.SetBasicAuth("backup-api", "correct horse battery staple")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 401 Basic realm="Backups"
	// 200 {"auth_type":"basic","username":"backup-api"}
}

// A mistake is refused as check-config refuses it, naming the key.
func ExampleNewProvider_mistake() {
	_, err := backupweb.NewProvider("basic", map[string]string{
		"username":    "backup-api",
		"password":    "secret",
		"use_bycrypt": "true",
	}, backupweb.Options{})
	fmt.Println(err)
	// Output:
	// backupweb: [authentication] use_bycrypt: unknown key; did you mean use_bcrypt?
}

// Type flask-login serves a login page backed by a user file; it keeps
// sessions in Options.StateDir under Options.SecretKey. A browser that is
// not signed in is sent to the login page, which Mount serves with its
// stylesheet.
func ExampleNewProvider_flaskLogin() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	users := filepath.Join(dir, "users")
	// A password hash made with `backupweb hash-password` belongs here,
	// with use_bcrypt = true.
	if err := os.WriteFile(users, []byte("alice:a plain password for the example\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	p, err := backupweb.NewProvider("flask-login", map[string]string{
		"users_file": users,
		"login_view": "login",
	}, backupweb.Options{
		SecretKey: "0123456789abcdef0123456789abcdef", // backupweb gen-secret makes one
		StateDir:  filepath.Join(dir, "state"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /{$}", p.RequireAuth(http.HandlerFunc(me)))
	h := p.Handler(mux)

	resp := get(h, "/", "Accept", "text/html")
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))
	resp = get(h, "/login")
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	resp = get(h, "/_backupweb/style.css")
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	// Output:
	// 303 /login?next=%2F
	// 200 text/html; charset=utf-8
	// 200 text/css; charset=utf-8
}

// With users = ldap, flask-login (and basic) sign users in against a
// directory: Options.LDAP holds the [ldap] keys (ReadLDAP reads them from
// a file). Nothing connects to the directory until someone signs in; the
// directory's groups then feed group:NAME rules, and its users' machine
// tokens and passkeys are checked with it.
func ExampleNewProvider_ldap() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p, err := backupweb.NewProvider("flask-login", map[string]string{
		"users": "ldap",
	}, backupweb.Options{
		SecretKey: "0123456789abcdef0123456789abcdef",
		StateDir:  filepath.Join(dir, "state"),
		LDAP: map[string]string{
			"url":           "ldaps://ldap.example.org:636",
			"bind_dn":       "cn=backupweb,ou=services,dc=example,dc=org",
			"bind_password": "${LDAP_PASSWORD}",
			"base_dn":       "dc=example,dc=org",
		},
		LookupEnv: func(name string) (string, bool) { return "service-secret", name == "LDAP_PASSWORD" },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /{$}", p.RequireAuth(http.HandlerFunc(me)))
	resp := get(p.Handler(mux), "/", "Accept", "text/html")
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))

	_, err = backupweb.NewProvider("flask-login", map[string]string{"users": "ldap"}, backupweb.Options{
		SecretKey: "0123456789abcdef0123456789abcdef", StateDir: filepath.Join(dir, "state"),
	})
	fmt.Println(err)
	// Output:
	// 303 /login?next=%2F
	// backupweb: [authentication] users: is ldap, but Options.LDAP is empty: give it the [ldap] keys (url, bind_dn, bind_password, base_dn; ReadLDAP reads them from a file)
}

// Type oauth sends a browser to the identity provider: here a generic
// OAuth 2.0 provider whose endpoints are given (with issuer set instead,
// it would be OpenID Connect with discovery). Nothing is fetched until a
// user comes back to /oauth/callback.
func ExampleNewProvider_oauth() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p, err := backupweb.NewProvider("oauth", map[string]string{
		"provider":               "generic",
		"client_id":              "backups",
		"client_secret":          "${OIDC_CLIENT_SECRET}",
		"redirect_uri":           "https://backups.example.com/oauth/callback",
		"authorization_endpoint": "https://sso.example.com/authorize",
		"token_endpoint":         "https://sso.example.com/token",
		"userinfo_endpoint":      "https://sso.example.com/userinfo",
		"authorized_domains":     "example.com",
	}, backupweb.Options{
		SecretKey: "0123456789abcdef0123456789abcdef",
		StateDir:  dir,
		LookupEnv: func(name string) (string, bool) { return "an example secret", name == "OIDC_CLIENT_SECRET" },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)

	resp := get(mux, "/oauth/login?next=/reports")
	loc, _ := url.Parse(resp.Header.Get("Location"))
	q := loc.Query()
	fmt.Println(resp.StatusCode, loc.Host, loc.Path, q.Get("response_type"), q.Get("code_challenge_method"))
	// Output:
	// 302 sso.example.com /authorize code S256
}

// ReadConfig reads the [authentication] section of a configuration file,
// as written; NewProvider expands ${NAME} and checks it.
func ExampleReadConfig() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "backupweb.ini")
	ini := "[server]\nlisten = 127.0.0.1:8080\n\n[authentication]\nType = basic\nusername = backup-api\npassword = ${API_PASSWORD}\n"
	if err := os.WriteFile(path, []byte(ini), 0o600); err != nil {
		log.Fatal(err)
	}
	cfg, err := backupweb.ReadConfig(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg["type"], cfg["username"], cfg["password"])
	// Output:
	// basic backup-api ${API_PASSWORD}
}
