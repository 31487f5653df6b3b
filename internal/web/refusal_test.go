package web

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/password"
)

// TestOneRefusalRule: every refusal a client can see follows one rule —
// JSON under /api/, on /auth/…, and for clients whose Accept names
// application/json; the styled page (with the stylesheet) otherwise — and
// 429 and 503 carry Retry-After.
func TestOneRefusalRule(t *testing.T) {
	cases := []struct {
		name   string
		p      auth.Provider
		method string
		path   string
		body   string
		status int
	}{
		{"401 challenge", &fakeProvider{admit: false}, "GET", "/", "", 401},
		{"404 unknown route", &fakeProvider{admit: true}, "GET", "/no/such/page", "", 404},
		{"404 missing backup", &fakeProvider{admit: true}, "GET", "/backups/none.tar", "", 404},
		{"404 unknown asset", &fakeProvider{admit: true}, "GET", "/_backupweb/nope.css", "", 404},
		{"405 asset", &fakeProvider{admit: true}, "POST", "/_backupweb/style.css", "", 405},
		{"405", &fakeProvider{admit: true}, "DELETE", "/healthz", "", 405},
		{"413", &fakeProvider{admit: true}, "POST", "/", strings.Repeat("x", MaxBodyBytes+1), 413},
		{"429 throttled", &fakeProvider{err: &auth.RetryError{After: 3 * time.Minute}}, "GET", "/", "", 429},
		{"503 busy", &fakeProvider{err: password.ErrBusy}, "GET", "/", "", 503},
		{"503 store down", &fakeProvider{err: unavailableErr{}}, "GET", "/", "", 503},
		{"500 unexpected", &fakeProvider{err: errors.New("disk on fire")}, "GET", "/", "", 500},
		{"403 cross-origin", &fakeProvider{admit: true}, "POST", "/cross-origin", "", 403},
	}
	clients := []struct {
		name   string
		prefix string // path prefix
		accept string
		json   bool
	}{
		{"browser", "", "text/html,application/xhtml+xml", false},
		{"API client", "", "application/json", true},
		{"API path", "/api", "", false},
	}
	for _, tc := range cases {
		for _, cl := range clients {
			path := tc.path
			if cl.prefix != "" && tc.path == "/" {
				path = "/api/backups"
			}
			if cl.prefix != "" && tc.path == "/no/such/page" {
				path = "/api/no/such"
			}
			if cl.prefix != "" && strings.HasPrefix(tc.path, "/backups/") {
				continue // no API form of a download
			}
			t.Run(tc.name+"/"+cl.name, func(t *testing.T) {
				h := NewHandler(Options{Provider: tc.p, Catalog: catalog.New(t.TempDir())})
				if path == "/cross-origin" {
					path = "/logout"
					if cl.prefix != "" {
						path = "/api/backups"
					}
				}
				req := httptest.NewRequest(tc.method, path, strings.NewReader(tc.body))
				if tc.name == "403 cross-origin" {
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
		{"429 forward", &fakeProvider{err: &auth.RetryError{After: time.Minute}}, "/auth/forward", 429},
		{"429 as 403 for nginx", &fakeProvider{err: &auth.RetryError{After: time.Minute}}, "/auth/request", 403},
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
