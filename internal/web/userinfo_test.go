package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// storeDownErr is a session store that does not answer.
type storeDownErr struct{}

func (storeDownErr) Error() string     { return "redis: find session: connection refused" }
func (storeDownErr) Unavailable() bool { return true }
func (storeDownErr) StoreDown() bool   { return true }

// TestUserinfo: GET /_backupweb/userinfo answers the signed-in user as
// JSON (expiry in RFC 3339, null where the type knows none), 401 JSON for
// everyone else whatever they accept, the provider's reply when it cannot
// decide; never cached; served by backupweb itself in proxy mode.
func TestUserinfo(t *testing.T) {
	expires := time.Date(2026, 11, 25, 18, 30, 0, 0, time.FixedZone("CET", 3600))
	session := auth.User{Name: "alice@example.com", Type: "oauth", Attrs: attrs.Of(map[string]string{"email": "alice@example.com"}), Expires: expires}
	for _, tc := range []struct {
		name   string
		p      *fakeProvider
		accept string
		status int
		body   string
	}{
		{"session", &fakeProvider{admit: true, user: session}, "", 200,
			`{"username":"alice@example.com","email":"alice@example.com","type":"oauth","expires":"2026-11-25T17:30:00Z","groups":[]}`},
		{"basic", &fakeProvider{admit: true, user: auth.User{Name: "admin", Type: "basic"}}, "", 200,
			`{"username":"admin","email":null,"type":"basic","expires":null,"groups":[]}`},
		{"none", &fakeProvider{admit: true, user: auth.User{Name: auth.Anonymous, Type: "none"}}, "", 200,
			`{"username":"anonymous","email":null,"type":"none","expires":null,"groups":[]}`},
		{"not signed in", &fakeProvider{}, "", 401, `{"error":"Authentication required: sign in first."}`},
		{"not signed in, browser", &fakeProvider{}, "text/html", 401, `{"error":"Authentication required: sign in first."}`},
		{"store down", &fakeProvider{err: storeDownErr{}}, "text/html", 503, `{"error":"` + refusal.StoreNotAnswering.Message() + `"}`},
		{"unexpected", &fakeProvider{err: errors.New("disk on fire")}, "", 500, `{"error":"Authentication failed because of a server error."}`},
	} {
		for _, mode := range []string{"catalog", "proxy"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				o := Options{Provider: tc.p, Catalog: catalog.New(t.TempDir())}
				if mode == "proxy" {
					o.Proxy = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						t.Errorf("%s went to the upstream", r.URL.Path)
					})
				}
				o.Logger, _ = quietLogger()
				srv := httptest.NewServer(NewHandler(o))
				defer srv.Close()
				req, _ := http.NewRequest("GET", srv.URL+UserinfoPath, nil)
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status || strings.TrimSpace(string(b)) != tc.body {
					t.Fatalf("%d %s\nwant %d %s", resp.StatusCode, b, tc.status, tc.body)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type %q", ct)
				}
				if resp.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
				}
				if tc.status == 200 {
					checkAPIHeaders(t, resp.Header)
				} else {
					checkSecurityHeaders(t, resp.Header)
				}
				if tc.status == 503 && resp.Header.Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
				if resp.Header.Get("WWW-Authenticate") != "" || resp.Header.Get("Location") != "" {
					t.Error("userinfo challenged or redirected")
				}
				var v map[string]any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
			})
		}
	}
}

// TestBrandOnEveryPage: the handler's Brand reaches the pages it renders
// and the refusals it writes, in proxy mode included.
func TestBrandOnEveryPage(t *testing.T) {
	h := NewHandler(Options{
		Provider: &fakeProvider{}, Catalog: catalog.New(t.TempDir()),
		Proxy: http.NotFoundHandler(), Brand: ui.Brand{Title: "Syncthing", Product: "Syncthing"},
	})
	rec := do(h, "DELETE", "/healthz", map[string]string{"Accept": "text/html"})
	body := rec.Body.String()
	for _, w := range []string{`<title>Method Not Allowed · Syncthing</title>`, `Back to Syncthing`} {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %s\n%s", w, body)
		}
	}
	if strings.Contains(body, "Back to the backups") {
		t.Error("the page in front of Syncthing speaks of backups")
	}
}
