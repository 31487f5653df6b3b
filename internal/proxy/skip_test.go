package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/testkit"
)

// skipAuthRoutes returns the rules [proxy] skip_auth_routes = entries
// folds into in proxy mode (config.Access): one anonymous rule per entry.
func skipAuthRoutes(t *testing.T, entries ...string) *access.Rules {
	t.Helper()
	rs := &access.Rules{}
	for _, e := range entries {
		r, problem, err := access.Parse(e)
		if err != nil || problem != nil {
			t.Fatal(e, err, problem)
		}
		rs.List = append(rs.List, access.FromRoute("skip_auth_routes", r))
	}
	if problems := rs.Check(); len(problems) > 0 {
		t.Fatal(problems)
	}
	return rs
}

// TestSkipAuthRoutes: a listed route reaches the upstream without sign-in
// and without identity headers, even when the client forges them or is
// signed in; every spelling that is not the route's canonical path, and
// every other route, still needs sign-in.
func TestSkipAuthRoutes(t *testing.T) {
	up := startUpstream(t)
	g := guardRules(t, up.URL, proxy.Options{}, skipAuthRoutes(t, "GET|HEAD=^/rest/noauth/health$", "^/public/"), basicSetup(t))
	send := func(method, target string, creds bool) (*http.Response, seen) {
		t.Helper()
		req, _ := http.NewRequest(method, g.url+"/", nil)
		req.URL.Opaque = target // as written, dot segments and escapes included
		req.Header.Set("X-Forwarded-User", "mallory")
		req.Header.Set("X-Forwarded-Email", "mallory@evil.example")
		if creds {
			req.SetBasicAuth("api", "pw")
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got seen
		json.NewDecoder(resp.Body).Decode(&got)
		return resp, got
	}
	for _, tt := range []struct {
		method, target string
		skips          bool
	}{
		{"GET", "/rest/noauth/health", true},
		{"HEAD", "/rest/noauth/health", true},
		{"GET", "/rest/noauth/health?next=/admin", true},
		{"GET", "/rest/noauth/%68ealth", true},
		{"GET", "/public/app.js", true},
		{"POST", "/rest/noauth/health", false},
		{"GET", "/rest/noauth/healthz", false},
		{"GET", "/REST/noauth/health", false},
		{"GET", "/rest/noauth/health/../../../admin", false},
		{"GET", "/admin/../rest/noauth/health", false},
		{"GET", "//rest/noauth/health", false},
		{"GET", "/public/..%2Fadmin", false},
		{"GET", "/public/%2e%2e/admin", false},
		{"GET", "/public/..;/admin", false},
		{"GET", "/admin?x=/public/", false},
	} {
		resp, got := send(tt.method, tt.target, false)
		if tt.skips {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s without credentials: %d, want 200 from the upstream", tt.method, tt.target, resp.StatusCode)
			}
			if tt.method == "GET" && (got.Header.Get("X-Forwarded-User") != "" || got.Header.Get("X-Forwarded-Email") != "") {
				t.Errorf("%s %s: the upstream got identity headers %v", tt.method, tt.target, got.Header)
			}
			continue
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without credentials: %d, want 401", tt.method, tt.target, resp.StatusCode)
		}
	}
	// Signed in on a skipped route: still no identity for the upstream.
	if resp, got := send("GET", "/rest/noauth/health", true); resp.StatusCode != 200 || got.Header.Get("X-Forwarded-User") != "" {
		t.Errorf("signed in on a skipped route: %d, X-Forwarded-User %q", resp.StatusCode, got.Header.Get("X-Forwarded-User"))
	}
	// Signed in elsewhere: the identity backupweb vouches for.
	if resp, got := send("GET", "/admin", true); resp.StatusCode != 200 || got.Header.Get("X-Forwarded-User") != "api" {
		t.Errorf("signed in: %d, X-Forwarded-User %q", resp.StatusCode, got.Header.Get("X-Forwarded-User"))
	}
}

// loginProvider is a flask-login provider over a user file holding users
// (name -> password), with deps's clock; it returns the provider and the
// user file's path.
type loginProvider struct {
	p     *login.Provider
	users string
}

func newLoginSetup(t *testing.T, users map[string]string, deps auth.Deps) (*loginProvider, func(string, *slog.Logger) auth.Provider) {
	lp := &loginProvider{users: filepath.Join(t.TempDir(), "users")}
	writeUsers(t, lp.users, users)
	return lp, func(_ string, log *slog.Logger) auth.Provider {
		deps.Logger, deps.SecretKey = log, []byte(strings.Repeat("k", 32))
		if deps.StateDir == "" && deps.Shared == nil {
			deps.StateDir = t.TempDir()
		}
		p, err := login.New(login.Config{UsersFile: lp.users, UseBcrypt: true, PollInterval: 50 * time.Millisecond}, deps)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Watch(ctx); close(done) }() // as the program runs it
		t.Cleanup(func() { cancel(); <-done; p.Close() })
		lp.p = p
		return p
	}
}

// writeUsers replaces the user file at path with users (name -> password).
func writeUsers(t *testing.T, path string, users map[string]string) {
	t.Helper()
	var b strings.Builder
	for name, pw := range users {
		// testkit.Hash is computed once per password, so that every user
		// file of a test (and of two instances) holds the same line for an
		// unchanged user: a new hash is a changed password.
		b.WriteString(name + ":" + testkit.Hash(t, pw) + "\n")
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestAllowUsers: a signed-in user that allow_users does not list gets
// 403 (the styled page for a browser, JSON for an API client), never a
// redirect to the sign-in page, and the upstream is not asked; a listed
// user passes.
func TestAllowUsers(t *testing.T) {
	up := startUpstream(t)
	_, setup := newLoginSetup(t, map[string]string{"alice": "pw", "bob": "pw"}, auth.Deps{})
	// [proxy] allow_users = alice, as config.Access folds it.
	rules := &access.Rules{List: []access.Rule{access.OnlyUsers([]string{"alice"})}}
	g := guardRules(t, up.URL, proxy.Options{}, rules, setup)
	nf := func(c *http.Client) *http.Client {
		n := *c
		n.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return &n
	}
	bob := jarClient()
	testkit.SignIn(t, bob, testkit.Login{Page: g.url + "/login", User: "bob", Password: "pw"})
	before := up.hits.Load()
	for _, accept := range []string{"text/html", "application/json"} {
		req, _ := http.NewRequest("GET", g.url+"/dashboard", nil)
		req.Header.Set("Accept", accept)
		resp, err := nf(bob).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("bob (Accept %s): %d %s, want 403", accept, resp.StatusCode, resp.Header.Get("Location"))
		}
		if accept == "text/html" && !strings.Contains(string(body), `rel="stylesheet"`) ||
			accept == "application/json" && !strings.HasPrefix(string(body), `{"error":`) {
			t.Errorf("bob (Accept %s): body %.200s", accept, body)
		}
	}
	if up.hits.Load() != before {
		t.Error("the upstream was asked for a user allow_users does not list")
	}
	if !strings.Contains(g.logs.String(), `reason="user not in allow_users"`) || !strings.Contains(g.logs.String(), "user=bob") {
		t.Errorf("no refusal line:\n%s", g.logs)
	}
	// Forward authentication answers the same.
	req, _ := http.NewRequest("GET", g.url+"/auth/request", nil)
	resp, err := nf(bob).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("/auth/request for bob: %d, want 403", resp.StatusCode)
	}
	alice := jarClient()
	testkit.SignIn(t, alice, testkit.Login{Page: g.url + "/login", User: "alice", Password: "pw"})
	resp, err = nf(alice).Get(g.url + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	var got seen
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || got.Header.Get("X-Forwarded-User") != "alice" {
		t.Errorf("alice: %d, upstream saw %q", resp.StatusCode, got.Header.Get("X-Forwarded-User"))
	}
}
