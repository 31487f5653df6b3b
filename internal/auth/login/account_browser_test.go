package login_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// TestBrowserAccountPage drives a real Chromium through the account page:
// two sessions listed (this one marked), a token refused with a wrong
// password, made with the right one and shown once, used by a script,
// revoked, and every other session ended.
func TestBrowserAccountPage(t *testing.T) {
	ctx := browsertest.New(t)
	h := logintest.New(t, nil)
	other := h.Browser()
	other.MustLogin("alice")
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
		return v
	}
	scriptStatus := func(token string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", h.Srv.URL+"/api/backups", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	run(chromedp.Navigate(h.Srv.URL+login.AccountPath), browsertest.SignIn("alice", "alice-pw"), chromedp.WaitVisible(chromedp.CSS(`#session-list`)))
	sessions := text(`#session-list`)
	if strings.Count(sessions, "signed in") != 2 || strings.Count(sessions, "(this session)") != 1 {
		t.Fatalf("sessions listed:\n%s", sessions)
	}
	if !strings.Contains(text(`#token-none`), "no tokens") {
		t.Fatal("a new user has tokens")
	}
	browsertest.Screenshot(t, ctx, "account")

	run(
		chromedp.SendKeys(chromedp.CSS(`#token-label`), "nightly fetch"),
		chromedp.SendKeys(chromedp.CSS(`#token-password`), "not-her-password"),
		chromedp.Click(chromedp.CSS(`#token-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#account-error`)),
	)
	if got := text(`#account-error`); got != wrongPasswordNotice {
		t.Fatalf("wrong password: %q", got)
	}
	run(
		chromedp.SetValue(chromedp.CSS(`#token-label`), "nightly fetch"),
		chromedp.SendKeys(chromedp.CSS(`#token-password`), "alice-pw"),
		chromedp.Click(chromedp.CSS(`#token-create button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-token-value`)),
	)
	token := strings.TrimSpace(text(`#new-token-value`))
	if !tokens.Wellformed(token) || !strings.Contains(text(`#token-list`), "nightly fetch") {
		t.Fatalf("token shown %q, list %q", token, text(`#token-list`))
	}
	browsertest.Screenshot(t, ctx, "account-token")
	if got := scriptStatus(token); got != http.StatusOK {
		t.Fatalf("the new token: %d", got)
	}

	run(chromedp.Click(chromedp.CSS(`#token-list button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#token-none`)))
	if got := scriptStatus(token); got != http.StatusUnauthorized {
		t.Fatalf("the revoked token: %d", got)
	}

	if other.APIStatus() != http.StatusOK {
		t.Fatal("the other session is not signed in")
	}
	run(chromedp.Click(chromedp.CSS(`#end-others button`)))
	// The page before showed a notice too: wait for the answer's address.
	testkit.WaitUntil(t, 10*time.Second, func() bool { return location(t, ctx).Query().Has("ended") },
		func() string { return "the browser did not reach the page after ending the sessions" })
	run(chromedp.WaitVisible(chromedp.CSS(`#account-notice`)))
	if got := other.APIStatus(); got != http.StatusUnauthorized {
		t.Fatalf("the other session after end all others: %d\n%s", got, h.Logs)
	}
	if got := strings.Count(text(`#session-list`), "signed in"); got != 1 {
		t.Fatalf("%d sessions left, want this one", got)
	}
	browsertest.Screenshot(t, ctx, "account-ended")
	for _, want := range []string{"auth token created", "auth token revoked", "auth token used from a new address"} {
		if !strings.Contains(h.Logs.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if strings.Contains(h.Logs.String(), token) {
		t.Fatal("the token reached the log")
	}
}

// wrongPasswordNotice is what the account page says when a token is asked
// for with a wrong password.
const wrongPasswordNotice = "The password is not right; no token was made."
