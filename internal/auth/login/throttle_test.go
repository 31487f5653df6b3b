package login_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

func TestThrottlePerUser(t *testing.T) {
	h := logintest.New(t, func(c *login.Config) { c.MaxUserFailures = 3; c.MaxFailures = 100 })
	b := h.Browser()
	for i := range 3 {
		if r := b.Login("alice", "wrong", "/"); r.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, r.Status)
		}
	}
	r := b.Login("alice", "alice-pw", "/")
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("after 3 failures: status %d, want 429", r.Status)
	}
	checkRetryAfter(t, r, 15*time.Minute)
	// Another user from the same address is not held off...
	b.MustLogin("bob")
	// ...and an unknown name is throttled exactly like a known one.
	for range 3 {
		b.Login("nobody", "wrong", "/")
	}
	if r := b.Login("nobody", "wrong", "/"); r.Status != http.StatusTooManyRequests {
		t.Errorf("unknown name after 3 failures: status %d, want 429", r.Status)
	}
	// The window passes; the right password works and resets the count.
	h.Clock.Advance(16 * time.Minute)
	b.MustLogin("alice")
	if r := b.Login("alice", "wrong", "/"); r.Status != http.StatusUnauthorized {
		t.Errorf("after a success the count starts again: status %d", r.Status)
	}
}

func TestThrottlePerAddress(t *testing.T) {
	h := logintest.New(t, func(c *login.Config) { c.MaxFailures = 4; c.MaxUserFailures = 100 })
	b := h.Browser()
	for i := range 4 {
		if r := b.Login("user"+strconv.Itoa(i), "wrong", "/"); r.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i+1, r.Status)
		}
	}
	r := b.Login("alice", "alice-pw", "/")
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", r.Status)
	}
	checkRetryAfter(t, r, 15*time.Minute)
	if !strings.Contains(h.Logs.String(), "reason=\"too many failures\"") {
		t.Error("the throttled attempt was not logged")
	}
}

// checkRetryAfter checks a 429 page: Retry-After in whole seconds, at most
// window, and the form shown again.
func checkRetryAfter(t *testing.T, r logintest.Reply, window time.Duration) {
	t.Helper()
	s, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || s < 1 || time.Duration(s)*time.Second > window {
		t.Errorf("Retry-After %q, want 1..%d seconds", r.Header.Get("Retry-After"), int(window.Seconds()))
	}
	if _, ok := logintest.Field(r.Body, "csrf_token"); !ok {
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
		edit func(*login.Config)
		user func(i int) string
	}{
		{"one user name", func(c *login.Config) { c.MaxUserFailures = 5; c.MaxFailures = 1000 }, func(int) string { return "alice" }},
		{"one address", func(c *login.Config) { c.MaxFailures = 5; c.MaxUserFailures = 1000 }, func(i int) string { return "user" + strconv.Itoa(i) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := logintest.New(t, tt.edit)
			const n = 50
			browsers := make([]*logintest.Browser, n)
			tokens := make([]string, n)
			for i := range browsers {
				browsers[i] = h.Browser()
				tokens[i] = browsers[i].FormToken()
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
					r := b.Post(h.P.LoginPath(), url.Values{"username": {tt.user(i)}, "password": {"wrong"}, "csrf_token": {tokens[i]}})
					mu.Lock()
					statuses[r.Status]++
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
