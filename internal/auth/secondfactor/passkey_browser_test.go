package secondfactor_test

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

	"github.com/chromedp/cdproto/network"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/passkey"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
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

func newPasskeyHarness(t *testing.T, mode login.SecondFactor) *passkeyHarness {
	t.Helper()
	ph := &passkeyHarness{bodies: map[string][]byte{}}
	ph.harness = newHarnessWith(t, func(c *login.Config) { c.SecondFactor, c.PasskeyLogin = mode, true }, func(h *harness) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ph.base = fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
		if h.Env.PublicURL, err = url.Parse(ph.base); err != nil {
			t.Fatal(err)
		}
		h.Listener, h.Wrap = ln, ph.record
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

// addAuthenticator gives the browser's page a virtual CTAP2 authenticator
// (browsertest.AddAuthenticator).
func addAuthenticator(t *testing.T, ctx context.Context) cdpwebauthn.AuthenticatorID {
	return browsertest.AddAuthenticator(t, ctx)
}

// pkBrowser drives one Chromium, with a virtual authenticator, over a
// passkeyHarness served at its public URL.
type pkBrowser struct {
	factorBrowser
	ph    *passkeyHarness
	authn cdpwebauthn.AuthenticatorID
}

func newPKBrowser(t *testing.T, mode login.SecondFactor) *pkBrowser {
	ctx := browsertest.New(t)
	ph := newPasskeyHarness(t, mode)
	return &pkBrowser{factorBrowser: factorBrowser{T: t, ctx: ctx, h: ph.harness}, ph: ph, authn: addAuthenticator(t, ctx)}
}

// password signs user in with the login form at path next, and waits for
// sel.
func (b *pkBrowser) password(user, next, sel string) {
	b.T.Helper()
	b.run(
		chromedp.Navigate(b.ph.base+"/login?next="+url.QueryEscape(next)),
		browsertest.SignIn(user, logintest.Passwords[user]),
		chromedp.WaitVisible(chromedp.CSS(sel)),
	)
}

// passkeysPage opens the passkeys page through the password page (the
// password of user given again), and waits for sel.
func (b *pkBrowser) passkeysPage(user, sel string) {
	b.T.Helper()
	b.run(
		chromedp.Navigate(b.ph.base+secondfactor.ReauthURL(secondfactor.PasskeysPath)), chromedp.WaitVisible(chromedp.CSS(`#reauth-form`)),
		chromedp.SendKeys(chromedp.CSS(`#password`), logintest.Passwords[user]),
		chromedp.Click(chromedp.CSS(`#reauth-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(sel)),
	)
}

// register adds a passkey called name from the passkeys page, alice
// signed in, her password given again first.
func (b *pkBrowser) register(name string) {
	b.T.Helper()
	b.passkeysPage("alice", `#passkey-name`)
	b.run(
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), name),
		chromedp.Click(chromedp.CSS(`#passkey-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-notice`)),
	)
	if got := b.text(`#passkey-notice`); got != msgPasskeyAdded {
		b.T.Fatalf("after adding a passkey: %q", got)
	}
}

// signOut signs out from a page with the sign-out button.
func (b *pkBrowser) signOut() {
	b.T.Helper()
	b.run(chromedp.Click(chromedp.CSS(`form.logout button`)), chromedp.WaitVisible(chromedp.CSS(`#username`)))
}

// usePasskey clicks the passkey button of the page and waits for sel.
func (b *pkBrowser) usePasskey(sel string) {
	b.T.Helper()
	b.run(
		chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)),
		chromedp.Click(chromedp.CSS(`#passkey-sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(sel)),
	)
}

// setSignCount sets the sign count of the authenticator's one credential.
func (b *pkBrowser) setSignCount(n float64) {
	b.T.Helper()
	creds, err := chromedp.Call(b.ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: b.authn})
	if err != nil || len(creds.Credentials) != 1 {
		b.T.Fatalf("authenticator credentials: %v", err)
	}
	if _, err := chromedp.Call(b.ctx, cdpwebauthn.SetCredentialProperties, cdpwebauthn.SetCredentialPropertiesParams{
		AuthenticatorID: b.authn, CredentialID: creds.Credentials[0].CredentialID, SignCount: &n,
	}); err != nil {
		b.T.Fatalf("WebAuthn.setCredentialProperties: %v", err)
	}
}

// stored returns alice's passkeys as the factors file holds them.
func (b *pkBrowser) stored() []passkey.Passkey {
	b.T.Helper()
	keys, err := b.ph.P.Step().Passkeys().Passkeys(context.Background(), "alice")
	if err != nil {
		b.T.Fatal(err)
	}
	return keys
}

// TestBrowserPasskeySignIn registers a passkey in Chromium and signs in
// with it: after the password at the second-factor step, and alone from
// the login page (passkey_login); then the same answer posted again is
// refused, for its used ceremony and against a new challenge.
func TestBrowserPasskeySignIn(t *testing.T) {
	b := newPKBrowser(t, login.SecondFactorOptional)
	b.run(chromedp.Navigate(b.ph.base+"/login"), chromedp.WaitVisible(chromedp.CSS(`#passkey-sign-in`)))
	b.screenshot("login-with-passkey", `#username`, `#passkey-sign-in`)
	// No factor yet: the password alone signs in (optional).
	b.password("alice", "/", `table.backups`)
	b.h.Clock.Advance(secondfactor.ReauthWindow) // the sign-in's password is too old now
	b.run(chromedp.Navigate(b.ph.base+secondfactor.PasskeysPath), chromedp.WaitVisible(chromedp.CSS(`#reauth-form`)))
	b.screenshot("reauth", `#reauth-user`, `#password`)
	b.passkeysPage("alice", `#passkey-none`)
	b.screenshot("passkeys-none", `#passkey-name`, `#passkey-add button`)
	b.register("Laptop")
	if list := b.text(`#passkey-list`); !strings.Contains(list, "Laptop") || !strings.Contains(list, "never used") {
		t.Errorf("list %q", list)
	}
	b.screenshot("passkeys-one", `#passkey-list`, `#passkey-notice`)
	if keys := b.stored(); len(keys) != 1 || keys[0].Name != "Laptop" {
		t.Fatalf("stored %+v", keys)
	}
	creds, err := chromedp.Call(b.ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: b.authn})
	if err != nil || len(creds.Credentials) != 1 {
		t.Fatalf("authenticator credentials %v, %v", creds, err)
	}
	if c := creds.Credentials[0]; !c.IsResidentCredential || c.RpID != "localhost" {
		t.Errorf("credential resident %v, RP id %q", c.IsResidentCredential, c.RpID)
	} else if owner, ok, _ := b.ph.P.Step().Passkeys().Owner(context.Background(), c.UserHandle); !ok || owner != "alice" {
		t.Errorf("user handle names %q, %v", owner, ok)
	}

	t.Run("password and passkey", func(t *testing.T) {
		b.signOut()
		b.password("alice", "/?view=all", `#passkey-sign-in`)
		if u := location(t, b.ctx); u.Path != secondfactor.SecondFactorPath {
			t.Fatalf("after the password at %s", u)
		}
		b.screenshot("second-factor-passkey", `#passkey-sign-in`, `#code`)
		b.usePasskey(`table.backups`)
		if u := location(t, b.ctx); u.RequestURI() != "/?view=all" {
			t.Errorf("signed in at %s, want next /?view=all", u)
		}
		if u := browserUser(t, b.ctx, b.ph); u.Name != "alice" || u.SecondFactor != secondfactor.SecondFactorPasskey {
			t.Errorf("signed in as %q with %q", u.Name, u.SecondFactor)
		}
		if keys := b.stored(); keys[0].LastUsed.IsZero() || keys[0].Credential.Authenticator.SignCount == 0 {
			t.Errorf("the use was not recorded: %+v", keys[0])
		}
	})

	t.Run("passkey alone", func(t *testing.T) {
		b.signOut()
		b.usePasskey(`table.backups`)
		if u := browserUser(t, b.ctx, b.ph); u.Name != "alice" || u.SecondFactor != secondfactor.SecondFactorPasskey {
			t.Errorf("signed in as %q with %q", u.Name, u.SecondFactor)
		}
		if logs := b.ph.Logs.String(); strings.Count(logs, `msg="auth signed in"`) < 3 {
			t.Errorf("sign-ins not logged: %s", logs)
		}
	})

	t.Run("replayed answer", func(t *testing.T) {
		answer := b.ph.last(secondfactor.PasskeyLoginFinish)
		if len(answer) == 0 {
			t.Fatal("no answer recorded")
		}
		c := b.ph.browser()
		tok := c.FormToken()
		r := c.PostJSON(secondfactor.PasskeyLoginFinish, tok, answer)
		if r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, refusal.PasskeyRefused.Message()) || c.SessionCookie() != "" {
			t.Errorf("same ceremony again: %d %s", r.Status, r.Body)
		}
		// The same answer under a ceremony of its own: the challenge it
		// signed is not this one.
		begun := c.PostJSON(secondfactor.PasskeyLoginBegin, tok, []byte(`{}`))
		var ans begunAnswer
		if begun.Status != http.StatusOK || json.Unmarshal([]byte(begun.Body), &ans) != nil || ans.Ceremony == "" {
			t.Fatalf("begin: %d %s", begun.Status, begun.Body)
		}
		var req map[string]json.RawMessage
		if err := json.Unmarshal(answer, &req); err != nil {
			t.Fatal(err)
		}
		req["ceremony"], _ = json.Marshal(ans.Ceremony)
		forged, _ := json.Marshal(req)
		r = c.PostJSON(secondfactor.PasskeyLoginFinish, tok, forged)
		if r.Status != http.StatusUnauthorized || c.SessionCookie() != "" {
			t.Errorf("answer under a new challenge: %d %s", r.Status, r.Body)
		}
		logs := b.ph.Logs.String()
		if !strings.Contains(logs, `reason="passkey refused"`) || !strings.Contains(logs, "no such ceremony") || !strings.Contains(logs, "hallenge") {
			t.Errorf("refusals not logged with their reasons: %s", logs)
		}
	})
}

// TestBrowserPasskeyAttacks checks the passkey sign-in against a site
// that relays the service's pages from another origin (phishing) and a
// credential whose sign count went back (a clone).
func TestBrowserPasskeyAttacks(t *testing.T) {
	b := newPKBrowser(t, login.SecondFactorOptional)
	b.password("alice", "/", `table.backups`)
	b.register("Laptop")
	b.signOut()

	t.Run("wrong origin", func(t *testing.T) {
		target, _ := url.Parse(b.ph.Srv.URL)
		relay := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
		defer relay.Close()
		relayBase := "http://localhost:" + strings.TrimPrefix(relay.URL, "http://127.0.0.1:")
		b.run(chromedp.Navigate(relayBase + "/login"))
		b.usePasskey(`#passkey-error`)
		if got := b.text(`#passkey-error`); got != refusal.PasskeyRefused.Message() {
			t.Errorf("error shown %q", got)
		}
		logs := b.ph.Logs.String()
		if !strings.Contains(logs, `reason="passkey refused"`) || !strings.Contains(strings.ToLower(logs), "origin") {
			t.Errorf("relayed answer not refused for its origin: %s", logs)
		}
		if u := browserUser(t, b.ctx, b.ph); u.Name != "" {
			t.Errorf("the relay signed in %q", u.Name)
		}
	})

	t.Run("wrong RP id", func(t *testing.T) {
		// The same service reached at another address (127.0.0.1, not
		// public_url's localhost): the RP id is not this page's, so the
		// browser offers no passkey and sends nothing.
		before := strings.Count(b.ph.Logs.String(), "auth refused")
		b.run(chromedp.Navigate(b.ph.Srv.URL + "/login"))
		b.usePasskey(`#passkey-error`)
		if got := b.text(`#passkey-error`); !strings.Contains(got, "not the one the service is configured for") {
			t.Errorf("error shown %q", got)
		}
		if after := strings.Count(b.ph.Logs.String(), "auth refused"); after != before {
			t.Errorf("%d refusals logged: the browser should have sent nothing", after-before)
		}
	})

	t.Run("cloned credential", func(t *testing.T) {
		b.setSignCount(0)
		b.run(chromedp.Navigate(b.ph.base + "/login"))
		b.usePasskey(`#passkey-error`)
		if got := b.text(`#passkey-error`); got != refusal.PasskeyRefused.Message() {
			t.Errorf("error shown %q", got)
		}
		b.screenshot("login-passkey-refused", `#passkey-error`, `#passkey-sign-in`)
		if logs := b.ph.Logs.String(); !strings.Contains(logs, `reason="passkey sign count did not increase"`) || !strings.Contains(logs, "user=alice") ||
			!strings.Contains(logs, `(credential `) {
			t.Errorf("clone not logged with its user and credential: %s", logs)
		}
		if u := browserUser(t, b.ctx, b.ph); u.Name != "" {
			t.Errorf("a clone signed in %q", u.Name)
		}
		// The count moves on past the stored one: the passkey works again.
		b.setSignCount(1000)
		b.run(chromedp.Navigate(b.ph.base + "/login"))
		b.usePasskey(`table.backups`)
	})
}

// TestBrowserPasskeyRemove removes a passkey from the page; the
// authenticator still holds it, the service no longer takes it.
func TestBrowserPasskeyRemove(t *testing.T) {
	b := newPKBrowser(t, login.SecondFactorOptional)
	b.password("alice", "/", `table.backups`)
	b.register("Laptop")
	b.run(chromedp.Click(chromedp.CSS(`#passkey-list button`)), chromedp.WaitVisible(chromedp.CSS(`#passkey-none`)))
	if got := b.text(`#passkey-notice`); got != msgPasskeyRemoved {
		t.Errorf("notice %q", got)
	}
	if keys := b.stored(); len(keys) != 0 {
		t.Fatalf("%d passkeys left", len(keys))
	}
	b.signOut()
	b.usePasskey(`#passkey-error`)
	if u := browserUser(t, b.ctx, b.ph); u.Name != "" {
		t.Errorf("a removed passkey signed in %q", u.Name)
	}
	// Without a factor left, the password alone signs in (optional).
	b.password("alice", "/", `table.backups`)
}

// TestBrowserPasskeyEnrolRequired enrols with a passkey instead of an
// app when a second factor is required: the recovery codes are shown
// once, the session names the passkey, and the next sign-in asks for it.
func TestBrowserPasskeyEnrolRequired(t *testing.T) {
	b := newPKBrowser(t, login.SecondFactorRequired)
	b.password("bob", "/", `#passkey-name`)
	if u := location(t, b.ctx); u.Path != secondfactor.EnrolPath {
		t.Fatalf("after the password at %s, want the enrolment", u)
	}
	b.screenshot("enrol-with-passkey", `#totp-secret`, `#passkey-name`, `#passkey-add button`)
	b.run(
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Phone"),
		chromedp.Click(chromedp.CSS(`#passkey-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-recovery li`)),
	)
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#passkey-recovery li").length`))
	if err != nil || n != factors.RecoveryCount {
		t.Errorf("%d recovery codes shown (%v), want %d", n, err, factors.RecoveryCount)
	}
	b.screenshot("enrol-passkey-recovery", `#passkey-recovery`, `#passkey-continue`)
	shown, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`[...document.querySelectorAll(".card > *")].filter(e => e.getClientRects().length > 0).length`))
	if err != nil || shown != 2 {
		t.Errorf("%d parts of the card shown besides the codes (%v), want the heading and the codes only", shown, err)
	}
	if u := browserUser(t, b.ctx, b.ph); u.Name != "bob" || u.SecondFactor != secondfactor.SecondFactorPasskey {
		t.Errorf("signed in as %q with %q", u.Name, u.SecondFactor)
	}
	b.run(chromedp.Click(chromedp.CSS(`#passkey-continue`)), chromedp.WaitVisible(chromedp.CSS(`table.backups`)))
	b.signOut()
	b.password("bob", "/", `#passkey-sign-in`)
	b.usePasskey(`table.backups`)
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
	u, ok, err := ph.P.Identify(req)
	if err != nil || !ok {
		return auth.User{}
	}
	return u
}
