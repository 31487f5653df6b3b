package proxy_test

import (
	"bufio"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/testkit/wstest"
)

// closeLimit is how soon after its sign-in ends a live connection must be
// closed.
const closeLimit = time.Second

// withCookies adds c's cookies for base to a request.
func withCookies(c *http.Client, base string) func(*http.Request) {
	return func(r *http.Request) {
		req, _ := http.NewRequest("GET", base+"/", nil)
		for _, ck := range c.Jar.Cookies(req.URL) {
			r.AddCookie(ck)
		}
	}
}

// withJar adds c's cookies for base to r and returns r.
func withJar(r *http.Request, c *http.Client, base string) *http.Request {
	withCookies(c, base)(r)
	return r
}

// logout signs c out at base through POST /logout with the session's CSRF
// token, which the provider's session manager m computes (the page that
// shows it is not what is tested here).
func logout(t *testing.T, m *session.Manager, c *http.Client, base string) {
	t.Helper()
	probe, _ := http.NewRequest("GET", base+"/", nil)
	withCookies(c, base)(probe)
	s, ok, err := m.Load(probe)
	if err != nil || !ok {
		t.Fatalf("no session to log out of: %v", err)
	}
	req, _ := http.NewRequest("POST", base+"/logout", nil)
	req.Header.Set("X-CSRF-Token", m.CSRFToken(s))
	withCookies(c, base)(req)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
}

// TestLiveConnectionsEndWithTheSession opens a real WebSocket (a python
// websockets echo server behind the proxy) and an event stream for a
// signed-in user, then ends the sign-in each way it can end; both must be
// closed, on the client's side and the upstream's, within closeLimit,
// while a connection of a session that goes on stays open.
func TestLiveConnectionsEndWithTheSession(t *testing.T) {
	ws := wstest.StartEcho(t)
	events := startUpstream(t)
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		end  func(t *testing.T, lp *loginProvider, clock *clocktest.Clock, c *http.Client, base string)
		// pages: alice opens a page every 20 minutes for 11 h 40 min
		// first, which keeps the idle deadline away.
		pages bool
		// everyone: the end reaches bob's session too (an expiry).
		everyone bool
	}{
		{"logout", func(t *testing.T, lp *loginProvider, _ *clocktest.Clock, c *http.Client, base string) {
			logout(t, lp.p.Manager(), c, base)
		}, false, false},
		{"user del", func(t *testing.T, lp *loginProvider, _ *clocktest.Clock, _ *http.Client, _ string) {
			writeUsers(t, lp.users, map[string]string{"bob": "pw"})
			lp.p.Reload()
		}, false, false},
		{"user passwd", func(t *testing.T, lp *loginProvider, _ *clocktest.Clock, _ *http.Client, _ string) {
			// No reload here: the user file's poller notices the edit.
			writeUsers(t, lp.users, map[string]string{"alice": "new password", "bob": "pw"})
		}, false, false},
		{"idle expiry", func(t *testing.T, _ *loginProvider, clock *clocktest.Clock, _ *http.Client, _ string) {
			clock.Advance(31 * time.Minute)
		}, false, true},
		{"lifetime expiry", func(t *testing.T, _ *loginProvider, clock *clocktest.Clock, c *http.Client, base string) {
			// The 12-hour lifetime ends the session 21 minutes after its
			// last page: well within the idle timeout.
			clock.Advance(21 * time.Minute)
		}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktest.New(start)
			lp, setup := newLoginSetup(t, map[string]string{"alice": "pw", "bob": "pw"}, auth.Deps{Now: clock.Now})
			gws := guardWith(t, ws.URL, proxy.Options{}, setup)
			alice, bob := jarClient(), jarClient()
			testkit.SignIn(t, alice, testkit.Login{Page: gws.url + "/login", User: "alice", Password: "pw"})
			testkit.SignIn(t, bob, testkit.Login{Page: gws.url + "/login", User: "bob", Password: "pw"})

			conn := wstest.Dial(t, gws.url, "/comms", withCookies(alice, gws.url))
			ws.Wait(t, "open", 5*time.Second)
			other := wstest.Dial(t, gws.url, "/comms", withCookies(bob, gws.url))
			ws.Wait(t, "open", 5*time.Second)
			if err := conn.Echo("before"); err != nil {
				t.Fatal(err)
			}
			// Several rechecks pass while the session is good.
			time.Sleep(3 * proxy.DefaultRecheckInterval)
			if err := conn.Echo("still"); err != nil {
				t.Fatalf("a good session's WebSocket: %v", err)
			}

			if tt.pages {
				// A page every 20 minutes for 11 h 40 min keeps the idle
				// deadline away, and the WebSocket open.
				for range 35 {
					clock.Advance(20 * time.Minute)
					req, _ := http.NewRequest("GET", gws.url+"/page", nil)
					req.Header.Set("Accept", "text/html")
					resp, err := http.DefaultTransport.RoundTrip(withJar(req, alice, gws.url))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusSeeOther || resp.StatusCode == http.StatusUnauthorized {
						t.Fatalf("signed out at %s", clock.Now())
					}
				}
				if err := conn.Echo("after 11 h 40 min"); err != nil {
					t.Fatalf("a session within its lifetime: %v", err)
				}
			}
			tt.end(t, lp, clock, alice, gws.url)
			took := conn.ClosedWithin(t, closeLimit)
			ws.Wait(t, "closed", closeLimit)
			t.Logf("closed %s after the sign-in ended", took)
			if !strings.Contains(gws.logs.String(), "proxy: closed a live connection: its sign-in has ended") {
				t.Errorf("no log line:\n%s", gws.logs)
			}
			if tt.everyone {
				return // bob's session has expired too
			}
			if err := other.Echo("bob goes on"); err != nil {
				t.Errorf("another user's WebSocket: %v", err)
			}
		})
	}

	// A streamed answer (server-sent events) ends the same way.
	t.Run("event stream", func(t *testing.T) {
		lp, setup := newLoginSetup(t, map[string]string{"alice": "pw"}, auth.Deps{})
		g := guardWith(t, events.URL, proxy.Options{}, setup)
		alice := jarClient()
		testkit.SignIn(t, alice, testkit.Login{Page: g.url + "/login", User: "alice", Password: "pw"})
		resp, err := alice.Get(g.url + "/events?id=live")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		events.stream("live") <- "one"
		if line, _ := r.ReadString('\n'); line != "data: one\n" {
			t.Fatalf("first event %q", line)
		}
		r.ReadString('\n')
		logout(t, lp.p.Manager(), alice, g.url)
		done := make(chan error, 1)
		go func() {
			for {
				if _, err := r.ReadString('\n'); err != nil {
					done <- err
					return
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(closeLimit):
			t.Fatal("the event stream was still open after the logout")
		}
	})
}

// TestLiveConnectionsEndOnEveryInstance: two instances share a real Redis;
// a logout on one closes the WebSocket the same session opened through the
// other, through Redis's invalidation of the other's cached copy.
func TestLiveConnectionsEndOnEveryInstance(t *testing.T) {
	ws := wstest.StartEcho(t)
	srv := redistest.Start(t, redistest.Options{})
	users := map[string]string{"alice": "pw"}
	var lps [2]*loginProvider
	var gs [2]guarded
	for i := range gs {
		shared, err := redisstore.Open(redisstore.Options(srv.Config()), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { shared.Close() })
		lp, setup := newLoginSetup(t, users, auth.Deps{Shared: shared})
		gs[i] = guardWith(t, ws.URL, proxy.Options{}, setup)
		lps[i] = lp
	}
	alice := jarClient()
	testkit.SignIn(t, alice, testkit.Login{Page: gs[0].url + "/login", User: "alice", Password: "pw"})
	// The same cookie, presented to the second instance.
	conn := wstest.Dial(t, gs[1].url, "/comms", withCookies(alice, gs[0].url))
	ws.Wait(t, "open", 5*time.Second)
	if err := conn.Echo("through B"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * proxy.DefaultRecheckInterval)
	if err := conn.Echo("still through B"); err != nil {
		t.Fatalf("a good session's WebSocket on B: %v", err)
	}
	logout(t, lps[0].p.Manager(), alice, gs[0].url)
	took := conn.ClosedWithin(t, closeLimit)
	ws.Wait(t, "closed", closeLimit)
	t.Logf("closed on B %s after the logout on A", took)
}

// TestLiveConnectionsEndForOAuth: the same for an oauth session (a real
// OpenID Connect provider in the test): a logout closes its WebSocket.
func TestLiveConnectionsEndForOAuth(t *testing.T) {
	ws := wstest.StartEcho(t)
	var p *oauth.Provider
	var op *oidctest.Provider
	g := guardWith(t, ws.URL, proxy.Options{}, carolOAuth(t, &op, &p))
	c := jarClient()
	signInCarol(t, c, g.url, op).Body.Close()
	conn := wstest.Dial(t, g.url, "/comms", withCookies(c, g.url))
	ws.Wait(t, "open", 5*time.Second)
	if err := conn.Echo("carol"); err != nil {
		t.Fatal(err)
	}
	logout(t, p.Manager(), c, g.url)
	conn.ClosedWithin(t, closeLimit)
	ws.Wait(t, "closed", closeLimit)
}
