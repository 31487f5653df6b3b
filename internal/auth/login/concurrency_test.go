package login

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/loginfix"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// officeUsers writes a user file of n users, u0 … u(n-1), whose passwords
// (pw-u0 …) are hashed at cost 5: their checks overlap, and even under
// the race detector the bcrypt gate (one check at a time on two cores)
// stays within its wait. It loads the file.
func officeUsers(t *testing.T, h *harness, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		hash := []byte(testkit.HashCost(t, fmt.Sprintf("pw-u%d", i), 5))
		fmt.Fprintf(&b, "u%d:%s\n", i, hash)
	}
	loginfix.WriteFile(t, h.usersPath, b.String())
	if err := h.p.Reload(); err != nil {
		t.Fatal(err)
	}
}

// postAll posts one login form per browser at the same instant (forms
// fetched first, then a barrier) and counts the statuses.
func postAll(h *harness, browsers []*browser, form func(i int) url.Values) map[int]int {
	tokens := make([]string, len(browsers))
	for i, b := range browsers {
		tokens[i] = b.formToken()
	}
	return testkit.AtOnce(len(browsers), func(i int) func() int {
		f := form(i)
		f.Set("csrf_token", tokens[i])
		return func() int { return browsers[i].post(h.p.LoginPath(), f).status }
	})
}

// TestRightLoginsAtOnce: twelve, then twenty people behind one office
// address sign in at the same moment with their right passwords: all get
// 303, none 429, and the address's count is zero afterwards (default
// limits: 10 failures per address).
func TestRightLoginsAtOnce(t *testing.T) {
	for _, n := range []int{12, 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHarness(t, nil)
			officeUsers(t, h, n)
			browsers := make([]*browser, n)
			for i := range browsers {
				browsers[i] = h.browser()
			}
			statuses := postAll(h, browsers, func(i int) url.Values {
				return url.Values{"username": {fmt.Sprintf("u%d", i)}, "password": {fmt.Sprintf("pw-u%d", i)}}
			})
			if statuses[http.StatusSeeOther] != n {
				t.Fatalf("%d right logins at once: %v; want %d × 303", n, statuses, n)
			}
			lim := throttle.LimiterOf(h.p.byAddr)
			if f, in := lim.Failures("127.0.0.1"), lim.InFlight("127.0.0.1"); f != 0 || in != 0 {
				t.Fatalf("after the burst: %d failures, %d in flight; want 0 and 0", f, in)
			}
			if strings.Contains(h.logs.String(), "auth refused") {
				t.Errorf("right logins were logged as refused:\n%s", h.logs)
			}
		})
	}
}

// TestFortyWrongLoginsAtOnce: forty wrong passwords for forty names at
// once from one address: exactly max_failures verdicts, the rest 429.
func TestFortyWrongLoginsAtOnce(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxFailures = 10; c.MaxUserFailures = 5 })
	officeUsers(t, h, 40)
	browsers := make([]*browser, 40)
	for i := range browsers {
		browsers[i] = h.browser()
	}
	statuses := postAll(h, browsers, func(i int) url.Values {
		return url.Values{"username": {fmt.Sprintf("u%d", i)}, "password": {"wrong"}}
	})
	t.Logf("40 parallel wrong logins: %v", statuses)
	if statuses[401] != 10 || statuses[429] != 30 {
		t.Fatalf("statuses %v: want exactly 10 verdicts (401) and 30 × 429", statuses)
	}
}

// TestNoSprayBetweenSuccesses: a success resets its own user name's count
// only. Someone with one account who signs in between rounds of nine
// guesses at other names is still blocked by the address's limit within
// max_failures wrong verdicts.
func TestNoSprayBetweenSuccesses(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxFailures = 10; c.MaxUserFailures = 5 })
	b := h.browser()
	wrong := 0
	for round := range 6 {
		for i := range 9 {
			r := b.login(fmt.Sprintf("victim%d-%d", round, i), "guess", "/")
			switch r.status {
			case http.StatusUnauthorized:
				wrong++
			case http.StatusTooManyRequests:
				if wrong > 10 {
					t.Fatalf("429 only after %d wrong verdicts; want at most 10", wrong)
				}
				return
			default:
				t.Fatalf("guess: status %d", r.status)
			}
		}
		if r := b.login("alice", loginfix.Passwords["alice"], "/"); r.status == http.StatusTooManyRequests {
			if wrong > 10 {
				t.Fatalf("429 only after %d wrong verdicts", wrong)
			}
			return
		}
	}
	t.Fatalf("six rounds of nine wrong names and a right login: %d wrong verdicts and never a 429", wrong)
}

// TestDeviceCookie: a flood of wrong passwords for alice from another
// address blocks her name, but not her own browser, which signed in
// before and carries a device cookie; a browser without one is held off
// like the attacker. A device that fails max_user_failures times is
// blocked on its own, without blocking the name.
func TestDeviceCookie(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxFailures = 100; c.MaxUserFailures = 3 })
	h.stop()
	h.resolver = peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	h.start()
	alice := h.browserFrom("192.0.2.10")
	alice.mustLogin("alice")
	u, _ := url.Parse(h.srv.URL)
	var device *http.Cookie
	for _, c := range alice.jar.Cookies(u) {
		if c.Name == DeviceCookie {
			device = c
		}
	}
	if device == nil {
		t.Fatal("a sign-in gave no device cookie")
	}
	attacker := h.browserFrom("198.51.100.7")
	for range 10 {
		attacker.login("alice", "guess", "/")
	}
	if r := attacker.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("the attacker's browser after the flood: %d, want 429 (the name is blocked)", r.status)
	}
	stranger := h.browserFrom("192.0.2.10")
	if r := stranger.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("a browser without a device cookie: %d, want 429", r.status)
	}
	if r := alice.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusSeeOther {
		t.Fatalf("alice from her own browser with the right password: %d, want 303", r.status)
	}
	// The cookie is alice's only: bob's browser does not carry her name's
	// pass, and a tampered cookie is no cookie.
	bob := h.browserFrom("192.0.2.11")
	bob.mustLogin("bob")
	bobDevice := cookieOf(bob, u, DeviceCookie)
	bob.jar.SetCookies(u, []*http.Cookie{{Name: DeviceCookie, Value: bobDevice}})
	if r := bob.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("bob's device cookie used for alice: %d, want 429", r.status)
	}
	bob.jar.SetCookies(u, []*http.Cookie{{Name: DeviceCookie, Value: device.Value + "x"}})
	if r := bob.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("a tampered device cookie: %d, want 429", r.status)
	}
	// A device that fails is blocked on its own: three wrong passwords
	// from bob's own browser, with his device cookie for his name...
	bob2 := h.browserFrom("192.0.2.12")
	bob2.mustLogin("bob")
	for range 3 {
		if r := bob2.login("bob", "wrong", "/"); r.status != http.StatusUnauthorized {
			t.Fatalf("wrong password from a device: %d", r.status)
		}
	}
	if r := bob2.login("bob", loginfix.Passwords["bob"], "/"); r.status != http.StatusTooManyRequests {
		t.Fatalf("a device that failed 3 times: %d, want 429", r.status)
	}
	// ...while bob's name was not counted: another browser gets in.
	bob3 := h.browserFrom("192.0.2.13")
	bob3.mustLogin("bob")
}

func cookieOf(b *browser, u *url.URL, name string) string {
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	b.t.Fatalf("no cookie %s", name)
	return ""
}

// TestLoginRefusalsAsJSON: a POST to the login path that asks for JSON
// gets its refusals (403, 401, 429) as {"error": ...} like every other
// route; the same POST from a browser keeps its page.
func TestLoginRefusalsAsJSON(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxUserFailures = 1 })
	b := h.browser()
	post := func(form url.Values, accept string) reply {
		req, _ := http.NewRequest(http.MethodPost, h.srv.URL+h.p.LoginPath(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", h.srv.URL)
		req.Header.Set("Accept", accept)
		return b.do(req)
	}
	tok := b.formToken()
	for _, tt := range []struct {
		form   url.Values
		status int
	}{
		{url.Values{"username": {"alice"}, "password": {"x"}, "csrf_token": {"forged"}}, 403},
		{url.Values{"username": {"alice"}, "password": {"wrong"}, "csrf_token": {tok}}, 401},
		{url.Values{"username": {"alice"}, "password": {"wrong"}, "csrf_token": {tok}}, 429},
	} {
		r := post(tt.form, "application/json")
		var body struct{ Error string }
		if r.status != tt.status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(r.body), &body) != nil || body.Error == "" {
			t.Fatalf("want %d as JSON; got %d %q %q", tt.status, r.status, r.header.Get("Content-Type"), r.body)
		}
		if tt.status == 429 && r.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if r := post(url.Values{"username": {"alice"}, "password": {"wrong"}, "csrf_token": {tok}}, "text/html"); r.status != 429 || !strings.Contains(r.body, "<form") {
		t.Fatalf("the browser's form: %d, want 429 with the page", r.status)
	}
}

// TestWaitingLoginNotLogged: attempts in flight hold every slot of the
// address; a right login waits and gets in when one is given back; a
// wrong one that finds them held throughout is answered 429 without an
// "auth refused" line or a failure counted.
func TestWaitingLoginNotLogged(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxFailures = 2 })
	lim := throttle.LimiterOf(h.p.byAddr)
	a, b := lim.TryAcquire("127.0.0.1"), lim.TryAcquire("127.0.0.1")
	if !a.OK || !b.OK {
		t.Fatal("could not take the slots")
	}
	alice := h.browser()
	tok := alice.formToken()
	done := make(chan int)
	go func() {
		done <- alice.post(h.p.LoginPath(), url.Values{"username": {"alice"}, "password": {loginfix.Passwords["alice"]}, "csrf_token": {tok}}).status
	}()
	for lim.Waiting("127.0.0.1") == 0 {
		time.Sleep(time.Millisecond) // lining the login up, not timing it
	}
	lim.Release(a.Slot)
	if got := <-done; got != http.StatusSeeOther {
		t.Fatalf("the waiting right login: %d, want 303", got)
	}
	a = lim.TryAcquire("127.0.0.1")
	if r := h.browser().login("bob", "wrong", "/"); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("with every slot held throughout: %d, want 429 with Retry-After", r.status)
	}
	if strings.Contains(h.logs.String(), "auth refused") {
		t.Fatalf("waiting or busy logins were logged as refused:\n%s", h.logs)
	}
	if lim.Failures("127.0.0.1") != 0 || throttle.LimiterOf(h.p.byUser).Failures("bob") != 0 {
		t.Fatal("a busy attempt was counted as a failure")
	}
}

// TestReloadForgetsCounts: SIGHUP forgets the counts, not only the
// blocks, of addresses, names and devices, in memory and in Redis alike.
func TestReloadForgetsCounts(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.MaxUserFailures = 3 })
			if store == "redis" {
				srv := redistest.Start(t, redistest.Options{})
				c, err := redisstore.Open(redisstore.Options(srv.Config()), h.env.Logger)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				h.stop()
				h.env.Shared = c
				h.start()
			}
			b := h.browser()
			for range 2 {
				b.login("alice", "wrong", "/")
			}
			if err := h.p.Reload(); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if r := b.login("alice", "wrong", "/"); r.status != http.StatusUnauthorized {
					t.Fatalf("failure %d after the reload: %d, want 401", i+1, r.status)
				}
			}
			b.login("alice", "wrong", "/")
			if r := b.login("alice", loginfix.Passwords["alice"], "/"); r.status != http.StatusTooManyRequests {
				t.Fatalf("blocked name: %d, want 429", r.status)
			}
			if err := h.p.Reload(); err != nil {
				t.Fatal(err)
			}
			b.mustLogin("alice")
		})
	}
}
