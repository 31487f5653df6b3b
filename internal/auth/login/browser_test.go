package login_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// TestBrowserLoginLogout drives a real Chromium through the pages: sent to
// the login page, a wrong password, the right one, the catalog, logout.
func TestBrowserLoginLogout(t *testing.T) {
	ctx := browsertest.New(t)
	h := logintest.New(t, nil)
	run := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	read := func(a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	run(chromedp.Navigate(h.Srv.URL+"/?view=all"), chromedp.WaitVisible(chromedp.CSS(`#username`)))
	if u := location(t, ctx); u.Path != "/login" || u.Query().Get("next") != "/?view=all" {
		t.Fatalf("not sent to the login page with next: %s", u)
	}

	run(
		chromedp.SendKeys(chromedp.CSS(`#username`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "not-her-password"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-error`)),
	)
	if alert := read(chromedp.Text(chromedp.CSS(`#login-error`))); strings.TrimSpace(alert) != refusal.BadCredentials.Message() {
		t.Errorf("error shown %q, want %q", alert, refusal.BadCredentials.Message())
	}

	run(
		chromedp.SetValue(chromedp.CSS(`#username`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`#password`), "alice-pw"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
	)
	if text := read(chromedp.Text(chromedp.CSS(`main`))); !strings.Contains(text, "nightly.tar.gz") {
		t.Errorf("catalog does not list the backup: %q", text)
	}
	if u := location(t, ctx); u.RequestURI() != "/?view=all" {
		t.Errorf("after login at %s, want next /?view=all", u)
	}

	run(chromedp.Click(chromedp.CSS(`form.logout button`)), chromedp.WaitVisible(chromedp.CSS(`#username`)))
	if u := location(t, ctx); u.Path != "/login" {
		t.Errorf("after logout at %s, want the login page", u)
	}
	run(chromedp.Navigate(h.Srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#username`)))
}

// location returns the browser's current URL.
func location(t *testing.T, ctx context.Context) *url.URL {
	t.Helper()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
