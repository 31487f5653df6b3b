package login_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
)

func TestIdleExpiry(t *testing.T) {
	h := logintest.New(t, func(c *login.Config) { c.IdleTimeout = 30 * time.Minute })
	b := h.Browser()
	b.MustLogin("alice")
	for range 5 { // activity keeps the session alive past the timeout
		h.Clock.Advance(20 * time.Minute)
		if s := b.APIStatus(); s != http.StatusOK {
			t.Fatalf("active session refused: %d", s)
		}
	}
	h.Clock.Advance(31 * time.Minute)
	if s := b.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("after 31 idle minutes: %d, want 401", s)
	}
}

func TestAbsoluteExpiry(t *testing.T) {
	h := logintest.New(t, func(c *login.Config) { c.IdleTimeout = time.Hour; c.Lifetime = 3 * time.Hour })
	b := h.Browser()
	b.MustLogin("alice")
	for range 5 {
		h.Clock.Advance(35 * time.Minute)
		if s := b.APIStatus(); s != http.StatusOK {
			t.Fatalf("session refused before its lifetime: %d", s)
		}
	}
	h.Clock.Advance(30 * time.Minute) // 3h05 after login, 30 minutes idle
	if s := b.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("after the lifetime: %d, want 401", s)
	}
	if r := b.Get("/", true); r.Status != http.StatusSeeOther {
		t.Errorf("browser after the lifetime: %d, want a redirect to the login page", r.Status)
	}
}

func TestSessionsSurviveRestart(t *testing.T) {
	h := logintest.New(t, nil)
	b := h.Browser()
	b.MustLogin("alice")
	h.Stop()
	h.Start()
	if s := b.APIStatus(); s != http.StatusOK {
		t.Fatalf("after a restart: %d, want 200", s)
	}
	// Logout on the new server revokes the session for good.
	if r := b.Post("/logout", map[string][]string{"csrf_token": {b.CSRF()}}); r.Status != http.StatusSeeOther {
		t.Fatalf("logout: %d", r.Status)
	}
	h.Stop()
	h.Start()
	if s := b.APIStatus(); s != http.StatusUnauthorized {
		t.Errorf("after logout and restart: %d, want 401", s)
	}
}
