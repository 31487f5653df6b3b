package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
)

// TestBrowserPasskeyOnLANName: backupweb alone on a LAN name
// (backups.lan) with a certificate from the household's own CA, and a
// Chromium that resolves the name to the machine and trusts that CA as a
// person adds it (an NSS database in its HOME): a passkey is enrolled
// and then signs in alone. WebAuthn runs only on a page whose certificate
// is valid, so this fails unless the browser trusts the certificate; a
// browser that does not trust the CA is refused the page.
func TestBrowserPasskeyOnLANName(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := ca.Valid(t, "backups.lan").Write(t, dir)
	users := addUsers(t, dir, "alice")
	backups := filepath.Join(dir, "backups")
	must(t, os.Mkdir(backups, 0o700))
	must(t, os.WriteFile(filepath.Join(backups, "nightly.tar.gz"), []byte("backup"), 0o600))
	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("[server]\nlisten = 127.0.0.1:%d\ntls_cert = %s\ntls_key = %s\nstate_dir = %s\naccess_log = false\n[backups]\ndir = %s\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = %s\nsecond_factor = optional\npasskey_login = true\n",
		port, certFile, keyFile, filepath.Join(dir, "state"), backups, users)
	_, log := serveInProcess(t, dir, conf, nil)
	// public_url is left to its default: the certificate's name on the
	// listening port, the origin passkeys are bound to.
	base := fmt.Sprintf("https://backups.lan:%d", port)

	ctx := browsertest.New(t, browsertest.MapHosts("127.0.0.1", "backups.lan"), browsertest.TrustCA(t, ca.PEM))
	authn := browsertest.AddAuthenticator(t, ctx)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%v; backupweb logged:\n%s", err, log)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}

	// Enrol: the password, then again on the way to the passkeys page.
	run(
		chromedp.Navigate(base+"/login"),
		browsertest.SignIn("alice", "pw-alice"),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
	)
	secure, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.isSecureContext && location.origin === `+fmt.Sprintf("%q", base)))
	if err != nil || !secure {
		t.Fatalf("the page at %s is not a secure context of that origin (%v)", base, err)
	}
	run(
		chromedp.Navigate(base+"/_backupweb/reauth?next="+url.QueryEscape("/_backupweb/passkeys")),
		chromedp.WaitVisible(chromedp.CSS(`#reauth-form`)),
		chromedp.SendKeys(chromedp.CSS(`#password`), "pw-alice"),
		chromedp.Click(chromedp.CSS(`#reauth-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-name`)),
		chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Laptop"),
		chromedp.Click(chromedp.CSS(`#passkey-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`#passkey-notice`)),
	)
	if got := text(`#passkey-notice`); got != "The passkey was added." {
		t.Fatalf("after adding the passkey: %q\n%s", got, log)
	}
	creds, err := chromedp.Call(ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams{AuthenticatorID: authn})
	if err != nil || len(creds.Credentials) != 1 || creds.Credentials[0].RpID != "backups.lan" {
		t.Fatalf("the authenticator's credentials: %v %+v", err, creds)
	}

	// Signed out, the passkey alone signs in from the login page.
	run(
		chromedp.Navigate(base+"/"),
		chromedp.Click(chromedp.CSS(`form.logout button`)),
		chromedp.WaitVisible(chromedp.CSS(`#username`)),
		chromedp.Click(chromedp.CSS(`#passkey-sign-in`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
		chromedp.Navigate(base+"/api/me"),
	)
	if me := text(`body`); !strings.Contains(me, `"alice"`) {
		t.Fatalf("/api/me after the passkey sign-in: %s", me)
	}

	// Without the CA in its trust store, the same browser setup is refused
	// the page: the trust above is what made it a secure origin.
	plain := browsertest.New(t, browsertest.MapHosts("127.0.0.1", "backups.lan"))
	if err := chromedp.Do(plain, chromedp.Navigate(base+"/login")); err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
		t.Errorf("a browser that does not trust the CA opened %s: %v", base, err)
	}
}
