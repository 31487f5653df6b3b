package login

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/refusal"
)

// reauthToken fetches the password page and returns its CSRF token (the
// session's).
func (b *browser) reauthToken() string {
	b.t.Helper()
	r := b.get(secondfactor.ReauthPath, true)
	tok, ok := field(r.body, "csrf_token")
	if r.status != http.StatusOK || !ok || tok == "" {
		b.t.Fatalf("GET %s: %d, no csrf_token", secondfactor.ReauthPath, r.status)
	}
	return tok
}

// reauth gives user's password again and fails the test unless it is
// accepted.
func (b *browser) reauth(user string) {
	b.t.Helper()
	r := b.post(secondfactor.ReauthPath, url.Values{"password": {testPasswords[user]}, "csrf_token": {b.reauthToken()}, "next": {"/"}})
	if r.status != http.StatusSeeOther {
		b.t.Fatalf("password again: %d %s", r.status, r.body)
	}
}

// postPage posts a form as a browser does, asking for a page in answer.
func (b *browser) postPage(path string, form url.Values) reply {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	req.Header.Set("Origin", b.h.srv.URL)
	return b.do(req)
}

// beginPasskey begins a registration on the passkeys page's route and
// returns the answer and its ceremony.
func (b *browser) beginPasskey(path, token string) (reply, begunAnswer) {
	b.t.Helper()
	r := b.postJSON(path, token, []byte(`{}`))
	var ans begunAnswer
	if r.status == http.StatusOK {
		if err := json.Unmarshal([]byte(r.body), &ans); err != nil {
			b.t.Fatalf("begin: %v in %s", err, r.body)
		}
	}
	return r, ans
}

// finishBody is what the page's script posts to finish a registration of
// key, named name, for the ceremony ans.
func finishBody(t testing.TB, key *softKey, ans begunAnswer, name string) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"ceremony": ans.Ceremony, "name": name, "credential": key.create(t, ans.Options, "http://localhost")})
	return body
}

// TestReauthGatesFactorChanges: adding or removing a passkey needs the
// password given within secondfactor.ReauthWindow. Once the sign-in's password is
// older than that, the page and the
// remove form send the browser to the password page, the script's routes
// answer 403 in JSON; a wrong password is 401 and logged; a right one
// moves the session to a new id (the old cookie loads nothing) and lets
// the changes through, until the window has passed.
func TestReauthGatesFactorChanges(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, nil)
	b := h.browser()
	b.mustLogin("alice")
	h.clock.Advance(secondfactor.ReauthWindow) // the sign-in's password is too old now
	tok := b.csrf()
	toReauth := secondfactor.ReauthURL(secondfactor.PasskeysPath)

	if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusSeeOther || r.header.Get("Location") != toReauth {
		t.Errorf("the passkeys page: %d %q, want 303 to %s", r.status, r.header.Get("Location"), toReauth)
	}
	for _, path := range []string{secondfactor.PasskeysBeginPath, secondfactor.PasskeysFinishPath} {
		r := b.postJSON(path, tok, []byte(`{"ceremony":"x","name":"Key","credential":{}}`))
		var body struct{ Error string }
		if r.status != http.StatusForbidden || json.Unmarshal([]byte(r.body), &body) != nil || body.Error != refusal.PasswordAgain.Message() {
			t.Errorf("%s: %d %s, want 403 %q", path, r.status, r.body, refusal.PasswordAgain.Message())
		}
	}
	if r := b.postPage(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {tok}}); r.status != http.StatusSeeOther || r.header.Get("Location") != toReauth {
		t.Errorf("remove: %d %q, want 303 to %s", r.status, r.header.Get("Location"), toReauth)
	}
	if r := b.post(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {tok}}); r.status != http.StatusForbidden || !strings.Contains(r.body, refusal.PasswordAgain.Message()) {
		t.Errorf("remove by a client that is no browser: %d, want 403", r.status)
	}

	page := b.get(toReauth, true)
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="reauth-user">alice<`) || !strings.Contains(page.body, `name="password"`) {
		t.Fatalf("the password page: %d\n%s", page.status, page.body)
	}
	if next, _ := field(page.body, "next"); next != secondfactor.PasskeysPath {
		t.Errorf("the page's next: %q", next)
	}
	if !strings.Contains(page.body, `<a href="/">Cancel</a>`) {
		t.Error("the page's Cancel link does not lead to the catalog")
	}
	form := func(pw, token string) url.Values {
		return url.Values{"password": {pw}, "csrf_token": {token}, "next": {secondfactor.PasskeysPath}}
	}
	if r := b.post(secondfactor.ReauthPath, form("wrong", tok)); r.status != http.StatusUnauthorized || !strings.Contains(r.body, refusal.WrongPassword.Message()) {
		t.Errorf("a wrong password: %d", r.status)
	}
	if logs := h.logs.String(); !strings.Contains(logs, `reason="bad credentials"`) || !strings.Contains(logs, "user=alice") {
		t.Errorf("the wrong password is not logged as a refusal:\n%s", logs)
	}
	if r := b.post(secondfactor.ReauthPath, form(testPasswords["alice"], "forged")); r.status != http.StatusForbidden {
		t.Errorf("a forged token: %d", r.status)
	}
	if b.get(secondfactor.PasskeysPath, true).status != http.StatusSeeOther {
		t.Fatal("the passkeys page opened after refused attempts")
	}

	old := b.sessionCookie()
	if r := b.post(secondfactor.ReauthPath, form(testPasswords["alice"], tok)); r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.PasskeysPath {
		t.Fatalf("the right password: %d %q", r.status, r.header.Get("Location"))
	}
	if b.sessionCookie() == old || b.sessionCookie() == "" {
		t.Error("the session kept its id")
	}
	replay := h.browser()
	replay.setCookie(h.p.Manager().CookieName(), old)
	if s := replay.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("the old session cookie: %d, want 401", s)
	}
	if !strings.Contains(h.logs.String(), "auth: password given again") {
		t.Error("no log line for the password given again")
	}

	if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusOK {
		t.Fatalf("the passkeys page after the password: %d", r.status)
	}
	tok = b.csrf()
	r, ans := b.beginPasskey(secondfactor.PasskeysBeginPath, tok)
	if r.status != http.StatusOK {
		t.Fatalf("begin: %d %s", r.status, r.body)
	}
	if r := b.postJSON(secondfactor.PasskeysFinishPath, tok, finishBody(t, newSoftKey(t), ans, "Key")); r.status != http.StatusOK {
		t.Fatalf("finish: %d %s", r.status, r.body)
	}
	if rec, _ := h.p.Factors().Lookup("alice"); rec == nil || len(rec.Passkeys) != 1 {
		t.Fatalf("stored: %+v", rec)
	}

	h.clock.Advance(secondfactor.ReauthWindow)
	if r := b.postJSON(secondfactor.PasskeysBeginPath, tok, []byte(`{}`)); r.status != http.StatusForbidden {
		t.Errorf("begin %v after the password: %d", secondfactor.ReauthWindow, r.status)
	}
	if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusSeeOther {
		t.Errorf("the page %v after the password: %d", secondfactor.ReauthWindow, r.status)
	}
}

// TestReauthRefusals: the password page is for signed-in users only, and
// wrong passwords count against the sign-in's limits: past them, 429 with
// Retry-After, the right password too.
func TestReauthRefusals(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, func(c *Config) { c.MaxUserFailures = 3 })
	anon := h.browser()
	if r := anon.get(secondfactor.ReauthPath, true); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), h.p.LoginPath()) {
		t.Errorf("GET not signed in: %d %q", r.status, r.header.Get("Location"))
	}
	if r := anon.post(secondfactor.ReauthPath, url.Values{"password": {"x"}, "csrf_token": {anon.formToken()}}); r.status != http.StatusUnauthorized {
		t.Errorf("POST not signed in: %d", r.status)
	}

	b := h.browser()
	b.mustLogin("alice")
	tok := b.reauthToken()
	post := func(pw string) reply {
		return b.post(secondfactor.ReauthPath, url.Values{"password": {pw}, "csrf_token": {tok}})
	}
	if r := post(""); r.status != http.StatusUnauthorized {
		t.Errorf("an empty password: %d", r.status)
	}
	for i := range 3 {
		if r := post("wrong"); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, r.status)
		}
	}
	r := post(testPasswords["alice"])
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("past the limit: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	h.clock.Advance(2 * time.Hour)
	b.mustLogin("alice")
	if r := b.post(secondfactor.ReauthPath, url.Values{"password": {testPasswords["alice"]}, "csrf_token": {b.reauthToken()}}); r.status != http.StatusSeeOther {
		t.Errorf("once the block ended: %d", r.status)
	}
}

// TestSignInCountsAsPasswordGiven: a sign-in with the password is itself
// the password given, for secondfactor.ReauthWindow from the moment the password was
// checked: with the password alone, and with a second factor (counted
// from the password step, not from the code). A passkey-only sign-in
// gives no password, and its user is asked for it.
func TestSignInCountsAsPasswordGiven(t *testing.T) {
	t.Run("password", func(t *testing.T) {
		h := newFactorHarness(t, SecondFactorOptional, nil)
		b := h.browser()
		b.mustLogin("alice")
		if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusOK {
			t.Fatalf("the passkeys page right after the sign-in: %d %q, want 200", r.status, r.header.Get("Location"))
		}
		tok := b.csrf()
		h.clock.Advance(secondfactor.ReauthWindow - time.Second)
		if r, _ := b.beginPasskey(secondfactor.PasskeysBeginPath, tok); r.status != http.StatusOK {
			t.Fatalf("begin within the window: %d %s", r.status, r.body)
		}
		h.clock.Advance(time.Second)
		if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.ReauthURL(secondfactor.PasskeysPath) {
			t.Fatalf("the passkeys page %v after the sign-in: %d %q, want 303 to the password page", secondfactor.ReauthWindow, r.status, r.header.Get("Location"))
		}
	})
	t.Run("password and code", func(t *testing.T) {
		h := newFactorHarness(t, SecondFactorOptional, nil)
		h.enrol("alice")
		b := h.browser()
		if r := b.login("alice", testPasswords["alice"], "/"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), secondfactor.SecondFactorPath) {
			t.Fatalf("password step: %d %q", r.status, r.header.Get("Location"))
		}
		h.clock.Advance(2 * time.Minute) // the code comes later than the password
		if r := b.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther {
			t.Fatalf("code: %d %s", r.status, r.body)
		}
		if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusOK {
			t.Fatalf("the passkeys page after password and code: %d %q, want 200", r.status, r.header.Get("Location"))
		}
		h.clock.Advance(secondfactor.ReauthWindow - 2*time.Minute) // 5 minutes after the password, 3 after the code
		if r := b.get(secondfactor.PasskeysPath, true); r.status != http.StatusSeeOther {
			t.Fatalf("the passkeys page %v after the password: %d, want 303", secondfactor.ReauthWindow, r.status)
		}
	})
}
