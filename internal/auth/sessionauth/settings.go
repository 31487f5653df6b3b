package sessionauth

import (
	"errors"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/session"
)

// Settings are the session settings of the session types (flask-login,
// oauth): one type, with one set of keys and defaults, embedded in each
// type's Config and in Options, so that a setting has one name everywhere.
type Settings struct {
	// IdleTimeout ends a session unused that long (session_idle_timeout).
	// Default session.DefaultIdleTimeout (30m).
	IdleTimeout time.Duration
	// IdleRenewal says which requests renew the idle deadline
	// (idle_renewal). Default session.RenewNavigation: only a person's
	// page loads.
	IdleRenewal session.Renewal
	// Lifetime ends a session that long after sign-in, whatever its
	// activity (session_lifetime). Default session.DefaultLifetime (12h).
	Lifetime time.Duration
	// MaxSessionsPerUser bounds one user's live sessions; a new sign-in
	// ends the oldest beyond it (max_sessions_per_user). Default
	// session.DefaultMaxPerUser (20).
	MaxSessionsPerUser int
}

// RenewalKey is the [authentication] key of the session types that says
// which requests renew a session's idle deadline.
const RenewalKey = "idle_renewal"

// WithDefaults returns s with its unset durations at their defaults
// (MaxSessionsPerUser's default is the session manager's).
func (s Settings) WithDefaults() Settings {
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = session.DefaultIdleTimeout
	}
	if s.Lifetime <= 0 {
		s.Lifetime = session.DefaultLifetime
	}
	return s
}

// Warnings lists the settings that are valid but do not do what they
// say, each an *auth.Warning at its key: an idle timeout longer than the
// lifetime (defaults applied) never ends a session, the lifetime does.
// Every session type reports them, flask-login and oauth alike.
func (s Settings) Warnings() []error {
	s = s.WithDefaults()
	if s.IdleTimeout > s.Lifetime {
		return []error{&auth.Warning{Err: &auth.KeyError{Key: "session_idle_timeout",
			Err: errors.New("is longer than session_lifetime, so sessions end after session_lifetime anyway")}}}
	}
	return nil
}
