// Package browsertest starts a real, headless Chromium for tests that must
// see pages as a browser does: layout, the stylesheet under the
// Content-Security-Policy, forms, cookies.
//
// Tests call New and drive the returned context with chromedp. When no
// browser is installed the test is skipped with a message saying how to get
// one, unless BACKUPWEB_REQUIRE_TOOLS=1 (as in CI), which turns the skip into
// a failure so a missing browser cannot pass unnoticed.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"

	"github.com/chromedp/chromedp"
)

// Timeout bounds the whole browser run of one test: starting Chromium
// and every action the test runs on the context New returns. It is a
// bound on a browser that hangs, not a speed check: a test that follows
// every link of a catalog takes about 30 s alone, and `go test ./...`
// and its -race run load the browser beside every other package on two
// cores.
const Timeout = 3 * time.Minute

// candidates are the browser commands looked for on PATH, in order, after
// $BACKUPWEB_CHROMIUM.
var candidates = []string{"chromium", "chromium-browser", "google-chrome"}

// RequireTools reports whether BACKUPWEB_REQUIRE_TOOLS=1: tests needing an
// outside tool then fail instead of skipping when it is missing.
func RequireTools() bool { return toolstest.RequireTools() }

// Find returns the path of the browser to use: $BACKUPWEB_CHROMIUM when set
// (a path or a command name), else the first of chromium, chromium-browser
// and google-chrome found on PATH. ok is false when there is none.
func Find() (path string, ok bool) {
	if env := os.Getenv("BACKUPWEB_CHROMIUM"); env != "" {
		p, err := exec.LookPath(env)
		return p, err == nil
	}
	for _, name := range candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// New returns a chromedp context for t with a fresh headless browser
// already started, so a browser that cannot start fails here with a clear
// message rather than in the test's first action. The browser runs without
// sandbox (CI runs as root), without GPU, QUIC, proxy, background
// networking, component updates or sync, in a user-data directory of its
// own under t.TempDir(). The context expires after Timeout; t.Cleanup closes
// the browser. more adds to or replaces those options (MapHosts, TrustCA).
//
// Without a browser, New skips t, or fails it when RequireTools().
func New(t testing.TB, more ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path, ok := Find()
	if !ok {
		const msg = "chromium not found; install Debian's chromium package or set BACKUPWEB_CHROMIUM"
		if RequireTools() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	opts = append(opts, more...)
	ctx, cancelTimeout := context.WithTimeout(context.Background(), Timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		// Close the browser gracefully, then free the rest; the
		// user-data directory is removed after, by t.TempDir's cleanup.
		chromedp.Cancel(bctx)
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	return bctx
}

// SignIn is the steps of a person signing in through backupweb's login
// form, on the page the browser is on or going to: they wait for the form,
// type user and password, press its button, and wait until the form is
// gone, so that what the test waits for next is looked for on the page
// the sign-in led to, never on the login page (which may show the same
// passkey button as the second step).
func SignIn(user, password string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(`#username`)),
		chromedp.SendKeys(chromedp.CSS(`#username`), user),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#username`)),
	)
}
