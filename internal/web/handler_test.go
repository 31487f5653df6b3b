package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// checkSecurityHeaders asserts the headers every response carries.
func checkSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": contentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// pageOnlyHeaders are the security headers a successful JSON answer or
// forward-authentication 200 does not carry (apiHeaders).
var pageOnlyHeaders = []string{"Content-Security-Policy", "Referrer-Policy", "X-Frame-Options"}

// checkAPIHeaders asserts the headers of a successful JSON answer: nosniff,
// none of the headers that govern a rendered page.
func checkAPIHeaders(t *testing.T, h http.Header) {
	t.Helper()
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
	for _, k := range pageOnlyHeaders {
		if got := h.Get(k); got != "" {
			t.Errorf("%s = %q on a JSON answer, want none", k, got)
		}
	}
}

func TestRoutes(t *testing.T) {
	h, _ := noneHandler(t)
	tests := []struct {
		name, method, target string
		status               int
		noStore              bool   // Cache-Control: no-store expected
		contentType          string // prefix
		body                 string // substring
	}{
		{"health", "GET", "/healthz", 200, true, "text/plain", "ok"},
		{"health head", "HEAD", "/healthz", 200, true, "text/plain", ""},
		{"catalog page", "GET", "/", 200, true, "text/html", "nightly-2024-05-03.tar.gz"},
		{"catalog head", "HEAD", "/", 200, true, "text/html", ""},
		{"api backups", "GET", "/api/backups", 200, true, "application/json", `"backups"`},
		{"api me", "GET", "/api/me", 200, true, "application/json", `"username":"anonymous"`},
		{"download", "GET", "/backups/nightly-2024-05-02.tar.gz", 200, true, "application/octet-stream", "second"},
		{"download escaped", "GET", "/backups/weekly%202024-05-01.tar.zst", 200, true, "application/octet-stream", "weekly full"},
		{"stylesheet", "GET", "/_backupweb/style.css", 200, false, "text/css", "prefers-color-scheme"},
		{"unknown", "GET", "/nope", 404, true, "text/html", "There is nothing at this address."},
		{"unknown api", "GET", "/api/nope", 404, true, "application/json", `{"error":"There is nothing at this address."}`},
		{"index.html", "GET", "/index.html", 404, true, "text/html", "/_backupweb/style"},
		{"backups folder", "GET", "/backups", 404, true, "text/html", "Error 404"},
		{"missing backup", "GET", "/backups/missing.tar", 404, true, "text/html", "no backup of that name"},
		{"post page", "POST", "/", 405, true, "text/html", "does not accept that method"},
		{"post api", "POST", "/api/backups", 405, true, "application/json", `"error"`},
		{"delete backup", "DELETE", "/backups/nightly-2024-05-01.tar.gz", 405, true, "text/html", "Error 405"},
		{"put health", "PUT", "/healthz", 405, true, "text/html", "Error 405"},
		{"logout without provider route", "POST", "/logout", 404, true, "text/html", "Error 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(h, tt.method, tt.target, nil)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d; body %q", rec.Code, tt.status, rec.Body.String())
			}
			if tt.status == 200 && tt.contentType == "application/json" {
				checkAPIHeaders(t, rec.Header())
			} else {
				checkSecurityHeaders(t, rec.Header())
			}
			if got := rec.Header().Get("Cache-Control") == "no-store"; got != tt.noStore {
				t.Errorf("Cache-Control = %q, want no-store: %v", rec.Header().Get("Cache-Control"), tt.noStore)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("Content-Type = %q, want %s...", ct, tt.contentType)
			}
			if !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("body lacks %q: %.300s", tt.body, rec.Body.String())
			}
			if tt.status == 405 && rec.Header().Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		})
	}
}

func TestAPIBackupsShape(t *testing.T) {
	h, _ := noneHandler(t)
	rec := do(h, "GET", "/api/backups", nil)
	var got struct {
		Backups []map[string]any `json:"backups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	if len(got.Backups) != len(backupFiles) {
		t.Fatalf("%d backups, want %d: %s", len(got.Backups), len(backupFiles), rec.Body.String())
	}
	for i, f := range backupFiles {
		b := got.Backups[i]
		if len(b) != 3 {
			t.Errorf("entry %d has keys %v, want name, size, modified", i, b)
		}
		want := map[string]any{
			"name":     f.name,
			"size":     float64(len(f.content)),
			"modified": f.mod.UTC().Format("2006-01-02T15:04:05Z07:00"),
		}
		for k, v := range want {
			if b[k] != v {
				t.Errorf("entry %d: %s = %v, want %v (newest first)", i, k, b[k], v)
			}
		}
	}
}

func TestAPIBackupsEmpty(t *testing.T) {
	log, _ := quietLogger()
	h := NewHandler(Options{Provider: none.Provider{}, Catalog: catalog.New(t.TempDir() + "/absent"), Logger: log})
	rec := do(h, "GET", "/api/backups", nil)
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"backups":[]}` {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	rec = do(h, "GET", "/", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "No backups yet") {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
}

func TestAPIMe(t *testing.T) {
	h, _ := noneHandler(t)
	rec := do(h, "GET", "/api/me", nil)
	var got map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["username"] != "anonymous" || got["auth_type"] != "none" {
		t.Fatalf("/api/me = %v", got)
	}

	p := &fakeProvider{admit: true, user: auth.User{Name: "a@example.com", Type: "oauth",
		Attrs: attrs.Of(map[string]string{"email": "a@example.com"})}.WithCSRF(func() string { return "secret-token" })}
	h = NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir())})
	rec = do(h, "GET", "/api/me", nil)
	if strings.Contains(rec.Body.String(), "secret-token") {
		t.Fatal("/api/me leaks the CSRF token")
	}
	got = nil
	json.Unmarshal(rec.Body.Bytes(), &got)
	if got["username"] != "a@example.com" || got["auth_type"] != "oauth" || got["email"] != "a@example.com" {
		t.Fatalf("/api/me = %v", got)
	}
}

func TestRefusingProvider(t *testing.T) {
	p := &fakeProvider{admit: false}
	log, _ := quietLogger()
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(fixture(t)), Logger: log})
	tests := []struct {
		target string
		status int
		json   bool
	}{
		{"/api/backups", 401, true},
		{"/api/me", 401, true},
		{"/", 401, false},
		{"/backups/nightly-2024-05-01.tar.gz", 401, false},
		{"/backups/..", 401, false},
		{"/backups/%2e%2e", 401, false},
		{"/healthz", 200, false},
		{"/_backupweb/style.css", 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			rec := do(h, "GET", tt.target, nil)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			checkSecurityHeaders(t, rec.Header())
			if tt.status != 401 {
				return
			}
			if rec.Header().Get("WWW-Authenticate") == "" || rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("headers = %v", rec.Header())
			}
			if strings.Contains(rec.Body.String(), "first") {
				t.Error("refused response holds backup data")
			}
			if tt.json {
				var body map[string]string
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body["error"] == "" {
					t.Errorf("body %q is not {\"error\": ...}", rec.Body.String())
				}
			}
		})
	}
}

func TestProviderErrors(t *testing.T) {
	tests := []struct {
		name   string
		p      auth.Provider
		status int
	}{
		{"throttled", &fakeProvider{err: &refusal.RetryError{After: 3e9}}, 429},
		{"busy", &fakeProvider{err: password.ErrBusy}, 503},
		{"missing provider", nil, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, _ := quietLogger()
			h := NewHandler(Options{Provider: tt.p, Catalog: catalog.New(t.TempDir()), Logger: log})
			rec := do(h, "GET", "/api/backups", nil)
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type = %q", rec.Header().Get("Content-Type"))
			}
		})
	}
}

func TestMissingCatalog(t *testing.T) {
	log, logs := quietLogger()
	h := NewHandler(Options{Provider: none.Provider{}, Logger: log})
	for _, target := range []string{"/", "/api/backups", "/backups/x.tar"} {
		if rec := do(h, "GET", target, nil); rec.Code != 500 {
			t.Errorf("%s: status %d, want 500", target, rec.Code)
		}
	}
	if !strings.Contains(logs.String(), "no catalog") {
		t.Errorf("log lacks the mistake: %s", logs.String())
	}
}

// TestAuthOffNotice: type none's catalog says authentication is off and
// names the configuration file to edit, or, when there is none, where it
// goes and how to make one.
func TestAuthOffNotice(t *testing.T) {
	h, dir := noneHandler(t)
	if rec := do(h, "GET", "/", nil); !strings.Contains(rec.Body.String(), `id="auth-off"`) || !strings.Contains(rec.Body.String(), "Authentication is off") {
		t.Fatalf("type none: the catalog page has no notice that authentication is off:\n%s", rec.Body.String())
	}
	for _, tt := range []struct {
		name    string
		missing bool
		says    []string
	}{
		{"file read", false, []string{"<code>[authentication]</code> section of <code>/srv/bw/backupweb.ini</code>."}},
		{"no file", true, []string{"There is no configuration file at <code>/srv/bw/backupweb.ini</code>", "<code>examples/flask-login.ini</code>",
			"<code>backupweb user add -file USERS NAME</code>", "<code>backupweb gen-secret</code>"}},
	} {
		h := NewHandler(Options{Provider: none.Provider{}, Catalog: catalog.New(dir), ConfigFile: "/srv/bw/backupweb.ini", ConfigMissing: tt.missing})
		body := do(h, "GET", "/", nil).Body.String()
		for _, want := range tt.says {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the notice lacks %q:\n%s", tt.name, want, body)
			}
		}
		if !tt.missing && strings.Contains(body, "gen-secret") {
			t.Errorf("%s: the notice says how to create a file that is there", tt.name)
		}
	}
	p := &fakeProvider{admit: true, user: auth.User{Name: "u", Type: "basic"}}
	h = NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir())})
	if rec := do(h, "GET", "/", nil); strings.Contains(rec.Body.String(), "auth-off") {
		t.Fatal("type basic: the page says authentication is off")
	}
}

// TestBrandIconRoute: /_backupweb/brand-icon serves [ui] icon, unprotected,
// and is the styled 404 (JSON for API clients) when none is given.
func TestBrandIconRoute(t *testing.T) {
	p := &fakeProvider{admit: false}
	icon := ui.NewIcon([]byte("\x89PNG not really"), "image/png")
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Brand: ui.Brand{Title: "NAS", Icon: icon}})
	if rec := do(h, "GET", ui.BrandIconPath+"?v=x", nil); rec.Code != 200 || rec.Body.String() != "\x89PNG not really" || rec.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("icon: %d %q %q", rec.Code, rec.Body.String(), rec.Header().Get("Content-Type"))
	}
	h = NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir())})
	if rec := do(h, "GET", ui.BrandIconPath, map[string]string{"Accept": "text/html"}); rec.Code != 404 || !strings.Contains(rec.Body.String(), "<!doctype html>") {
		t.Fatalf("no icon, a browser: %d %q", rec.Code, rec.Body.String())
	}
	if rec := do(h, "GET", ui.BrandIconPath, map[string]string{"Accept": "application/json"}); rec.Code != 404 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("no icon, an API client: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
