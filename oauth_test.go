package backupweb_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// TestOAuthSignIn signs in through an OpenID Connect provider (in-process,
// on loopback) to a server guarded by the root package, and reads the
// user; an account the configuration does not admit gets 403.
func TestOAuthSignIn(t *testing.T) {
	var h http.Handler = http.NotFoundHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer srv.Close()
	op := oidctest.Start(t, oidctest.Options{
		Users: []oidctest.User{
			{Username: "alice", Password: "password", Email: "alice@example.com", EmailVerified: true, FirstName: "Alice"},
			{Username: "eve", Password: "password", Email: "eve@evil-example.com", EmailVerified: true, FirstName: "Eve"},
		},
		Clients: []oidctest.Client{{ID: "app", Secret: "app-secret", RedirectURIs: []string{srv.URL + "/oauth/callback"}}},
	})
	p, err := backupweb.NewProvider("oauth", map[string]string{
		"provider":           "generic",
		"issuer":             op.Issuer,
		"client_id":          "app",
		"client_secret":      "${CLIENT_SECRET}",
		"redirect_uri":       srv.URL + "/oauth/callback",
		"authorized_domains": "example.com",
	}, backupweb.Options{SecretKey: testKey, StateDir: t.TempDir(), LookupEnv: lookup(map[string]string{"CLIENT_SECRET": "app-secret"})})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /whoami", p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := backupweb.CurrentUser(r)
		rec := u.Record()
		rec["email_field"] = u.Email
		json.NewEncoder(w).Encode(rec)
	})))
	h = p.Handler(mux)

	tests := []struct {
		user   string
		status int
		want   map[string]any
	}{
		{"alice", http.StatusOK, map[string]any{"username": "alice@example.com", "auth_type": "oauth", "email_field": "alice@example.com"}},
		{"eve", http.StatusForbidden, nil},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar}
			page, err := c.Get(srv.URL + "/oauth/login?next=" + url.QueryEscape("/whoami"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := op.SubmitLogin(c, page, tt.user, "password")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("sign-in of %s ended %d at %s, want %d", tt.user, resp.StatusCode, resp.Request.URL, tt.status)
			}
			if tt.want == nil {
				return
			}
			var me map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&me); err != nil || !strings.HasSuffix(resp.Request.URL.Path, "/whoami") {
				t.Fatalf("sign-in ended at %s: %v", resp.Request.URL, err)
			}
			for k, v := range tt.want {
				if me[k] != v {
					t.Errorf("%s = %v, want %v (record %v)", k, me[k], v, me)
				}
			}
		})
	}
}
