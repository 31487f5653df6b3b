package login

import (
	"net/http"
	"strconv"
	"strings"
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
