package web

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/refusal"
)

// TestOneRefusalRule: every refusal a client can see follows one rule —
// JSON under /api/, on /auth/…, and for clients whose Accept names
// application/json; the styled page (with the stylesheet) otherwise — and
// 429 and 503 carry Retry-After.
func TestOneRefusalRule(t *testing.T) {
	cases := []struct {
		name    string
		p       auth.Provider
		method  string
		path    string // as a browser or an API client asks it
		apiPath string // the same refusal under /api/; "" when it has none
		body    string
		status  int
		cross   bool // sent as a cross-site request (Sec-Fetch-Site)
	}{
		{"401 challenge", &fakeProvider{admit: false}, "GET", "/", "/api/backups", "", 401, false},
		{"404 unknown route", &fakeProvider{admit: true}, "GET", "/no/such/page", "/api/no/such", "", 404, false},
		{"404 missing backup", &fakeProvider{admit: true}, "GET", "/backups/none.tar", "", "", 404, false},
		{"404 unknown asset", &fakeProvider{admit: true}, "GET", "/_backupweb/nope.css", "/_backupweb/nope.css", "", 404, false},
		{"405 asset", &fakeProvider{admit: true}, "POST", "/_backupweb/style.css", "/_backupweb/style.css", "", 405, false},
		{"405", &fakeProvider{admit: true}, "DELETE", "/healthz", "/healthz", "", 405, false},
		{"413", &fakeProvider{admit: true}, "POST", "/", "/api/backups", strings.Repeat("x", MaxBodyBytes+1), 413, false},
		{"429 throttled", &fakeProvider{err: &refusal.RetryError{After: 3 * time.Minute}}, "GET", "/", "/api/backups", "", 429, false},
		{"503 busy", &fakeProvider{err: password.ErrBusy}, "GET", "/", "/api/backups", "", 503, false},
		{"503 store down", &fakeProvider{err: unavailableErr{}}, "GET", "/", "/api/backups", "", 503, false},
		{"500 unexpected", &fakeProvider{err: errors.New("disk on fire")}, "GET", "/", "/api/backups", "", 500, false},
		{"403 cross-origin", &fakeProvider{admit: true}, "POST", "/logout", "/api/backups", "", 403, true},
	}
	clients := []struct {
		name   string
		api    bool // asks the API path
		accept string
		json   bool
	}{
		{"browser", false, "text/html,application/xhtml+xml", false},
		{"API client", false, "application/json", true},
		{"API path", true, "", false},
	}
	for _, tc := range cases {
		for _, cl := range clients {
			path := tc.path
			if cl.api {
				if path = tc.apiPath; path == "" {
					continue
				}
			}
			t.Run(tc.name+"/"+cl.name, func(t *testing.T) {
				h := NewHandler(Options{Provider: tc.p, Catalog: catalog.New(t.TempDir())})
				req := httptest.NewRequest(tc.method, path, strings.NewReader(tc.body))
				if tc.cross {
					req.Header.Set("Sec-Fetch-Site", "cross-site")
				}
				if cl.accept != "" {
					req.Header.Set("Accept", cl.accept)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != tc.status {
					t.Fatalf("%s %s: status %d, want %d", tc.method, path, rec.Code, tc.status)
				}
				ct := rec.Header().Get("Content-Type")
				switch {
				case cl.json || strings.HasPrefix(path, "/api/"):
					if !strings.HasPrefix(ct, "application/json") || !strings.HasPrefix(rec.Body.String(), `{"error":`) {
						t.Errorf("want JSON, got %q: %.200s", ct, rec.Body.String())
					}
				default:
					if !strings.HasPrefix(ct, "text/html") || !strings.Contains(rec.Body.String(), `rel="stylesheet"`) {
						t.Errorf("want the styled page, got %q: %.300s", ct, rec.Body.String())
					}
				}
				if (rec.Code == 429 || rec.Code == 503) && rec.Header().Get("Retry-After") == "" {
					t.Error("no Retry-After")
				}
			})
		}
	}
	// The forward-auth paths answer JSON, whatever Accept says, with the
	// same statuses (nginx's /auth/request turns 429 into 403, which it
	// understands) and Retry-After.
	for _, tc := range []struct {
		name   string
		p      auth.Provider
		path   string
		status int
	}{
		{"401", &fakeProvider{admit: false}, "/auth/request", 401},
		{"401 forward", &fakeProvider{admit: false}, "/auth/forward", 401},
		{"429 forward", &fakeProvider{err: &refusal.RetryError{After: time.Minute}}, "/auth/forward", 429},
		{"429 as 403 for nginx", &fakeProvider{err: &refusal.RetryError{After: time.Minute}}, "/auth/request", 403},
		{"503", &fakeProvider{err: unavailableErr{}}, "/auth/forward", 503},
		{"500", &fakeProvider{err: errors.New("disk on fire")}, "/auth/request", 500},
	} {
		t.Run("forward-auth/"+tc.name, func(t *testing.T) {
			h := NewHandler(Options{Provider: tc.p, Catalog: catalog.New(t.TempDir())})
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", tc.path, nil)
			req.Header.Set("Accept", "text/html")
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("%s: %d %q, want %d JSON", tc.path, rec.Code, rec.Header().Get("Content-Type"), tc.status)
			}
			if (rec.Code == 429 || rec.Code == 503) && rec.Header().Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		})
	}
}

// unavailableErr is an error of a store that does not answer, recognised
// by its behaviour.
type unavailableErr struct{}

func (unavailableErr) Error() string     { return "store: not answering" }
func (unavailableErr) Unavailable() bool { return true }
