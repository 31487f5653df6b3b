package session

import (
	"net/http"
	"testing"
	"time"
)

func TestIsNavigation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    bool
	}{
		{"no fetch metadata (curl, older browsers)", nil, true},
		{"top-level navigation", map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "same-origin"}, true},
		{"navigation, mode only", map[string]string{"Sec-Fetch-Mode": "navigate"}, true},
		{"document, dest only", map[string]string{"Sec-Fetch-Dest": "document"}, true},
		{"fetch", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty", "Sec-Fetch-Site": "same-origin"}, false},
		{"same-origin XHR", map[string]string{"Sec-Fetch-Mode": "same-origin", "Sec-Fetch-Dest": "empty"}, false},
		{"no-cors image", map[string]string{"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, false},
		{"WebSocket by fetch metadata", map[string]string{"Sec-Fetch-Mode": "websocket", "Sec-Fetch-Dest": "websocket"}, false},
		{"WebSocket upgrade without metadata", map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"}, false},
		{"site only (metadata, no mode)", map[string]string{"Sec-Fetch-Site": "same-origin"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := get()
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if got := IsNavigation(r); got != tc.want {
				t.Errorf("IsNavigation = %v, want %v", got, tc.want)
			}
			if !RenewAny.Renews(r) {
				t.Error("RenewAny does not renew")
			}
			if RenewNavigation.Renews(r) != tc.want {
				t.Error("RenewNavigation disagrees with IsNavigation")
			}
		})
	}
}

func TestParseRenewal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Renewal
		ok   bool
	}{
		{"", RenewNavigation, true}, {"navigation", RenewNavigation, true}, {"Any", RenewAny, true},
		{"always", 0, false}, {"navigate", 0, false},
	} {
		got, err := ParseRenewal(tc.in)
		if (err == nil) != tc.ok || tc.ok && got != tc.want {
			t.Errorf("ParseRenewal(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestBackgroundPollerDoesNotKeepSessionAlive: a page that polls its
// server every 60 seconds in the background (as Syncthing's does) is
// admitted at every poll, but by default the session still ends at its
// idle deadline, counted from the last navigation; a navigation renews
// it; idle_renewal = any keeps the old rule, where the poller keeps it
// alive.
func TestBackgroundPollerDoesNotKeepSessionAlive(t *testing.T) {
	const idle = 10 * time.Minute
	poll := func(c *http.Cookie) *http.Request {
		r := get(c)
		r.Header.Set("Sec-Fetch-Mode", "cors")
		r.Header.Set("Sec-Fetch-Dest", "empty")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		return r
	}
	navigate := func(c *http.Cookie) *http.Request {
		r := get(c)
		r.Header.Set("Sec-Fetch-Mode", "navigate")
		r.Header.Set("Sec-Fetch-Dest", "document")
		return r
	}
	for _, tc := range []struct {
		name    string
		renewal Renewal
		// navigateAt is the minute of a navigation, 0 for none.
		navigateAt int
		// lastPoll is the last minute the session still admits a poll.
		lastPoll int
	}{
		{"navigation (default), poller alone", RenewNavigation, 0, 9},
		{"navigation (default), one navigation at minute 5", RenewNavigation, 5, 14},
		{"any", RenewAny, 0, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newClock()
			m := newTestManager(t, clock, nil, Options{IdleTimeout: idle, Lifetime: time.Hour, Renewal: tc.renewal})
			_, c := start(t, m, "alice")
			for minute := 1; minute <= 30; minute++ {
				clock.Advance(time.Minute)
				r := poll(c)
				if minute == tc.navigateAt {
					r = navigate(c)
				}
				s, ok, err := m.Load(r)
				if err != nil {
					t.Fatal(err)
				}
				want := minute <= tc.lastPoll
				if ok != want {
					t.Fatalf("minute %d: admitted = %v, want %v", minute, ok, want)
				}
				if !ok {
					return
				}
				if tc.renewal == RenewNavigation && minute != tc.navigateAt && s.LastSeen.After(epoch.Add(time.Duration(tc.navigateAt)*time.Minute)) {
					t.Fatalf("minute %d: a background request moved LastSeen to %v", minute, s.LastSeen)
				}
			}
			if tc.lastPoll < 30 {
				t.Fatal("the session outlived its idle deadline")
			}
		})
	}
}
