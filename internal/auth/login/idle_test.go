package login_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

// poll is a page's background request, as fetch() sends it.
func poll(b *logintest.Browser, path string) int {
	b.T.Helper()
	return getWith(b, path, http.Header{"Sec-Fetch-Mode": {"cors"}, "Sec-Fetch-Dest": {"empty"}, "Sec-Fetch-Site": {"same-origin"}})
}

// navigate is a person opening a page.
func navigate(b *logintest.Browser, path string) int {
	b.T.Helper()
	return getWith(b, path, http.Header{"Accept": {"text/html"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-Site": {"none"}})
}

// getWith fetches path with the request headers h and returns the status.
func getWith(b *logintest.Browser, path string, h http.Header) int {
	b.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.H.Srv.URL+path, nil)
	req.Header = h
	return b.Do(req).Status
}

// TestIdleTimeoutCountsNavigations: through the program's handler, with
// an injected clock, a page polling every 60 seconds alone lets the
// session end at its idle deadline (30 minutes after sign-in); one
// navigation at minute 10 moves the deadline to minute 40; with
// idle_renewal = any the poller keeps it alive, as before.
func TestIdleTimeoutCountsNavigations(t *testing.T) {
	for _, tc := range []struct {
		name       string
		renewal    session.Renewal
		navigateAt int // minute of one navigation, 0 for none
		lastMinute int // the last minute a poll is admitted
	}{
		{"poller alone", session.RenewNavigation, 0, 29},
		{"one navigation", session.RenewNavigation, 10, 39},
		{"idle_renewal = any", session.RenewAny, 0, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := logintest.New(t, func(c *login.Config) { c.IdleRenewal = tc.renewal })
			b := h.Browser()
			b.MustLogin("alice")
			for minute := 1; minute <= 60; minute++ {
				h.Clock.Advance(time.Minute)
				if minute == tc.navigateAt {
					if got := navigate(b, "/"); got != http.StatusOK {
						t.Fatalf("navigation at minute %d: %d", minute, got)
					}
					continue
				}
				got := poll(b, "/api/backups")
				want := http.StatusOK
				if minute > tc.lastMinute {
					want = http.StatusUnauthorized
				}
				if got != want {
					t.Fatalf("poll at minute %d: %d, want %d", minute, got, want)
				}
				if want == http.StatusUnauthorized {
					return
				}
			}
		})
	}
}

// TestLogoutPageInCatalogMode: GET /logout shows the sign-out form to a
// signed-in browser, its POST honours a safe next, and the signed-out page
// offers to sign in again.
func TestLogoutPageInCatalogMode(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	b.MustLogin("alice")
	page := b.Get("/logout?rd="+url.QueryEscape("/api/backups"), true)
	tok, ok := logintest.Field(page.Body, "csrf_token")
	if page.Status != http.StatusOK || !ok || !strings.Contains(page.Body, "Signed in as <strong>alice</strong>") {
		t.Fatalf("GET /logout: %d\n%s", page.Status, page.Body)
	}
	next, _ := logintest.Field(page.Body, "next")
	r := b.Post("/logout", url.Values{"csrf_token": {tok}, "next": {next}})
	if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/api/backups" {
		t.Fatalf("POST /logout: %d %q", r.Status, r.Header.Get("Location"))
	}
	if got := b.APIStatus(); got != http.StatusUnauthorized {
		t.Fatalf("API after signing out: %d", got)
	}
	// Signed out, /logout says so and offers the sign-in page.
	page = b.Get("/logout", true)
	if !strings.Contains(page.Body, "You are not signed in.") || !strings.Contains(page.Body, `href="/login?next=%2F" id="sign-in-again">Sign in again`) {
		t.Fatalf("GET /logout signed out: %d\n%s", page.Status, page.Body)
	}
	// The login page after a sign-out.
	page = b.Get("/login?signed_out=1", true)
	if !strings.Contains(page.Body, "You have been signed out.") || !strings.Contains(page.Body, "<h1>Sign in again</h1>") {
		t.Fatalf("signed-out login page:\n%s", page.Body)
	}
}
