package sessionauth

import (
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
)

func TestSafeNext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"/api/backups?x=1", "/api/backups?x=1"},
		{"/backups/a%20b.tar", "/backups/a%20b.tar"},
		{"", "/"},
		{"//evil.example", "/"},
		{"/\\evil.example", "/"},
		{"https://evil.example/", "/"},
		{"http:/evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"evil.example", "/"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"}, // stays a local path once decoded by the browser
		{"/%5Cevil.example", "/%5Cevil.example"},
		{"\\\\evil.example", "/"},
		{"/./\\evil.example", "/"},
		{"/a/../\\evil.example", "/"},
		{"/../evil", "/"},
		{"/a\\b", "/"},
		{"/.well-known/x", "/.well-known/x"},
	}
	g := New(Options{Type: "t", LoginPath: "/login"})
	for _, tt := range tests {
		if got := g.SafeNext(tt.in); got != tt.want {
			t.Errorf("SafeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoginURL(t *testing.T) {
	tests := []struct{ login, next, want string }{
		{"/login", "/", "/login?next=%2F"},
		{"/login", "/api/backups?x=1&y=2", "/login?next=%2Fapi%2Fbackups%3Fx%3D1%26y%3D2"},
		{"/oauth/login", "//evil", "/oauth/login?next=%2F"},
	}
	for _, tt := range tests {
		if got := New(Options{Type: "t", LoginPath: tt.login}).LoginURLFor(tt.next); got != tt.want {
			t.Errorf("LoginURLFor(%q, %q) = %q, want %q", tt.login, tt.next, got, tt.want)
		}
	}
}

func TestChallenge(t *testing.T) {
	g := New(Options{Type: "flask-login", LoginPath: "/login"})
	tests := []struct {
		method, path, accept string
		want                 int
		location             string
	}{
		{"GET", "/backups/x?y=1", "text/html", 303, "/login?next=%2Fbackups%2Fx%3Fy%3D1"},
		{"GET", "/api/backups", "application/json", 401, ""},
		{"GET", "/", "", 401, ""},
		{"POST", "/", "text/html", 401, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.accept != "" {
			r.Header.Set("Accept", tt.accept)
		}
		rec := httptest.NewRecorder()
		g.Challenge(rec, r)
		if rec.Code != tt.want || rec.Header().Get("Location") != tt.location {
			t.Errorf("%s %s (%s): %d %q, want %d %q", tt.method, tt.path, tt.accept, rec.Code, rec.Header().Get("Location"), tt.want, tt.location)
		}
	}
}

func TestGuardSafeNextRedirectHosts(t *testing.T) {
	g := New(Options{Type: "t", LoginPath: "/login", RedirectHosts: []string{"backups.example.com", ".kopia.example.com"}})
	for next, want := range map[string]string{
		"/local?x=1":                            "/local?x=1",
		"https://backups.example.com/a?b=c":     "https://backups.example.com/a?b=c",
		"https://one.kopia.example.com/":        "https://one.kopia.example.com/",
		"https://BACKUPS.example.com/":          "https://BACKUPS.example.com/",
		"http://backups.example.com/":           "/",
		"https://evil.example.com/":             "/",
		"https://backups.example.com.evil.org/": "/",
		"https://evilkopia.example.com/":        "/",
		"https://user@backups.example.com/":     "/",
		"https://backups.example.com\\@evil/":   "/",
		"//backups.example.com/":                "/",
		"javascript:alert(1)":                   "/",
	} {
		if got := g.SafeNext(next); got != want {
			t.Errorf("SafeNext(%q) = %q, want %q", next, got, want)
		}
	}
	// Without redirect hosts (no cookie domain), nothing absolute passes.
	if got := New(Options{Type: "t", LoginPath: "/login"}).SafeNext("https://backups.example.com/"); got != "/" {
		t.Errorf("without redirect hosts: %q", got)
	}
	if RedirectHosts(auth.Deps{RedirectHosts: []string{"a.example.com"}}) != nil {
		t.Error("redirect hosts without a cookie domain must be ignored")
	}
}
