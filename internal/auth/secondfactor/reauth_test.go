package secondfactor_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// reauthToken fetches the password page and returns its CSRF token (the
// session's).
func (b *browser) reauthToken() string {
	b.T.Helper()
	r := b.Get(secondfactor.ReauthPath, true)
	tok, ok := logintest.Field(r.Body, "csrf_token")
	if r.Status != http.StatusOK || !ok || tok == "" {
		b.T.Fatalf("GET %s: %d, no csrf_token", secondfactor.ReauthPath, r.Status)
	}
	return tok
}

// reauth gives user's password again and fails the test unless it is
// accepted.
func (b *browser) reauth(user string) {
	b.T.Helper()
	r := b.Post(secondfactor.ReauthPath, url.Values{"password": {logintest.Passwords[user]}, "csrf_token": {b.reauthToken()}, "next": {"/"}})
	if r.Status != http.StatusSeeOther {
		b.T.Fatalf("password again: %d %s", r.Status, r.Body)
	}
}

// postPage posts a form as a browser does, asking for a page in answer.
func (b *browser) postPage(path string, form url.Values) reply {
	b.T.Helper()
	req, err := http.NewRequest(http.MethodPost, b.H.Srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	req.Header.Set("Origin", b.H.Srv.URL)
	return b.Do(req)
}

// beginPasskey begins a registration on the passkeys page's route and
// returns the answer and its ceremony.
func (b *browser) beginPasskey(path, token string) (reply, begunAnswer) {
	b.T.Helper()
	r := b.PostJSON(path, token, []byte(`{}`))
	var ans begunAnswer
	if r.Status == http.StatusOK {
		if err := json.Unmarshal([]byte(r.Body), &ans); err != nil {
			b.T.Fatalf("begin: %v in %s", err, r.Body)
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
	h := newFactorHarness(t, login.SecondFactorOptional, nil)
	b := h.browser()
	b.MustLogin("alice")
	h.Clock.Advance(secondfactor.ReauthWindow) // the sign-in's password is too old now
	tok := b.CSRF()
	toReauth := secondfactor.ReauthURL(secondfactor.PasskeysPath)

	if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusSeeOther || r.Header.Get("Location") != toReauth {
		t.Errorf("the passkeys page: %d %q, want 303 to %s", r.Status, r.Header.Get("Location"), toReauth)
	}
	for _, path := range []string{secondfactor.PasskeysBeginPath, secondfactor.PasskeysFinishPath} {
		r := b.PostJSON(path, tok, []byte(`{"ceremony":"x","name":"Key","credential":{}}`))
		var body struct{ Error string }
		if r.Status != http.StatusForbidden || json.Unmarshal([]byte(r.Body), &body) != nil || body.Error != refusal.PasswordAgain.Message() {
			t.Errorf("%s: %d %s, want 403 %q", path, r.Status, r.Body, refusal.PasswordAgain.Message())
		}
	}
	if r := b.postPage(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {tok}}); r.Status != http.StatusSeeOther || r.Header.Get("Location") != toReauth {
		t.Errorf("remove: %d %q, want 303 to %s", r.Status, r.Header.Get("Location"), toReauth)
	}
	if r := b.Post(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {tok}}); r.Status != http.StatusForbidden || !strings.Contains(r.Body, refusal.PasswordAgain.Message()) {
		t.Errorf("remove by a client that is no browser: %d, want 403", r.Status)
	}

	page := b.Get(toReauth, true)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="reauth-user">alice<`) || !strings.Contains(page.Body, `name="password"`) {
		t.Fatalf("the password page: %d\n%s", page.Status, page.Body)
	}
	if next, _ := logintest.Field(page.Body, "next"); next != secondfactor.PasskeysPath {
		t.Errorf("the page's next: %q", next)
	}
	if !strings.Contains(page.Body, `<a href="/">Cancel</a>`) {
		t.Error("the page's Cancel link does not lead to the catalog")
	}
	form := func(pw, token string) url.Values {
		return url.Values{"password": {pw}, "csrf_token": {token}, "next": {secondfactor.PasskeysPath}}
	}
	if r := b.Post(secondfactor.ReauthPath, form("wrong", tok)); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, refusal.WrongPassword.Message()) {
		t.Errorf("a wrong password: %d", r.Status)
	}
	if logs := h.Logs.String(); !strings.Contains(logs, `reason="bad credentials"`) || !strings.Contains(logs, "user=alice") {
		t.Errorf("the wrong password is not logged as a refusal:\n%s", logs)
	}
	if r := b.Post(secondfactor.ReauthPath, form(logintest.Passwords["alice"], "forged")); r.Status != http.StatusForbidden {
		t.Errorf("a forged token: %d", r.Status)
	}
	if b.Get(secondfactor.PasskeysPath, true).Status != http.StatusSeeOther {
		t.Fatal("the passkeys page opened after refused attempts")
	}

	old := b.SessionCookie()
	if r := b.Post(secondfactor.ReauthPath, form(logintest.Passwords["alice"], tok)); r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.PasskeysPath {
		t.Fatalf("the right password: %d %q", r.Status, r.Header.Get("Location"))
	}
	if b.SessionCookie() == old || b.SessionCookie() == "" {
		t.Error("the session kept its id")
	}
	replay := h.browser()
	replay.SetCookie(h.P.Manager().CookieName(), old)
	if s := replay.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("the old session cookie: %d, want 401", s)
	}
	if !strings.Contains(h.Logs.String(), "auth: password given again") {
		t.Error("no log line for the password given again")
	}

	if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusOK {
		t.Fatalf("the passkeys page after the password: %d", r.Status)
	}
	tok = b.CSRF()
	r, ans := b.beginPasskey(secondfactor.PasskeysBeginPath, tok)
	if r.Status != http.StatusOK {
		t.Fatalf("begin: %d %s", r.Status, r.Body)
	}
	if r := b.PostJSON(secondfactor.PasskeysFinishPath, tok, finishBody(t, newSoftKey(t), ans, "Key")); r.Status != http.StatusOK {
		t.Fatalf("finish: %d %s", r.Status, r.Body)
	}
	if rec, _ := h.P.Factors().Lookup("alice"); rec == nil || len(rec.Passkeys) != 1 {
		t.Fatalf("stored: %+v", rec)
	}

	h.Clock.Advance(secondfactor.ReauthWindow)
	if r := b.PostJSON(secondfactor.PasskeysBeginPath, tok, []byte(`{}`)); r.Status != http.StatusForbidden {
		t.Errorf("begin %v after the password: %d", secondfactor.ReauthWindow, r.Status)
	}
	if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusSeeOther {
		t.Errorf("the page %v after the password: %d", secondfactor.ReauthWindow, r.Status)
	}
}

// TestReauthRefusals: the password page is for signed-in users only, and
// wrong passwords count against the sign-in's limits: past them, 429 with
// Retry-After, the right password too.
func TestReauthRefusals(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, func(c *login.Config) { c.MaxUserFailures = 3 })
	anon := h.browser()
	if r := anon.Get(secondfactor.ReauthPath, true); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), h.P.LoginPath()) {
		t.Errorf("GET not signed in: %d %q", r.Status, r.Header.Get("Location"))
	}
	if r := anon.Post(secondfactor.ReauthPath, url.Values{"password": {"x"}, "csrf_token": {anon.FormToken()}}); r.Status != http.StatusUnauthorized {
		t.Errorf("POST not signed in: %d", r.Status)
	}

	b := h.browser()
	b.MustLogin("alice")
	tok := b.reauthToken()
	post := func(pw string) reply {
		return b.Post(secondfactor.ReauthPath, url.Values{"password": {pw}, "csrf_token": {tok}})
	}
	if r := post(""); r.Status != http.StatusUnauthorized {
		t.Errorf("an empty password: %d", r.Status)
	}
	for i := range 3 {
		if r := post("wrong"); r.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, r.Status)
		}
	}
	r := post(logintest.Passwords["alice"])
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("past the limit: %d, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	h.Clock.Advance(2 * time.Hour)
	b.MustLogin("alice")
	if r := b.Post(secondfactor.ReauthPath, url.Values{"password": {logintest.Passwords["alice"]}, "csrf_token": {b.reauthToken()}}); r.Status != http.StatusSeeOther {
		t.Errorf("once the block ended: %d", r.Status)
	}
}

// TestSignInCountsAsPasswordGiven: a sign-in with the password is itself
// the password given, for secondfactor.ReauthWindow from the moment the password was
// checked: with the password alone, and with a second factor (counted
// from the password step, not from the code). A passkey-only sign-in
// gives no password, and its user is asked for it.
func TestSignInCountsAsPasswordGiven(t *testing.T) {
	t.Run("password", func(t *testing.T) {
		h := newFactorHarness(t, login.SecondFactorOptional, nil)
		b := h.browser()
		b.MustLogin("alice")
		if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusOK {
			t.Fatalf("the passkeys page right after the sign-in: %d %q, want 200", r.Status, r.Header.Get("Location"))
		}
		tok := b.CSRF()
		h.Clock.Advance(secondfactor.ReauthWindow - time.Second)
		if r, _ := b.beginPasskey(secondfactor.PasskeysBeginPath, tok); r.Status != http.StatusOK {
			t.Fatalf("begin within the window: %d %s", r.Status, r.Body)
		}
		h.Clock.Advance(time.Second)
		if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.ReauthURL(secondfactor.PasskeysPath) {
			t.Fatalf("the passkeys page %v after the sign-in: %d %q, want 303 to the password page", secondfactor.ReauthWindow, r.Status, r.Header.Get("Location"))
		}
	})
	t.Run("password and code", func(t *testing.T) {
		h := newFactorHarness(t, login.SecondFactorOptional, nil)
		h.Enrol("alice")
		b := h.browser()
		if r := b.Login("alice", logintest.Passwords["alice"], "/"); r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), secondfactor.SecondFactorPath) {
			t.Fatalf("password step: %d %q", r.Status, r.Header.Get("Location"))
		}
		h.Clock.Advance(2 * time.Minute) // the code comes later than the password
		if r := b.SecondFactor(h.Code(), "/"); r.Status != http.StatusSeeOther {
			t.Fatalf("code: %d %s", r.Status, r.Body)
		}
		if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusOK {
			t.Fatalf("the passkeys page after password and code: %d %q, want 200", r.Status, r.Header.Get("Location"))
		}
		h.Clock.Advance(secondfactor.ReauthWindow - 2*time.Minute) // 5 minutes after the password, 3 after the code
		if r := b.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusSeeOther {
			t.Fatalf("the passkeys page %v after the password: %d, want 303", secondfactor.ReauthWindow, r.Status)
		}
	})
}
