package secondfactor_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// factorBrowser drives one Chromium over a harness's server.
type factorBrowser struct {
	T   *testing.T
	ctx context.Context
	h   *harness
}

func (f factorBrowser) run(steps ...chromedp.Action[chromedp.Void]) {
	f.T.Helper()
	if err := chromedp.Do(f.ctx, steps...); err != nil {
		f.T.Fatal(err)
	}
}

func (f factorBrowser) text(sel string) string {
	f.T.Helper()
	v, err := chromedp.Run(f.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		f.T.Fatal(err)
	}
	return strings.TrimSpace(v)
}

// password signs in with the login form, from a page that needs it.
func (f factorBrowser) password(user, next string) {
	f.T.Helper()
	f.run(
		chromedp.Navigate(f.h.Srv.URL+next), browsertest.SignIn(user, logintest.Passwords[user]),
	)
}

// screenshot checks that every selector in visible is on the page with a
// size, takes a full-page screenshot, checks that it is a real, non-blank
// image, and saves it under the test's folder (and BACKUPWEB_SCREENSHOT_DIR
// when set).
func (f factorBrowser) screenshot(name string, visible ...string) {
	t := f.T
	t.Helper()
	// The page may still be arriving (a form's answer): wait until it and
	// its stylesheet have loaded, as a person would see it.
	if _, err := chromedp.Run(f.ctx, chromedp.Poll[bool](`document.readyState === "complete" && document.styleSheets.length > 0`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Errorf("%s page: not loaded with its stylesheet: %v", name, err)
	}
	for _, sel := range visible {
		ok, err := chromedp.Run(f.ctx, chromedp.Evaluate[bool](`(() => { const e = document.querySelector(`+jsString(sel)+`); if (!e) return false; const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; })()`))
		if err != nil || !ok {
			t.Errorf("%s page: %s is not visible (%v)", name, sel, err)
		}
	}
	sheets, err := chromedp.Run(f.ctx, chromedp.Evaluate[int](`document.styleSheets.length`))
	if err != nil || sheets != 1 {
		t.Errorf("%s page: %d stylesheets (%v), want the one", name, sheets, err)
	}
	browsertest.Screenshot(t, f.ctx, name)
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// TestBrowserSecondFactorTOTP signs in with a password and a TOTP code in
// Chromium: the step's page, a wrong code, the right one, the catalog.
func TestBrowserSecondFactorTOTP(t *testing.T) {
	f := factorBrowser{T: t, ctx: browsertest.New(t), h: newFactorHarness(t, login.SecondFactorOptional, nil)}
	f.h.Enrol("alice")
	f.password("alice", "/?view=all")
	f.run(chromedp.WaitVisible(chromedp.CSS(`#code`)))
	if u := location(t, f.ctx); u.Path != secondfactor.SecondFactorPath || u.Query().Get("next") != "/?view=all" {
		t.Fatalf("after the password at %s", u)
	}
	if got := f.text(`#second-factor-user`); got != "alice" {
		t.Errorf("signing in as %q", got)
	}
	f.screenshot("second-factor", `#code`, `#code-form button`, `.brand`)
	f.run(
		chromedp.SendKeys(chromedp.CSS(`#code`), "000000"),
		chromedp.Click(chromedp.CSS(`#code-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`#second-factor-error`)),
	)
	if got := f.text(`#second-factor-error`); got != refusal.WrongCode.Message() {
		t.Errorf("error %q, want %q", got, refusal.WrongCode.Message())
	}
	f.screenshot("second-factor-wrong", `#second-factor-error`, `#code`)
	f.run(
		chromedp.SendKeys(chromedp.CSS(`#code`), f.h.Code()),
		chromedp.Click(chromedp.CSS(`#code-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
	)
	if u := location(t, f.ctx); u.RequestURI() != "/?view=all" {
		t.Errorf("signed in at %s, want next /?view=all", u)
	}
}

// TestBrowserSecondFactorEnrolRequired enrols a user in Chromium when a
// second factor is required: the QR code and secret, the code from the
// secret, the ten recovery codes, then the page asked for.
func TestBrowserSecondFactorEnrolRequired(t *testing.T) {
	f := factorBrowser{T: t, ctx: browsertest.New(t), h: newFactorHarness(t, login.SecondFactorRequired, nil)}
	f.password("bob", "/")
	f.run(chromedp.WaitVisible(chromedp.CSS(`#totp-secret`)))
	if u := location(t, f.ctx); u.Path != secondfactor.EnrolPath {
		t.Fatalf("after the password at %s, want the enrolment", u)
	}
	f.screenshot("enrol", `svg.qr`, `#totp-secret`, `#code`, `#enrol-form button`)
	// Trying to go around it: back to the enrolment.
	f.run(chromedp.Navigate(f.h.Srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#username`)))
	f.password("bob", "/")
	f.run(chromedp.WaitVisible(chromedp.CSS(`#totp-secret`)))
	secret := f.text(`#totp-secret`)
	code, err := factors.TOTPCode(secret, f.h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.run(
		chromedp.SendKeys(chromedp.CSS(`#code`), code),
		chromedp.Click(chromedp.CSS(`#enrol-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`#recovery-codes`)),
	)
	n, err := chromedp.Run(f.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#recovery-codes li").length`))
	if err != nil || n != factors.RecoveryCount {
		t.Errorf("%d recovery codes shown (%v), want %d", n, err, factors.RecoveryCount)
	}
	f.screenshot("recovery-codes", `#recovery-codes`, `#enrol-continue`)
	f.run(chromedp.Click(chromedp.CSS(`#enrol-continue`)), chromedp.WaitVisible(chromedp.CSS(`table.backups`)))
}

// TestBrowserSecondFactorRecovery signs in with a recovery code instead
// of the lost device's code.
func TestBrowserSecondFactorRecovery(t *testing.T) {
	f := factorBrowser{T: t, ctx: browsertest.New(t), h: newFactorHarness(t, login.SecondFactorOptional, nil)}
	codes := f.h.Enrol("alice")
	f.password("alice", "/")
	f.run(
		chromedp.WaitVisible(chromedp.CSS(`#code`)),
		chromedp.SendKeys(chromedp.CSS(`#code`), codes[0]),
		chromedp.Click(chromedp.CSS(`#code-form button`)),
		chromedp.WaitVisible(chromedp.CSS(`table.backups`)),
	)
	f.screenshot("signed-in-with-recovery", `table.backups`)
	if rec, _ := f.h.P.Factors().Lookup("alice"); len(rec.Recovery) != factors.RecoveryCount-1 {
		t.Errorf("%d recovery codes left", len(rec.Recovery))
	}
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
