package web

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/refusal"
)

// scopedProvider admits the user named by X-Test-User as a machine token
// would: read-only, under /backups/db/.
type scopedProvider struct{}

func (scopedProvider) Type() string { return "flask-login" }

func (scopedProvider) Identify(r *http.Request) (auth.User, bool, error) {
	name := r.Header.Get("X-Test-User")
	if name == "" {
		return auth.User{}, false, nil
	}
	return auth.User{Name: name, Type: "flask-login", Scope: &access.Scope{ReadOnly: true, Path: "/backups/db/"}}, true, nil
}

func (scopedProvider) Challenge(w http.ResponseWriter, r *http.Request) {
	NewErrors(nil).Refuse(w, r, refusal.SignInFirst)
}

// TestScopeRefusalsLoggedAndCounted: a request outside its token's scope
// (another path, or a method override on a read-only token) gets 403 in
// the catalog, through the proxy and from forward authentication, and each
// writes one "auth refused" warning (type, reason, client, user, the scope
// as detail) and is counted under a reason of the metrics' fixed set.
func TestScopeRefusalsLoggedAndCounted(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "db"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "db", "x.txt"), []byte("x"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("o"), 0o600))
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	upURL, _ := url.Parse(up.URL)

	for _, mode := range []string{"catalog", "proxy", "forward-auth"} {
		t.Run(mode, func(t *testing.T) {
			log, buf := quietLogger()
			obs := &countingObserver{refused: map[string]int{}}
			o := Options{Provider: scopedProvider{}, Logger: log, Observer: obs, Events: obs,
				Resolver: peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})}
			switch mode {
			case "catalog":
				o.Catalog = catalog.New(dir)
			case "proxy":
				o.Proxy = proxy.New(proxy.Options{Upstream: upURL, UserHeader: "X-Forwarded-User", Logger: log})
			case "forward-auth":
				o.NoCatalog = true
			}
			srv := httptest.NewServer(NewHandler(o))
			defer srv.Close()
			ask := func(path string, override bool) int {
				t.Helper()
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				if mode == "forward-auth" {
					req, _ = http.NewRequest("GET", srv.URL+RequestAuthPath, nil)
					req.Header.Set("X-Original-Method", "GET")
					req.Header.Set("X-Original-URI", path)
					req.Header.Set("X-Original-Host", "backups.example.com")
				}
				req.Header.Set("X-Test-User", "carol")
				if override {
					req.Header.Set("X-HTTP-Method-Override", "DELETE")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := ask("/backups/db/x.txt", false); got != 200 {
				t.Fatalf("inside the scope: %d, want 200", got)
			}
			if got := ask("/backups/other.txt", false); got != 403 {
				t.Errorf("another path: %d, want 403", got)
			}
			if got := ask("/backups/db/x.txt", true); got != 403 {
				t.Errorf("a method override on a read-only token: %d, want 403", got)
			}
			logs := buf.String()
			var lines []string
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, `reason="outside the token's scope"`) {
					lines = append(lines, l)
				}
			}
			if len(lines) != 2 {
				t.Fatalf("want 2 lines for the 2 refusals:\n%s", logs)
			}
			for _, l := range lines {
				for _, want := range []string{"level=WARN", `msg="auth refused"`, "auth_type=flask-login", "client=127.0.0.1", "user=carol", `detail="read-only, path /backups/db/"`} {
					if !strings.Contains(l, want) {
						t.Errorf("the line lacks %s: %s", want, l)
					}
				}
			}
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if n := obs.refused[auth.ReasonOutOfScope]; n != 2 || len(obs.refused) != 1 {
				t.Errorf("counted %v, want 2 under %q", obs.refused, auth.ReasonOutOfScope)
			}
			if !slices.Contains(auth.RefusalReasons(), auth.ReasonOutOfScope) {
				t.Errorf("reason %q is not in the metrics' fixed set", auth.ReasonOutOfScope)
			}
		})
	}
}

// TestScopeReadsAListingAsItsFolder: a token limited to /backups/db/ may
// list db/ (GET /api/backups?path=db/) and what is below it, and no other
// folder, however the folder is spelled; a method override is still
// refused.
func TestScopeReadsAListingAsItsFolder(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"db/daily", "other"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(dir, "db", "x.sql"), []byte("x"), 0o600))
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: scopedProvider{}, Logger: log, Catalog: catalog.New(dir)}))
	defer srv.Close()
	cases := []struct {
		query    string
		override bool
		want     int
	}{
		{"?path=db/", false, 200},
		{"?path=db", false, 200},
		{"?path=db/daily/&sort=name", false, 200},
		{"?path=db/", true, 403},
		{"", false, 403},
		{"?path=", false, 403},
		{"?q=x", false, 403},
		{"?path=other/", false, 403},
		{"?path=db/../other/", false, 403},
		{"?path=db/%2e%2e/other/", false, 403},
		{"?path=dbx/", false, 403},
		{"?path=other/&path=db/", false, 403},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("GET", srv.URL+"/api/backups"+c.query, nil)
		req.Header.Set("X-Test-User", "carol")
		if c.override {
			req.Header.Set("X-HTTP-Method-Override", "DELETE")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("/api/backups%s (override %v): %d, want %d", c.query, c.override, resp.StatusCode, c.want)
		}
	}
}
