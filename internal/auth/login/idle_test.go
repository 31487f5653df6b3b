package login

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/session"
)

// poll is a page's background request, as fetch() sends it.
func (b *browser) poll(path string) int {
	b.t.Helper()
	return b.getWith(path, http.Header{"Sec-Fetch-Mode": {"cors"}, "Sec-Fetch-Dest": {"empty"}, "Sec-Fetch-Site": {"same-origin"}})
}

// navigate is a person opening a page.
func (b *browser) navigate(path string) int {
	b.t.Helper()
	return b.getWith(path, http.Header{"Accept": {"text/html"}, "Sec-Fetch-Mode": {"navigate"}, "Sec-Fetch-Dest": {"document"}, "Sec-Fetch-Site": {"none"}})
}

// getWith fetches path with the request headers h and returns the status.
func (b *browser) getWith(path string, h http.Header) int {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.h.srv.URL+path, nil)
	req.Header = h
	return b.do(req).status
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
			h := newHarness(t, func(c *Config) { c.IdleRenewal = tc.renewal })
			b := h.browser()
			b.mustLogin("alice")
			for minute := 1; minute <= 60; minute++ {
				h.clock.Advance(time.Minute)
				if minute == tc.navigateAt {
					if got := b.navigate("/"); got != http.StatusOK {
						t.Fatalf("navigation at minute %d: %d", minute, got)
					}
					continue
				}
				got := b.poll("/api/backups")
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
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	page := b.get("/logout?rd="+url.QueryEscape("/api/backups"), true)
	tok, ok := field(page.body, "csrf_token")
	if page.status != http.StatusOK || !ok || !strings.Contains(page.body, "Signed in as <strong>alice</strong>") {
		t.Fatalf("GET /logout: %d\n%s", page.status, page.body)
	}
	next, _ := field(page.body, "next")
	r := b.post("/logout", url.Values{"csrf_token": {tok}, "next": {next}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/api/backups" {
		t.Fatalf("POST /logout: %d %q", r.status, r.header.Get("Location"))
	}
	if got := b.apiStatus(); got != http.StatusUnauthorized {
		t.Fatalf("API after signing out: %d", got)
	}
	// Signed out, /logout says so and offers the sign-in page.
	page = b.get("/logout", true)
	if !strings.Contains(page.body, "You are not signed in.") || !strings.Contains(page.body, `href="/login?next=%2F" id="sign-in-again">Sign in again`) {
		t.Fatalf("GET /logout signed out: %d\n%s", page.status, page.body)
	}
	// The login page after a sign-out.
	page = b.get("/login?signed_out=1", true)
	if !strings.Contains(page.body, "You have been signed out.") || !strings.Contains(page.body, "<h1>Sign in again</h1>") {
		t.Fatalf("signed-out login page:\n%s", page.body)
	}
}
