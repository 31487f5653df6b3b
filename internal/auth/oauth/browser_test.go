package oauth

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
)

// TestBrowserSignIn has Chromium go through the whole redirect dance: the
// catalog sends it to /oauth/login, which sends it to the identity
// provider's login page; the test types the credentials there, and the
// provider's redirect to the callback lands it on the catalog, signed in.
// Then it logs out: the service ends its session and sends the browser to
// the provider's end_session_endpoint, which ends the provider's and sends
// it back to post_logout_redirect_uri, here the signed-out page.
func TestBrowserSignIn(t *testing.T) {
	ctx := browsertest.New(t)
	w := newWorld(t)
	s := w.services["google"]
	s.use(Config{Provider: "google", Issuer: w.op.Issuer, ClientID: "client-google", ClientSecret: "secret-google",
		Rule: Rule{Domains: []string{"example.com"}}, PostLogoutURL: s.URL + SignedOutPath}, auth.Deps{})

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("browser: %v\nlog:\n%s", err, s.logs.String())
		}
	}
	text := func(a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		must(err)
		return v
	}
	must(chromedp.Do(ctx,
		chromedp.Navigate(s.URL+"/?view=all"),
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, "alice"),
		chromedp.SendKeys(`#password`, opPassword),
		chromedp.Click(`button[type=submit]`),
		chromedp.WaitVisible(`.who strong`),
	))
	landed, who := text(chromedp.Location()), text(chromedp.Text(`.who strong`))
	// The signed-out page has no logout form; wait for the catalog's to go.
	must(chromedp.Do(ctx,
		chromedp.Click(`form.logout button`),
		chromedp.WaitNotPresent(`form.logout`),
		chromedp.WaitVisible(`h1`),
	))
	afterLogout, heading := text(chromedp.Location()), text(chromedp.Text(`h1`))
	if landed != s.URL+"/?view=all" {
		t.Errorf("landed on %s, want the catalog at /?view=all", landed)
	}
	if who != "alice@example.com" {
		t.Errorf("signed in as %q", who)
	}
	if afterLogout != s.URL+SignedOutPath || !strings.Contains(heading, "Signed out") {
		t.Errorf("after logout: %s %q", afterLogout, heading)
	}
}
