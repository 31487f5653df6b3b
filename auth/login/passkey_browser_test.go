package login

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/browsertest"
	"github.com/chromedp/cdproto/network"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// passkeyHarness is a flask-login provider with passkey_login on, served
// at its public_url, http://localhost:PORT, and the last body posted to
// each route ending in /finish (to replay it).
type passkeyHarness struct {
	*harness
	base string

	mu     sync.Mutex
	bodies map[string][]byte
}

func newPasskeyHarness(t *testing.T) *passkeyHarness {
	t.Helper()
	ph := &passkeyHarness{bodies: map[string][]byte{}}
	ph.harness = newHarnessWith(t, func(c *Config) { c.PasskeyLogin = true }, func(h *harness) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ph.base = fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
		if h.env.PublicURL, err = url.Parse(ph.base); err != nil {
			t.Fatal(err)
		}
		h.listener, h.wrap = ln, ph.record
	})
	return ph
}

// record keeps a copy of the body of every POST to a .../finish route.
func (ph *passkeyHarness) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/finish") {
			body, _ := io.ReadAll(r.Body)
			ph.mu.Lock()
			ph.bodies[r.URL.Path] = body
			ph.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// last returns the last body posted to path.
func (ph *passkeyHarness) last(path string) []byte {
	ph.mu.Lock()
	defer ph.mu.Unlock()
	return bytes.Clone(ph.bodies[path])
}

// postJSON posts body to path as the passkey script does, with the CSRF
// token in X-CSRF-Token.
func (b *browser) postJSON(path, token string, body []byte) reply {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.h.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(sessionauth.CSRFHeader, token)
	req.Header.Set("Origin", b.h.srv.URL)
	return b.do(req)
}

// addAuthenticator gives the browser's page a virtual CTAP2 authenticator
// with resident keys and user verification, which answers at once.
func addAuthenticator(t *testing.T, ctx context.Context) cdpwebauthn.AuthenticatorID {
	t.Helper()
	if _, err := chromedp.Call(ctx, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	res, err := chromedp.Call(ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{
		Options: &cdpwebauthn.VirtualAuthenticatorOptions{
			Protocol: cdpwebauthn.AuthenticatorProtocolCtap2, Ctap2version: cdpwebauthn.Ctap2versionCtap21,
			Transport: cdpwebauthn.AuthenticatorTransportInternal, HasResidentKey: true,
			HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		},
	})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return res.AuthenticatorID
}

// TestBrowserPasskeys drives Chromium with a virtual authenticator through
// the passkey pages: sign in with the password, register a passkey, sign
// out, sign in with the passkey alone; then the attacks: the same answer
// posted again (used ceremony, and against a new challenge), the pages
// relayed from another origin (phishing), a credential whose sign count
// went back (a clone); then removal.
func TestBrowserPasskeys(t *testing.T) {
	ctx := browsertest.New(t)
	ph := newPasskeyHarness(t)
	authn := addAuthenticator(t, ctx)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	passkeys := func() int {
		t.Helper()
		keys, err := ph.p.passkeys.Passkeys(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}

	// The password first: the login page offers the passkey too.
	run(chromedp.Navigate(ph.base+"/login"), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)))
	browsertest.CheckStyled(t, ctx)
	browsertest.Screenshot(t, ctx, "login-with-passkey")
	run(
		chromedp.SendKeys(chromedp.CSS(`#username`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "alice-pw"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
	)

	t.Run("register", func(t *testing.T) {
		run(chromedp.Navigate(ph.base+PasskeysPath), chromedp.WaitVisible(chromedp.CSS(`#passkey-none`)))
		browsertest.CheckStyled(t, ctx)
		browsertest.Screenshot(t, ctx, "passkeys-none")
		run(
			chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Laptop"),
			chromedp.Click(chromedp.CSS(`#passkey-add button`)),
			chromedp.WaitVisible(chromedp.CSS(`#passkey-notice`)),
		)
		if got := text(`#passkey-notice`); got != msgPasskeyAdded {
			t.Errorf("notice %q", got)
		}
		if list := text(`#passkey-list`); !strings.Contains(list, "Laptop") || !strings.Contains(list, "never used") {
			t.Errorf("list %q", list)
		}
		browsertest.CheckStyled(t, ctx)
		browsertest.Screenshot(t, ctx, "passkeys-one")
		if n := passkeys(); n != 1 {
			t.Fatalf("%d passkeys stored, want 1", n)
		}
		creds, err := chromedp.Call(ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: authn})
		if err != nil || len(creds.Credentials) != 1 {
			t.Fatalf("authenticator credentials %v, %v", creds, err)
		}
		c := creds.Credentials[0]
		if !c.IsResidentCredential || c.RpID != "localhost" {
			t.Errorf("credential resident %v, RP id %q", c.IsResidentCredential, c.RpID)
		}
		if owner, ok, _ := ph.p.passkeys.Owner(context.Background(), c.UserHandle); !ok || owner != "alice" {
			t.Errorf("user handle names %q, %v", owner, ok)
		}
	})

	t.Run("passkey-only sign-in", func(t *testing.T) {
		run(chromedp.Click(chromedp.CSS(`form.logout button`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)))
		run(chromedp.Click(chromedp.CSS(`#passkey-sign-in`)), chromedp.WaitVisible(chromedp.CSS(`table.backups`)))
		if u := location(t, ctx); u.Path != "/" {
			t.Errorf("after the passkey at %s", u)
		}
		u := browserUser(t, ctx, ph)
		if u.Name != "alice" || u.SecondFactor != SecondFactorPasskey {
			t.Errorf("signed in as %q with %q", u.Name, u.SecondFactor)
		}
		keys, _ := ph.p.passkeys.Passkeys(context.Background(), "alice")
		if len(keys) != 1 || keys[0].LastUsed.IsZero() || keys[0].Credential.Authenticator.SignCount == 0 {
			t.Errorf("after use: %+v", keys)
		}
		if logs := ph.logs.String(); !strings.Contains(logs, `msg="auth signed in"`) || !strings.Contains(logs, "user=alice") {
			t.Errorf("no sign-in logged: %s", logs)
		}
	})

	t.Run("replayed answer", func(t *testing.T) {
		answer := ph.last(PasskeyLoginFinish)
		if len(answer) == 0 {
			t.Fatal("no answer recorded")
		}
		b := ph.browser()
		tok := b.formToken()
		r := b.postJSON(PasskeyLoginFinish, tok, answer)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.body, MsgPasskeyRefused) || b.sessionCookie() != "" {
			t.Errorf("same ceremony again: %d %s", r.status, r.body)
		}
		// The same answer under a ceremony of its own: the challenge
		// it signed is not this one.
		begun := b.postJSON(PasskeyLoginBegin, tok, []byte(`{}`))
		var ans begunAnswer
		if begun.status != http.StatusOK || json.Unmarshal([]byte(begun.body), &ans) != nil || ans.Ceremony == "" {
			t.Fatalf("begin: %d %s", begun.status, begun.body)
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(answer, &req); err != nil {
			t.Fatal(err)
		}
		req["ceremony"], _ = json.Marshal(ans.Ceremony)
		forged, _ := json.Marshal(req)
		r = b.postJSON(PasskeyLoginFinish, tok, forged)
		if r.status != http.StatusUnauthorized || b.sessionCookie() != "" {
			t.Errorf("answer under a new challenge: %d %s", r.status, r.body)
		}
		logs := ph.logs.String()
		if !strings.Contains(logs, `reason="passkey refused"`) || !strings.Contains(logs, "no such ceremony") || !strings.Contains(logs, "challenge") {
			t.Errorf("refusals not logged with their reasons: %s", logs)
		}
	})

	t.Run("wrong origin", func(t *testing.T) {
		// A look-alike site relays every page and request to the service:
		// the browser signs for the relay's origin, which the service
		// refuses.
		target, _ := url.Parse(ph.srv.URL)
		relay := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
		defer relay.Close()
		relayBase := "http://localhost:" + strings.TrimPrefix(relay.URL, "http://127.0.0.1:")
		run(chromedp.Click(chromedp.CSS(`form.logout button`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)))
		before := strings.Count(ph.logs.String(), `reason="passkey refused"`)
		run(
			chromedp.Navigate(relayBase+"/login"), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)),
			chromedp.Click(chromedp.CSS(`#passkey-sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-error`)),
		)
		if got := text(`#passkey-error`); got != MsgPasskeyRefused {
			t.Errorf("error shown %q", got)
		}
		logs := ph.logs.String()
		if strings.Count(logs, `reason="passkey refused"`) != before+1 || !strings.Contains(strings.ToLower(logs), "origin") {
			t.Errorf("relayed answer not refused for its origin: %s", logs)
		}
		if u := location(t, ctx); u.Path != "/login" {
			t.Errorf("at %s after a refused passkey", u)
		}
	})

	t.Run("cloned credential", func(t *testing.T) {
		creds, err := chromedp.Call(ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: authn})
		if err != nil || len(creds.Credentials) != 1 {
			t.Fatalf("authenticator credentials: %v", err)
		}
		zero := float64(0)
		if _, err := chromedp.Call(ctx, cdpwebauthn.SetCredentialProperties, cdpwebauthn.SetCredentialPropertiesParams{
			AuthenticatorID: authn, CredentialID: creds.Credentials[0].CredentialID, SignCount: &zero,
		}); err != nil {
			t.Fatalf("WebAuthn.setCredentialProperties: %v", err)
		}
		run(
			chromedp.Navigate(ph.base+"/login"), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)),
			chromedp.Click(chromedp.CSS(`#passkey-sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-error`)),
		)
		if got := text(`#passkey-error`); got != MsgPasskeyRefused {
			t.Errorf("error shown %q", got)
		}
		browsertest.CheckStyled(t, ctx)
		browsertest.Screenshot(t, ctx, "login-passkey-refused")
		if logs := ph.logs.String(); !strings.Contains(logs, `reason="passkey sign count did not increase"`) || !strings.Contains(logs, "user=alice") {
			t.Errorf("clone not logged: %s", logs)
		}
	})

	t.Run("remove", func(t *testing.T) {
		run(
			chromedp.Navigate(ph.base+"/login?next="+url.QueryEscape(PasskeysPath)), chromedp.WaitVisible(chromedp.CSS(`#username`)),
			chromedp.SendKeys(chromedp.CSS(`#username`), "alice"),
			chromedp.SendKeys(chromedp.CSS(`#password`), "alice-pw"),
			chromedp.Click(chromedp.CSS(`button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#passkey-list`)),
		)
		run(chromedp.Click(chromedp.CSS(`#passkey-list button`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-none`)))
		if got := text(`#passkey-notice`); got != msgPasskeyRemoved {
			t.Errorf("notice %q", got)
		}
		if n := passkeys(); n != 0 {
			t.Fatalf("%d passkeys left", n)
		}
		// The authenticator still holds the credential; the service no
		// longer knows it.
		run(chromedp.Click(chromedp.CSS(`form.logout button`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)))
		run(chromedp.Click(chromedp.CSS(`#passkey-sign-in`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-error`)))
		if u := browserUser(t, ctx, ph); u.Name != "" {
			t.Errorf("a removed passkey signed in %q", u.Name)
		}
	})
}

// browserUser returns who the browser's session cookie signs in, as the
// provider identifies it (zero when nobody).
func browserUser(t *testing.T, ctx context.Context, ph *passkeyHarness) auth.User {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{ph.base + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, ph.base+"/", nil)
	for _, c := range res.Cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	u, ok, err := ph.p.Identify(req)
	if err != nil || !ok {
		return auth.User{}
	}
	return u
}
