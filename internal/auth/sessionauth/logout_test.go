package sessionauth

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/ui"
)

// logoutGuard returns a guard over a memory store, with redirect hosts,
// and the cookie of a session of alice's.
func logoutGuard(t *testing.T) (*Guard, *http.Cookie) {
	t.Helper()
	m, err := session.NewManager(session.Options{Store: session.NewMemoryStore(nil), Key: []byte(strings.Repeat("k", 32)), Type: "flask-login"})
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Type: "flask-login", Manager: m, LoginPath: "/login", RedirectHosts: []string{"app.example.com"}})
	w := httptest.NewRecorder()
	if _, err := m.Start(w, httptest.NewRequest("POST", "/login", nil), session.Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	return g, w.Result().Cookies()[0]
}

// TestLogoutPage: GET /logout shows the sign-out form with the session's
// token, carries a safe next (or rd) to it and drops an unsafe one; for a
// browser without a session it offers "Sign in again". It ends nothing.
func TestLogoutPage(t *testing.T) {
	g, cookie := logoutGuard(t)
	for _, tc := range []struct {
		name     string
		query    string
		signedIn bool
		want     []string
		dontWant []string
	}{
		{"signed in", "", true, []string{`Signed in as <strong>alice</strong>`, `action="/logout"`, `<button type="submit">Sign out</button>`}, []string{`name="next"`}},
		{"next", "?next=" + url.QueryEscape("/app/page?x=1"), true, []string{`name="next" value="/app/page?x=1"`}, nil},
		{"rd", "?rd=" + url.QueryEscape("https://app.example.com/a"), true, []string{`name="next" value="https://app.example.com/a"`}, nil},
		{"unsafe rd", "?rd=" + url.QueryEscape("https://evil.example/"), true, nil, []string{`evil`, `name="next"`}},
		{"protocol-relative next", "?next=" + url.QueryEscape("//evil.example/"), true, nil, []string{`evil`}},
		{"not signed in", "?next=%2Fapp", false, []string{`You are not signed in.`, `<a href="/login?next=%2Fapp" id="sign-in-again">Sign in again</a>`}, []string{`<form`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/logout"+tc.query, nil)
			if tc.signedIn {
				r.AddCookie(cookie)
			}
			rec := httptest.NewRecorder()
			g.LogoutPage(rec, r)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("GET /logout%s: %d, Cache-Control %q", tc.query, rec.Code, rec.Header().Get("Cache-Control"))
			}
			testkit.Holds(t, body, tc.want, tc.dontWant)
			if tok := testkit.FormToken([]byte(body)); tc.signedIn && tok == "" {
				t.Fatal("no token in the form")
			}
		})
	}
	// The page changed nothing: the session still loads.
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(cookie)
	if _, ok, _ := g.Manager().Load(r); !ok {
		t.Fatal("GET /logout ended the session")
	}
}

// TestLogoutNext: after the POST, the browser goes to the form's next (or
// the query's next or rd) when the safe-redirect rule accepts it, and to
// the signed-out page otherwise; the session is revoked either way.
func TestLogoutNext(t *testing.T) {
	for _, tc := range []struct {
		name, query, next, want string
	}{
		{"none", "", "", "/login?signed_out=1"},
		{"form next", "", "/app/page?x=1", "/app/page?x=1"},
		{"query rd", "?rd=%2Fapp", "", "/app"},
		{"redirect host", "", "https://app.example.com/after", "https://app.example.com/after"},
		{"other host", "", "https://evil.example/", "/login?signed_out=1"},
		{"protocol-relative", "?rd=%2F%2Fevil.example", "", "/login?signed_out=1"},
		{"backslash", "", "/\\evil.example", "/login?signed_out=1"},
		{"non-ASCII path", "", "/app/é?q=ü", "/app/%C3%A9?q=%C3%BC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, cookie := logoutGuard(t)
			get := httptest.NewRequest("GET", "/logout", nil)
			get.AddCookie(cookie)
			page := httptest.NewRecorder()
			g.LogoutPage(page, get)
			token := testkit.FormToken(page.Body.Bytes())
			form := url.Values{"csrf_token": {token}}
			if tc.next != "" {
				form.Set("next", tc.next)
			}
			r := httptest.NewRequest("POST", "/logout"+tc.query, strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.AddCookie(cookie)
			rec := httptest.NewRecorder()
			g.Logout(rec, r)
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.want {
				t.Fatalf("POST /logout: %d Location %q, want 303 %q", rec.Code, rec.Header().Get("Location"), tc.want)
			}
			again := httptest.NewRequest("GET", "/", nil)
			again.AddCookie(cookie)
			if _, ok, _ := g.Manager().Load(again); ok {
				t.Fatal("the old cookie still loads after the sign-out")
			}
		})
	}
}

// TestLogoutStaleFormNamesProduct: a sign-out without the token is refused
// (403) with a sentence that names what the service guards.
func TestLogoutStaleFormNamesProduct(t *testing.T) {
	g, cookie := logoutGuard(t)
	r := httptest.NewRequest("POST", "/logout", strings.NewReader("csrf_token=wrong"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(cookie)
	r = r.WithContext(ui.WithBrand(r.Context(), ui.Brand{Product: "Syncthing"}))
	rec := httptest.NewRecorder()
	g.Logout(rec, r)
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "Go back to Syncthing, reload the page") {
		t.Fatalf("POST /logout with a wrong token: %d %s", rec.Code, rec.Body.String())
	}
}
