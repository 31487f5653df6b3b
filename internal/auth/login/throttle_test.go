package login

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestThrottlePerUser(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxUserFailures = 3; c.MaxFailures = 100 })
	b := h.browser()
	for i := range 3 {
		if r := b.login("alice", "wrong", "/"); r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, r.status)
		}
	}
	r := b.login("alice", "alice-pw", "/")
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("after 3 failures: status %d, want 429", r.status)
	}
	checkRetryAfter(t, r, 15*time.Minute)
	// Another user from the same address is not held off...
	b.mustLogin("bob")
	// ...and an unknown name is throttled exactly like a known one.
	for range 3 {
		b.login("nobody", "wrong", "/")
	}
	if r := b.login("nobody", "wrong", "/"); r.status != http.StatusTooManyRequests {
		t.Errorf("unknown name after 3 failures: status %d, want 429", r.status)
	}
	// The window passes; the right password works and resets the count.
	h.clock.Advance(16 * time.Minute)
	b.mustLogin("alice")
	if r := b.login("alice", "wrong", "/"); r.status != http.StatusUnauthorized {
		t.Errorf("after a success the count starts again: status %d", r.status)
	}
}

func TestThrottlePerAddress(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxFailures = 4; c.MaxUserFailures = 100 })
	b := h.browser()
	for i := range 4 {
		if r := b.login("user"+strconv.Itoa(i), "wrong", "/"); r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i+1, r.status)
		}
	}
	r := b.login("alice", "alice-pw", "/")
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", r.status)
	}
	checkRetryAfter(t, r, 15*time.Minute)
	if !strings.Contains(h.logs.String(), "reason=\"too many failures\"") {
		t.Error("the throttled attempt was not logged")
	}
}

// checkRetryAfter checks a 429 page: Retry-After in whole seconds, at most
// window, and the form shown again.
func checkRetryAfter(t *testing.T, r reply, window time.Duration) {
	t.Helper()
	s, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || s < 1 || time.Duration(s)*time.Second > window {
		t.Errorf("Retry-After %q, want 1..%d seconds", r.header.Get("Retry-After"), int(window.Seconds()))
	}
	if _, ok := field(r.body, "csrf_token"); !ok {
		t.Error("the 429 page has no form")
	}
}

// TestLimitsHoldUnderConcurrency sends 50 wrong logins at once (each
// browser fetches its form first, then a barrier releases the posts): at
// most max_user_failures verdicts for one name, at most max_failures for
// one address, the rest 429.
func TestLimitsHoldUnderConcurrency(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Config)
		user func(i int) string
	}{
		{"one user name", func(c *Config) { c.MaxUserFailures = 5; c.MaxFailures = 1000 }, func(int) string { return "alice" }},
		{"one address", func(c *Config) { c.MaxFailures = 5; c.MaxUserFailures = 1000 }, func(i int) string { return "user" + strconv.Itoa(i) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.edit)
			const n = 50
			browsers := make([]*browser, n)
			tokens := make([]string, n)
			for i := range browsers {
				browsers[i] = h.browser()
				tokens[i] = browsers[i].formToken()
			}
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				statuses = map[int]int{}
				barrier  = make(chan struct{})
			)
			for i, b := range browsers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-barrier
					r := b.post(h.p.LoginPath(), url.Values{"username": {tt.user(i)}, "password": {"wrong"}, "csrf_token": {tokens[i]}})
					mu.Lock()
					statuses[r.status]++
					mu.Unlock()
				}()
			}
			close(barrier)
			wg.Wait()
			if statuses[401] > 5 || statuses[401] == 0 || statuses[401]+statuses[429]+statuses[503] != n {
				t.Fatalf("statuses %v: at most 5 verdicts (401), the rest 429", statuses)
			}
		})
	}
}
