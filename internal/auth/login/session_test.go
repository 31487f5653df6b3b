package login

import (
	"net/http"
	"testing"
	"time"
)

func TestIdleExpiry(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 30 * time.Minute })
	b := h.browser()
	b.mustLogin("alice")
	for range 5 { // activity keeps the session alive past the timeout
		h.clock.Advance(20 * time.Minute)
		if s := b.apiStatus(); s != http.StatusOK {
			t.Fatalf("active session refused: %d", s)
		}
	}
	h.clock.Advance(31 * time.Minute)
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("after 31 idle minutes: %d, want 401", s)
	}
}

func TestAbsoluteExpiry(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IdleTimeout = time.Hour; c.Lifetime = 3 * time.Hour })
	b := h.browser()
	b.mustLogin("alice")
	for range 5 {
		h.clock.Advance(35 * time.Minute)
		if s := b.apiStatus(); s != http.StatusOK {
			t.Fatalf("session refused before its lifetime: %d", s)
		}
	}
	h.clock.Advance(30 * time.Minute) // 3h05 after login, 30 minutes idle
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("after the lifetime: %d, want 401", s)
	}
	if r := b.get("/", true); r.status != http.StatusSeeOther {
		t.Errorf("browser after the lifetime: %d, want a redirect to the login page", r.status)
	}
}

func TestSessionsSurviveRestart(t *testing.T) {
	h := newHarness(t, nil)
	b := h.browser()
	b.mustLogin("alice")
	h.stop()
	h.start()
	if s := b.apiStatus(); s != http.StatusOK {
		t.Fatalf("after a restart: %d, want 200", s)
	}
	// Logout on the new server revokes the session for good.
	if r := b.post("/logout", map[string][]string{"csrf_token": {b.csrf()}}); r.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", r.status)
	}
	h.stop()
	h.start()
	if s := b.apiStatus(); s != http.StatusUnauthorized {
		t.Errorf("after logout and restart: %d, want 401", s)
	}
}
