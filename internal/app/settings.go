package app

import (
	"time"

	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
)

// loadThrottling reads the throttling keys from s; their defaults are
// passwordauth.Throttling.WithDefaults's, applied there only. A wrong
// value is a problem at its key's line.
func loadThrottling(s *ini.Section) passwordauth.Throttling {
	return passwordauth.Throttling{
		MaxFailures:   s.Int("max_failures", 0, 1, 1_000_000),
		FailureWindow: s.Duration("failure_window", 0),
		AttemptWait:   loadAttemptWait(s),
	}.WithDefaults()
}

// loadAttemptWait reads the attempt_wait key of s: absent, 0 (derived by
// passwordauth.AttemptWait); else a duration up to throttle.MaxCheck.
func loadAttemptWait(s *ini.Section) time.Duration {
	d := s.Duration("attempt_wait", 0)
	if d > throttle.MaxCheck {
		s.Errorf("attempt_wait", "must be at most %s: a check holds its slot no longer", throttle.MaxCheck)
		return 0
	}
	return d
}

// loadSettings reads settingsKeys from s, each with its default (the
// durations' defaults are sessionauth.Settings.WithDefaults's, applied
// there only); a wrong value is a problem at its key's line, and the
// settings' own warnings (Settings.Warnings) are recorded.
func loadSettings(s *ini.Section) sessionauth.Settings {
	set := sessionauth.Settings{
		IdleTimeout:        s.Duration("session_idle_timeout", 0),
		IdleRenewal:        loadRenewal(s),
		Lifetime:           s.Duration("session_lifetime", 0),
		MaxSessionsPerUser: s.Int("max_sessions_per_user", session.DefaultMaxPerUser, 1, 10_000),
	}.WithDefaults()
	s.Record(set.Warnings()...)
	return set
}

// loadRenewal reads idle_renewal from s: "navigation" (the default) or
// "any". Any other value is an error at the key's line that lists the
// valid ones; the default is returned with it.
func loadRenewal(s *ini.Section) session.Renewal {
	v := s.String(sessionauth.RenewalKey, "")
	r, err := session.ParseRenewal(v)
	if err != nil {
		s.Errorf(sessionauth.RenewalKey, "unknown value %q; valid values are navigation (only a person's page loads renew the idle deadline) and any (every request does, background polling included)", v)
		return session.RenewNavigation
	}
	return r
}
