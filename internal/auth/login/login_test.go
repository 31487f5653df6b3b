package login_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

func TestUnauthenticated(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	tests := []struct {
		name     string
		path     string
		html     bool
		status   int
		location string
	}{
		{"browser to catalog", "/", true, http.StatusSeeOther, "/login?next=%2F"},
		{"browser with query", "/api/backups?x=1&y=2", true, http.StatusSeeOther, "/login?next=" + url.QueryEscape("/api/backups?x=1&y=2")},
		{"browser to a backup", "/backups/nightly.tar.gz", true, http.StatusSeeOther, "/login?next=" + url.QueryEscape("/backups/nightly.tar.gz")},
		{"api client", "/api/backups", false, http.StatusUnauthorized, ""},
		{"api me", "/api/me", false, http.StatusUnauthorized, ""},
		{"download without html", "/backups/nightly.tar.gz", false, http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.Get(tt.path, tt.html)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d", r.Status, tt.status)
			}
			if got := r.Header.Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			if strings.HasPrefix(tt.path, "/api/") && !tt.html {
				var body struct{ Error string }
				if err := json.Unmarshal([]byte(r.Body), &body); err != nil || body.Error == "" {
					t.Errorf("body %q is not {\"error\": ...}", r.Body)
				}
			}
		})
	}
}

func TestLoginPage(t *testing.T) {
	h := logintest.New(t, func(c *login.Config) { c.LoginPath = "/signin" })
	b := h.Browser()
	r := b.Get("/signin?next=%2Fapi%2Fbackups", true)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d", r.Status)
	}
	for _, name := range []string{"username", "password", "csrf_token", "next"} {
		if _, ok := logintest.Field(r.Body, name); !ok {
			t.Errorf("form has no field %q", name)
		}
	}
	if next, _ := logintest.Field(r.Body, "next"); next != "/api/backups" {
		t.Errorf("next field %q, want /api/backups", next)
	}
	if !strings.Contains(r.Body, `action="/signin"`) || !strings.Contains(strings.ToLower(r.Body), `method="post"`) {
		t.Errorf("form does not post back to /signin")
	}
	if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control %q", cc)
	}
	if got := b.Get("/", true).Header.Get("Location"); got != "/signin?next=%2F" {
		t.Errorf("challenge goes to %q, want /signin?next=%%2F", got)
	}
}

func TestLoginAndUse(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	r := b.Login("alice", "alice-pw", "/api/backups?sort=new")
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/api/backups?sort=new" {
		t.Fatalf("login: status %d Location %q", r.Status, r.Header.Get("Location"))
	}
	api := b.Get("/api/backups", false)
	if api.Status != http.StatusOK || !strings.Contains(api.Body, "nightly.tar.gz") {
		t.Fatalf("GET /api/backups: %d %s", api.Status, api.Body)
	}
	var me map[string]any
	if err := json.Unmarshal([]byte(b.Get("/api/me", false).Body), &me); err != nil {
		t.Fatal(err)
	}
	if me["username"] != "alice" || me["auth_type"] != login.Name {
		t.Errorf("/api/me = %v", me)
	}
	if r := b.Get("/login?next=/api/me", true); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/api/me" {
		t.Errorf("login page while signed in: %d %q, want 303 to /api/me", r.Status, r.Header.Get("Location"))
	}
}

func TestBadCredentialsLookAlike(t *testing.T) {
	h := logintest.New(t, nil)
	tests := []struct{ name, user, pw string }{
		{"wrong password", "alice", "not-alice-pw"},
		{"unknown user", "mallory", "alice-pw"},
		{"unknown user, empty-ish", "x", "y"},
		{"password too long", "alice", strings.Repeat("p", 100)},
	}
	var messages []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.Browser().Login(tt.user, tt.pw, "/")
			if r.Status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", r.Status)
			}
			if !strings.Contains(r.Body, refusal.BadCredentials.Message()) {
				t.Fatalf("page lacks %q", refusal.BadCredentials.Message())
			}
			if tok, _ := logintest.Field(r.Body, "csrf_token"); tok == "" {
				t.Error("the form shown again has no csrf token")
			}
			messages = append(messages, errorText(r.Body))
		})
	}
	for _, m := range messages[1:] {
		if m != messages[0] {
			t.Errorf("messages differ: %q and %q", messages[0], m)
		}
	}
	if r := h.Browser().Login("", "", "/"); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, refusal.EmptyCredentials.Message()) {
		t.Errorf("empty form: %d", r.Status)
	}
}

// inputTag is an HTML input element.
var inputTag = regexp.MustCompile(`<input[^>]*>`)

// errorText returns the page with its per-render parts (tokens, the typed
// user name) removed, so two answers can be compared.
func errorText(page string) string {
	page = inputTag.ReplaceAllString(page, "")
	return page
}

func TestCSRF(t *testing.T) {
	h := logintest.New(t, nil)
	t.Run("login without token", func(t *testing.T) {
		b := h.Browser()
		b.FormToken() // the form cookie is set
		r := b.Post("/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}})
		if r.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.Status)
		}
	})
	t.Run("login with a forged token", func(t *testing.T) {
		b := h.Browser()
		b.FormToken()
		other := h.Browser().FormToken() // valid for another browser only
		r := b.Post("/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "csrf_token": {other}})
		if r.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.Status)
		}
	})
	t.Run("login without form cookie", func(t *testing.T) {
		tok := h.Browser().FormToken()
		r := h.Browser().Post("/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "csrf_token": {tok}})
		if r.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.Status)
		}
	})
	t.Run("logout without token", func(t *testing.T) {
		b := h.Browser()
		b.MustLogin("alice")
		if r := b.Post("/logout", url.Values{}); r.Status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.Status)
		}
		if r := b.Post("/logout", url.Values{"csrf_token": {"AAAA"}}); r.Status != http.StatusForbidden {
			t.Errorf("wrong token: status %d, want 403", r.Status)
		}
		if b.APIStatus() != http.StatusOK {
			t.Error("a refused logout ended the session")
		}
	})
}

func TestOpenRedirect(t *testing.T) {
	h := logintest.New(t, nil)
	tests := []struct{ next, want string }{
		{"/api/backups", "/api/backups"},
		{"/backups/nightly.tar.gz?x=1", "/backups/nightly.tar.gz?x=1"},
		{"//evil.example", "/"},
		{"/\\evil.example", "/"},
		{"\\\\evil.example", "/"},
		{"https://evil.example/", "/"},
		{"http:evil.example", "/"},
		{"%2F%2Fevil.example", "/"},
		{"/%5Cevil.example", "/%5Cevil.example"},
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"},
		{"javascript:alert(1)", "/"},
		{"JaVaScRiPt:alert(1)", "/"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{" //evil.example", "/"},
		{"/./\\evil.example", "/"},
		{"", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.next, func(t *testing.T) {
			r := h.Browser().Login("alice", "alice-pw", tt.next)
			if r.Status != http.StatusSeeOther {
				t.Fatalf("status %d", r.Status)
			}
			loc := r.Header.Get("Location")
			if loc != tt.want && loc != strings.ReplaceAll(tt.want, "%5C", "\\") {
				t.Errorf("Location %q, want %q", loc, tt.want)
			}
			assertLocal(t, h.Srv.URL, loc)
		})
	}
}

// assertLocal checks that a browser following loc stays on base: the
// reference resolves to the same host, and it does not start with two
// slashes in any spelling browsers accept.
func assertLocal(t *testing.T, base, loc string) {
	t.Helper()
	if len(loc) > 1 && (loc[1] == '/' || loc[1] == '\\') || !strings.HasPrefix(loc, "/") {
		t.Fatalf("Location %q is not a local path", loc)
	}
	b, _ := url.Parse(base)
	u, err := b.Parse(strings.ReplaceAll(loc, "\\", "/"))
	if err != nil || u.Host != b.Host {
		t.Fatalf("Location %q resolves to host %q", loc, u.Host)
	}
}

func TestSessionIDChangesAtLogin(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	u, _ := url.Parse(h.Srv.URL)
	planted := "planted-by-an-attacker-0123456789abcdefghijklmn"
	b.Jar.SetCookies(u, []*http.Cookie{{Name: h.P.Manager().CookieName(), Value: planted, Path: "/"}})
	b.MustLogin("alice")
	first := b.SessionCookie()
	if first == "" || first == planted {
		t.Fatalf("session cookie after login %q: not a fresh one", first)
	}
	b.MustLogin("alice")
	if second := b.SessionCookie(); second == first {
		t.Error("a second login kept the session id")
	}
	// The first session was revoked by the second login.
	replay := h.Browser()
	replay.Jar.SetCookies(u, []*http.Cookie{{Name: h.P.Manager().CookieName(), Value: first, Path: "/"}})
	if s := replay.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("old session after a new login: %d, want 401", s)
	}
}

func TestLogout(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	b.MustLogin("alice")
	old := b.SessionCookie()
	r := b.Post("/logout", url.Values{"csrf_token": {b.CSRF()}})
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/login?signed_out=1" {
		t.Fatalf("logout: %d %q", r.Status, r.Header.Get("Location"))
	}
	if page := b.Get("/login?signed_out=1", true); !strings.Contains(page.Body, "You have been signed out.") {
		t.Errorf("the login page after logout does not say so:\n%s", page.Body)
	}
	if page := b.Get("/login", true); strings.Contains(page.Body, "signed out") {
		t.Error("the plain login page says signed out")
	}
	if b.SessionCookie() != "" {
		t.Error("the cookie was not cleared")
	}
	if s := b.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("after logout: %d", s)
	}
	replay := h.Browser()
	u, _ := url.Parse(h.Srv.URL)
	replay.Jar.SetCookies(u, []*http.Cookie{{Name: h.P.Manager().CookieName(), Value: old, Path: "/"}})
	if s := replay.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("replayed cookie after logout: %d, want 401", s)
	}
}

func TestCookieAttributes(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	r := b.Login("alice", "alice-pw", "/")
	var found bool
	for _, raw := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(raw)
		if err != nil || c.Name != h.P.Manager().CookieName() {
			continue
		}
		found = true
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
			t.Errorf("session cookie %q lacks HttpOnly, SameSite=Lax or Path=/", raw)
		}
		if c.Secure {
			t.Errorf("session cookie over plain http is Secure: %q", raw)
		}
	}
	if !found {
		t.Fatal("no session cookie set at login")
	}
}
