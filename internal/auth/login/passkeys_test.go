package login

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/refusal"
)

// TestPasskeyRoutesRefuse drives the passkey routes' refusals over HTTP:
// each answers by the one refusal rule (JSON to a client that asks for
// it), before any ceremony is begun or finished.
func TestPasskeyRoutesRefuse(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, func(c *Config) { c.PasskeyLogin = true })
	anon := h.browser()
	signed := h.browser()
	signed.mustLogin("alice")
	good := signed.csrf()
	form := anon.formToken()
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
			r := tt.b.postJSON(tt.path, tt.token, []byte(`{}`))
			var body struct{ Error string }
			if r.status != tt.status || json.Unmarshal([]byte(r.body), &body) != nil || !strings.Contains(body.Error, tt.message) {
				t.Errorf("%d %s; want %d with %q", r.status, r.body, tt.status, tt.message)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	// The page itself sends a browser to the login page.
	if r := anon.get(secondfactor.PasskeysPath, true); r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "next="+url.QueryEscape(secondfactor.PasskeysPath)) {
		t.Errorf("GET %s not signed in: %d %s", secondfactor.PasskeysPath, r.status, r.header.Get("Location"))
	}
	// Remove needs the session's token.
	if r := signed.post(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {form}}); r.status != http.StatusForbidden {
		t.Errorf("remove with the form's token: %d", r.status)
	}
	// The rest with the password given again (TestReauthGatesFactorChanges
	// checks the refusals without it); the session's token is new.
	signed.reauth("alice")
	good = signed.csrf()
	if r := signed.post(secondfactor.PasskeysRemovePath, url.Values{"id": {"AAAA"}, "csrf_token": {good}}); r.status != http.StatusSeeOther || r.header.Get("Location") != secondfactor.PasskeysPath {
		t.Errorf("remove of an unknown passkey: %d %s", r.status, r.header.Get("Location"))
	}
	// A name that is not one.
	r := signed.postJSON(secondfactor.PasskeysFinishPath, good, []byte(`{"ceremony":"x","name":"  ","credential":{}}`))
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, refusal.PasskeyName.Message()) {
		t.Errorf("empty name: %d %s", r.status, r.body)
	}
	// The page lists no passkey, and may run the script.
	page := signed.get(secondfactor.PasskeysPath, true)
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="passkey-none"`) || !strings.Contains(page.header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("page: %d, policy %q", page.status, page.header.Get("Content-Security-Policy"))
	}
}

// TestPasskeyFailuresThrottled: failed passkey answers count against the
// same limit of the client address as wrong passwords; past it, 429 with
// Retry-After, for the password too.
func TestPasskeyFailuresThrottled(t *testing.T) {
	h := newFactorHarness(t, SecondFactorOptional, func(c *Config) { c.PasskeyLogin, c.MaxFailures = true, 3 })
	b := h.browser()
	tok := b.formToken()
	bad := func() reply {
		begun := b.postJSON(secondfactor.PasskeyLoginBegin, tok, []byte(`{}`))
		var ans begunAnswer
		if begun.status == http.StatusOK {
			json.Unmarshal([]byte(begun.body), &ans)
		}
		body, _ := json.Marshal(map[string]any{"ceremony": ans.Ceremony, "credential": map[string]string{"id": "AAAA", "type": "public-key"}})
		return b.postJSON(secondfactor.PasskeyLoginFinish, tok, body)
	}
	for i := range 3 {
		if r := bad(); r.status != http.StatusUnauthorized || !strings.Contains(r.body, refusal.PasskeyRefused.Message()) {
			t.Fatalf("answer %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := bad()
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("past the limit: %d %s, Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	if r := b.postJSON(secondfactor.PasskeyLoginBegin, tok, []byte(`{}`)); r.status != http.StatusTooManyRequests {
		t.Errorf("a new ceremony past the limit: %d %s", r.status, r.body)
	}
	if r := b.login("alice", "alice-pw", ""); r.status != http.StatusTooManyRequests {
		t.Errorf("the password past the limit: %d", r.status)
	}
	if n := strings.Count(h.logs.String(), `reason="passkey refused"`); n != 3 {
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
		{"passkeys offered", newFactorHarness(t, SecondFactorOptional, nil), true},
		{"no second factor", newHarness(t, nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.h.browser()
			b.mustLogin("alice")
			r := b.get("/", true)
			if r.status != http.StatusOK {
				t.Fatalf("catalog page: %d", r.status)
			}
			if got := strings.Contains(r.body, link); got != tt.want {
				t.Errorf("link to the passkeys page: %v, want %v\n%s", got, tt.want, r.body)
			}
			if links := tt.h.p.AccountLinks(auth.User{Name: "alice"}); links != nil {
				t.Errorf("links for a user without a session: %v", links)
			}
		})
	}
}
