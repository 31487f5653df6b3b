package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/browsertest"
)

// pageUpstream is a guarded application that shows who it was sent and
// the path it was asked for, on a loopback port; stop closes it.
func pageUpstream(t *testing.T) (addr string, stop func()) {
	t.Helper()
	up := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Guarded</title><h1 id=guarded>Guarded interface</h1><p id=user>%s</p><p id=path>%s</p><p><a id=signout href=\"/logout?rd=%%2Fapp%%2Fafter\">Sign out</a></p>",
			r.Header.Get("X-Forwarded-User"), r.URL.RequestURI())
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go up.Serve(ln)
	t.Cleanup(func() { up.Close() })
	return ln.Addr().String(), func() { up.Close() }
}

// startProxyMode serves the documentation's built-in proxy configuration in front
// of upstream, with extra appended (a [ui] section), and returns its URL.
func startProxyMode(t *testing.T, upstream, extra string) string {
	t.Helper()
	addr, _ := serveGuardingDoc(t, "as the reverse proxy itself:", func(ini, _ string) string {
		return strings.ReplaceAll(ini, "http://127.0.0.1:5000", "http://"+upstream) + "\n" + extra
	})
	return "http://" + addr
}

// signInAs fills the login form the browser is on and waits for the
// guarded page.
func signInAs(ctx context.Context) error {
	return chromedp.Do(ctx,
		browsertest.SignIn("alice", "alice-pw"),
		chromedp.WaitVisible(chromedp.CSS("#guarded")),
	)
}

// signOutThrough drives a browser through front (nginx, or backupweb as
// the proxy): sign in, follow the application's own "Sign out" link to
// /logout?rd=..., confirm, land where rd said (signed out, so on the login
// page with next), sign in again there, then sign out without rd and see
// the signed-out page offer "Sign in again". shot, when set, is called on
// the confirmation and login pages.
func signOutThrough(t *testing.T, ctx context.Context, front string, shot func(name string)) {
	t.Helper()
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(front+"/app/page?x=1")); err != nil {
		t.Fatal(err)
	}
	if shot != nil {
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#username"))); err != nil {
			t.Fatal(err)
		}
		shot("login")
	}
	if err := signInAs(ctx); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// The application links to /logout; the page asks for confirmation.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#sign-out"))); err != nil {
		t.Fatalf("the sign-out page: %v", err)
	}
	if who := text("#signed-in-as"); who != "Signed in as alice." {
		t.Fatalf("sign-out page says %q", who)
	}
	if shot != nil {
		shot("logout-confirm")
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#sign-out button")), chromedp.WaitVisible(chromedp.CSS("#username"))); err != nil {
		t.Fatalf("after signing out: %v", err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.HasSuffix(loc, "/login?next=%2Fapp%2Fafter") {
		t.Fatalf("after signing out with rd=/app/after the browser is at %s, want the login page with next=/app/after", loc)
	}
	// Signed out for real: the application is out of reach.
	if err := chromedp.Do(ctx, chromedp.Navigate(front+"/app/page?x=2"), chromedp.WaitVisible(chromedp.CSS("#username"))); err != nil {
		t.Fatalf("the application after signing out: %v", err)
	}
	if err := signInAs(ctx); err != nil {
		t.Fatalf("sign in again: %v", err)
	}
	if p := text("#path"); p != "/app/page?x=2" {
		t.Fatalf("signed in again at %q", p)
	}
	// Without rd: the signed-out page, which offers to sign in again.
	if err := chromedp.Do(ctx, chromedp.Navigate(front+"/logout"), chromedp.WaitVisible(chromedp.CSS("#sign-out")),
		chromedp.Click(chromedp.CSS("#sign-out button")), chromedp.WaitVisible(chromedp.CSS("#login-notice"))); err != nil {
		t.Fatalf("sign out without rd: %v", err)
	}
	if n, h := text("#login-notice"), text("h1"); n != "You have been signed out." || h != "Sign in again" {
		t.Fatalf("signed-out page: notice %q, heading %q", n, h)
	}
}

// TestBrowserSignOutThroughProxy: a person signs out of an application
// that backupweb guards as its reverse proxy, from a link in the
// application; the pages name the application ([ui] product_name), which a
// screenshot check of the login, sign-out and error pages confirms.
func TestBrowserSignOutThroughProxy(t *testing.T) {
	upstream, stopUpstream := pageUpstream(t)
	front := startProxyMode(t, upstream, "[ui]\nproduct_name = Syncthing\n")
	ctx := browsertest.New(t)
	signOutThrough(t, ctx, front, func(name string) { brandedScreenshot(t, ctx, name, "Syncthing") })
	// An error page: the application has gone away (502).
	if err := signInAs(ctx); err != nil {
		t.Fatal(err)
	}
	stopUpstream()
	if err := chromedp.Do(ctx, chromedp.Navigate(front+"/app/gone"), chromedp.WaitVisible(chromedp.CSS("#back"))); err != nil {
		t.Fatalf("error page: %v", err)
	}
	brandedScreenshot(t, ctx, "error", "Syncthing")
	if back, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#back"))); back != "Back to Syncthing" {
		t.Fatalf("error page's link: %q", back)
	}
}

// TestBrowserSignOutThroughNginx: the same, with nginx in front asking
// backupweb through auth_request, as the documentation's snippet has it (which
// routes /logout to backupweb).
func TestBrowserSignOutThroughNginx(t *testing.T) {
	upstream, _ := pageUpstream(t)
	backupweb, _ := guardedSetup(t)
	signOutThrough(t, browsertest.New(t), startNginx(t, testkit.FreeAddr(t), backupweb, upstream), nil)
}

// brandedScreenshot checks that the page the browser shows names product
// in its document title and header bar and says nothing of backups, then
// takes a screenshot and checks that it is a real, non-blank image.
func brandedScreenshot(t *testing.T, ctx context.Context, name, product string) {
	t.Helper()
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || !strings.HasSuffix(title, " · "+product) {
		t.Errorf("%s page: document title %q, want it to end in %q", name, title, " · "+product)
	}
	bar, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".brand")))
	if err != nil || strings.TrimSpace(bar) != product {
		t.Errorf("%s page: header bar %q, want %q", name, bar, product)
	}
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	for _, banned := range []string{"backup", "flask-login", "Log in", "Log out"} {
		if strings.Contains(strings.ToLower(body), strings.ToLower(banned)) {
			t.Errorf("%s page speaks of %q:\n%s", name, banned, body)
		}
	}
	browsertest.Screenshot(t, ctx, name)
}
