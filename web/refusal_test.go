package web

import (
	"github.com/backupweb/backupweb/password"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/catalog"
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
		{"405", &fakeProvider{admit: true}, "DELETE", "/healthz", "", 405},
		{"413", &fakeProvider{admit: true}, "POST", "/", strings.Repeat("x", MaxBodyBytes+1), 413},
		{"429 throttled", &fakeProvider{err: &auth.RetryError{After: 3 * time.Minute}}, "GET", "/", "", 429},
		{"503 busy", &fakeProvider{err: password.ErrBusy}, "GET", "/", "", 503},
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
				req := httptest.NewRequest(tc.method, path, strings.NewReader(tc.body))
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
	// The forward-auth paths answer JSON, whatever Accept says.
	h := NewHandler(Options{Provider: &fakeProvider{admit: false}, Catalog: catalog.New(t.TempDir())})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/auth/request", nil)
	req.Header.Set("Accept", "text/html")
	h.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("/auth/…: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
