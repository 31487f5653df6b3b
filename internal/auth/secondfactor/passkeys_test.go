package secondfactor_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/refusal"
)

// TestPasskeyRoutesRefuse drives the passkey routes' refusals over HTTP:
// each answers by the one refusal rule (JSON to a client that asks for
// it), before any ceremony is begun or finished.
func TestPasskeyRoutesRefuse(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, func(c *login.Config) { c.PasskeyLogin = true })
	anon := h.browser()
	signed := h.browser()
	signed.MustLogin("alice")
	good := signed.CSRF()
	form := anon.FormToken()
	for _, tt := range []struct {
		name    string
		b       *browser
		path    string
		token   string
		status  int
		message string
	}{
		{"register, not signed in", anon, secondfactor.PasskeysBeginPath, form, http.StatusUnauthorized, "sign in first"},
		{"register, no token", signed, secondfactor.PasskeysBeginPath, "", http.StatusForbidden, refusal.PageStale.Message()},
		{"register, the form's token", signed, secondfactor.PasskeysBeginPath, form, http.StatusForbidden, refusal.PageStale.Message()},
		{"finish, no token", signed, secondfactor.PasskeysFinishPath, "", http.StatusForbidden, refusal.PageStale.Message()},
		{"passkey sign-in, no token", anon, secondfactor.PasskeyLoginBegin, "", http.StatusForbidden, refusal.FormExpired.Message()},
		{"passkey sign-in, the session's token", anon, secondfactor.PasskeyLoginFinish, good, http.StatusForbidden, refusal.FormExpired.Message()},
		{"second step, no pending state", anon, secondfactor.SecondFactorPasskeyBegin, form, http.StatusUnauthorized, refusal.SecondStepExpired.Message()},
		{"second step finish, no pending state", anon, secondfactor.SecondFactorPasskeyFinish, form, http.StatusUnauthorized, refusal.SecondStepExpired.Message()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.b.PostJSON(tt.path, tt.token, []byte(`{}`))
			var body struct{ Error string }
			if r.Status != tt.status || json.Unmarshal([]byte(r.Body), &body) != nil || !strings.Contains(body.Error, tt.message) {
				t.Errorf("%d %s; want %d with %q", r.Status, r.Body, tt.status, tt.message)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	// The page itself sends a browser to the login page.
	if r := anon.Get(secondfactor.PasskeysPath, true); r.Status != http.StatusSeeOther || !strings.Contains(r.Header.Get("Location"), "next="+url.QueryEscape(secondfactor.PasskeysPath)) {
		t.Errorf("GET %s not signed in: %d %s", secondfactor.PasskeysPath, r.Status, r.Header.Get("Location"))
	}
	// Remove needs the session's token.
	if r := signed.Post(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {form}}); r.Status != http.StatusForbidden {
		t.Errorf("remove with the form's token: %d", r.Status)
	}
	// The rest with the password given again (TestReauthGatesFactorChanges
	// checks the refusals without it); the session's token is new.
	signed.reauth("alice")
	good = signed.CSRF()
	if r := signed.Post(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {good}}); r.Status != http.StatusSeeOther || r.Header.Get("Location") != secondfactor.PasskeysPath {
		t.Errorf("remove of an unknown passkey: %d %s", r.Status, r.Header.Get("Location"))
	}
	// A name that is not one.
	r := signed.PostJSON(secondfactor.PasskeysFinishPath, good, []byte(`{"ceremony":"x","name":"  ","credential":{}}`))
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, refusal.PasskeyName.Message()) {
		t.Errorf("empty name: %d %s", r.Status, r.Body)
	}
	// The page lists no passkey, and may run the script.
	page := signed.Get(secondfactor.PasskeysPath, true)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, `id="passkey-none"`) || !strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("page: %d, policy %q", page.Status, page.Header.Get("Content-Security-Policy"))
	}
}

// TestPasskeyFailuresThrottled: failed passkey answers count against the
// same limit of the client address as wrong passwords; past it, 429 with
// Retry-After, for the password too.
func TestPasskeyFailuresThrottled(t *testing.T) {
	h := newFactorHarness(t, login.SecondFactorOptional, func(c *login.Config) { c.PasskeyLogin, c.MaxFailures = true, 3 })
	b := h.browser()
	tok := b.FormToken()
	bad := func() reply {
		begun := b.PostJSON(secondfactor.PasskeyLoginBegin, tok, []byte(`{}`))
		var ans begunAnswer
		if begun.Status == http.StatusOK {
			json.Unmarshal([]byte(begun.Body), &ans)
		}
		body, _ := json.Marshal(map[string]any{"ceremony": ans.Ceremony, "credential": map[string]string{"id": "AAAA", "type": "public-key"}})
		return b.PostJSON(secondfactor.PasskeyLoginFinish, tok, body)
	}
	for i := range 3 {
		if r := bad(); r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, refusal.PasskeyRefused.Message()) {
			t.Fatalf("answer %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := bad()
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("past the limit: %d %s, Retry-After %q", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if r := b.PostJSON(secondfactor.PasskeyLoginBegin, tok, []byte(`{}`)); r.Status != http.StatusTooManyRequests {
		t.Errorf("a new ceremony past the limit: %d %s", r.Status, r.Body)
	}
	if r := b.Login("alice", "alice-pw", ""); r.Status != http.StatusTooManyRequests {
		t.Errorf("the password past the limit: %d", r.Status)
	}
	if n := strings.Count(h.Logs.String(), `reason="passkey refused"`); n != 3 {
		t.Errorf("%d refusals logged, want 3", n)
	}
}

// TestCatalogLinksToPasskeys: with passkeys offered, the catalog page of
// a signed-in user links to the passkeys page; without a second factor, or
// before sign-in, there is no such link.
func TestCatalogLinksToPasskeys(t *testing.T) {
	const link = `href="` + secondfactor.PasskeysPath + `"`
	for _, tt := range []struct {
		name string
		h    *harness
		want bool
	}{
		{"passkeys offered", newFactorHarness(t, login.SecondFactorOptional, nil), true},
		{"no second factor", newHarness(t, nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.h.browser()
			b.MustLogin("alice")
			r := b.Get("/", true)
			if r.Status != http.StatusOK {
				t.Fatalf("catalog page: %d", r.Status)
			}
			if got := strings.Contains(r.Body, link); got != tt.want {
				t.Errorf("link to the passkeys page: %v, want %v\n%s", got, tt.want, r.Body)
			}
			if links := tt.h.P.AccountLinks(auth.User{Name: "alice"}); links != nil {
				t.Errorf("links for a user without a session: %v", links)
			}
		})
	}
}
