package login

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/refusal"
)

func TestUnauthenticated(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
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
			r := b.get(tt.path, tt.html)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d", r.status, tt.status)
			}
			if got := r.header.Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			if strings.HasPrefix(tt.path, "/api/") && !tt.html {
				var body struct{ Error string }
				if err := json.Unmarshal([]byte(r.body), &body); err != nil || body.Error == "" {
					t.Errorf("body %q is not {\"error\": ...}", r.body)
				}
			}
		})
	}
}

func TestLoginPage(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.LoginPath = "/signin" })
	b := h.browser()
	r := b.get("/signin?next=%2Fapi%2Fbackups", true)
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	for _, name := range []string{"username", "password", "csrf_token", "next"} {
		if _, ok := field(r.body, name); !ok {
			t.Errorf("form has no field %q", name)
		}
	}
	if next, _ := field(r.body, "next"); next != "/api/backups" {
		t.Errorf("next field %q, want /api/backups", next)
	}
	if !strings.Contains(r.body, `action="/signin"`) || !strings.Contains(strings.ToLower(r.body), `method="post"`) {
		t.Errorf("form does not post back to /signin")
	}
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control %q", cc)
	}
	if got := b.get("/", true).header.Get("Location"); got != "/signin?next=%2F" {
		t.Errorf("challenge goes to %q, want /signin?next=%%2F", got)
	}
}

func TestLoginAndUse(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	r := b.login("alice", "alice-pw", "/api/backups?sort=new")
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/api/backups?sort=new" {
		t.Fatalf("login: status %d Location %q", r.status, r.header.Get("Location"))
	}
	api := b.get("/api/backups", false)
	if api.status != http.StatusOK || !strings.Contains(api.body, "nightly.tar.gz") {
		t.Fatalf("GET /api/backups: %d %s", api.status, api.body)
	}
	var me map[string]any
	if err := json.Unmarshal([]byte(b.get("/api/me", false).body), &me); err != nil {
		t.Fatal(err)
	}
	if me["username"] != "alice" || me["auth_type"] != Name {
		t.Errorf("/api/me = %v", me)
	}
	if r := b.get("/login?next=/api/me", true); r.status != http.StatusSeeOther || r.header.Get("Location") != "/api/me" {
		t.Errorf("login page while signed in: %d %q, want 303 to /api/me", r.status, r.header.Get("Location"))
	}
}

func TestBadCredentialsLookAlike(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct{ name, user, pw string }{
		{"wrong password", "alice", "not-alice-pw"},
		{"unknown user", "mallory", "alice-pw"},
		{"unknown user, empty-ish", "x", "y"},
		{"password too long", "alice", strings.Repeat("p", 100)},
	}
	var messages []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.browser().login(tt.user, tt.pw, "/")
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", r.status)
			}
			if !strings.Contains(r.body, refusal.BadCredentials.Message()) {
				t.Fatalf("page lacks %q", refusal.BadCredentials.Message())
			}
			if tok, _ := field(r.body, "csrf_token"); tok == "" {
				t.Error("the form shown again has no csrf token")
			}
			messages = append(messages, errorText(r.body))
		})
	}
	for _, m := range messages[1:] {
		if m != messages[0] {
			t.Errorf("messages differ: %q and %q", messages[0], m)
		}
	}
	if r := h.browser().login("", "", "/"); r.status != http.StatusUnauthorized || !strings.Contains(r.body, refusal.EmptyCredentials.Message()) {
		t.Errorf("empty form: %d", r.status)
	}
}

// errorText returns the page with its per-render parts (tokens, the typed
// user name) removed, so two answers can be compared.
func errorText(page string) string {
	page = inputRE.ReplaceAllString(page, "")
	return page
}

func TestCSRF(t *testing.T) {
	h := newHarness(t, nil)
	t.Run("login without token", func(t *testing.T) {
		b := h.browser()
		b.formToken() // the form cookie is set
		r := b.post("/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}})
		if r.status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.status)
		}
	})
	t.Run("login with a forged token", func(t *testing.T) {
		b := h.browser()
		b.formToken()
		other := h.browser().formToken() // valid for another browser only
		r := b.post("/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "csrf_token": {other}})
		if r.status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.status)
		}
	})
	t.Run("login without form cookie", func(t *testing.T) {
		tok := h.browser().formToken()
		r := h.browser().post("/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "csrf_token": {tok}})
		if r.status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.status)
		}
	})
	t.Run("logout without token", func(t *testing.T) {
		b := h.browser()
		b.mustLogin("alice")
		if r := b.post("/logout", url.Values{}); r.status != http.StatusForbidden {
			t.Errorf("status %d, want 403", r.status)
		}
		if r := b.post("/logout", url.Values{"csrf_token": {"AAAA"}}); r.status != http.StatusForbidden {
			t.Errorf("wrong token: status %d, want 403", r.status)
		}
		if b.apiStatus() != http.StatusOK {
			t.Error("a refused logout ended the session")
		}
	})
}

func TestOpenRedirect(t *testing.T) {
	h := newHarness(t, nil)
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
			r := h.browser().login("alice", "alice-pw", tt.next)
			if r.status != http.StatusSeeOther {
				t.Fatalf("status %d", r.status)
			}
			loc := r.header.Get("Location")
			if loc != tt.want && loc != strings.ReplaceAll(tt.want, "%5C", "\\") {
				t.Errorf("Location %q, want %q", loc, tt.want)
			}
			assertLocal(t, h.srv.URL, loc)
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
	h := newHarness(t, nil)
	b := h.browser()
	u, _ := url.Parse(h.srv.URL)
	planted := "planted-by-an-attacker-0123456789abcdefghijklmn"
	b.jar.SetCookies(u, []*http.Cookie{{Name: h.p.Manager().CookieName(), Value: planted, Path: "/"}})
	b.mustLogin("alice")
	first := b.sessionCookie()
	if first == "" || first == planted {
		t.Fatalf("session cookie after login %q: not a fresh one", first)
	}
	b.mustLogin("alice")
	if second := b.sessionCookie(); second == first {
		t.Error("a second login kept the session id")
	}
	// The first session was revoked by the second login.
	replay := h.browser()
	replay.jar.SetCookies(u, []*http.Cookie{{Name: h.p.Manager().CookieName(), Value: first, Path: "/"}})
	if s := replay.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("old session after a new login: %d, want 401", s)
	}
}

func TestLogout(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	old := b.sessionCookie()
	r := b.post("/logout", url.Values{"csrf_token": {b.csrf()}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/login?signed_out=1" {
		t.Fatalf("logout: %d %q", r.status, r.header.Get("Location"))
	}
	if page := b.get("/login?signed_out=1", true); !strings.Contains(page.body, "You have been signed out.") {
		t.Errorf("the login page after logout does not say so:\n%s", page.body)
	}
	if page := b.get("/login", true); strings.Contains(page.body, "signed out") {
		t.Error("the plain login page says signed out")
	}
	if b.sessionCookie() != "" {
		t.Error("the cookie was not cleared")
	}
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("after logout: %d", s)
	}
	replay := h.browser()
	u, _ := url.Parse(h.srv.URL)
	replay.jar.SetCookies(u, []*http.Cookie{{Name: h.p.Manager().CookieName(), Value: old, Path: "/"}})
	if s := replay.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("replayed cookie after logout: %d, want 401", s)
	}
}

func TestCookieAttributes(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	r := b.login("alice", "alice-pw", "/")
	var found bool
	for _, raw := range r.header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(raw)
		if err != nil || c.Name != h.p.Manager().CookieName() {
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
