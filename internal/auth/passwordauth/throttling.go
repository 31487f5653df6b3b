// Package passwordauth is what the password types (basic and flask-login)
// share, as package sessionauth is what the session types share: the
// settings of their failure limits (Throttling, with one set of keys and
// defaults), the failure counters (kept in this process, or shared by
// every instance through the program's shared state), and the one way a
// throttling verdict becomes a refusal and its log lines (Admit).
package passwordauth

import (
	"time"

	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/throttle"
)

// Defaults of Throttling.
const (
	// DefaultMaxFailures is how many failed attempts one client address
	// may make within the window before it is answered 429.
	DefaultMaxFailures = 10
	// DefaultFailureWindow is how long failures are remembered.
	DefaultFailureWindow = 15 * time.Minute
)

// Throttling are the settings of the failure limit by client address that
// the password types (basic, flask-login) share: one type, with one set of
// keys and defaults, embedded in each type's Config.
type Throttling struct {
	// MaxFailures is how many failed attempts one client address may make
	// within FailureWindow before it is answered 429 (max_failures).
	// Default DefaultMaxFailures.
	MaxFailures int
	// FailureWindow is how long failures are remembered (failure_window).
	// Default DefaultFailureWindow.
	FailureWindow time.Duration
	// AttemptWait is how long an attempt waits for a throttling slot held
	// by others in flight without any verdict arriving
	// (throttle.Options.Wait, attempt_wait), at most throttle.MaxCheck.
	// Default: derived, AttemptWait.
	AttemptWait time.Duration
}

// WithDefaults returns t with its unset limits at their defaults
// (AttemptWait stays zero: it is derived from the hashes, see Wait).
func (t Throttling) WithDefaults() Throttling {
	if t.MaxFailures <= 0 {
		t.MaxFailures = DefaultMaxFailures
	}
	if t.FailureWindow <= 0 {
		t.FailureWindow = DefaultFailureWindow
	}
	return t
}

// Wait is AttemptWait when set, else the wait derived for the hashes in
// use (AttemptWait(bcrypt, cost)).
func (t Throttling) Wait(bcrypt bool, cost int) time.Duration {
	if t.AttemptWait > 0 {
		return t.AttemptWait
	}
	return AttemptWait(bcrypt, cost)
}

// AttemptWait is how long an attempt waits for a throttling slot without
// any verdict arriving (throttle.Options.Wait): twice the time of one
// bcrypt check at cost on this machine (measured once, see
// password.CheckTime), and never less than throttle.DefaultWait, since a
// loaded machine checks slower than it measured at start. Plain passwords
// take throttle.DefaultWait.
func AttemptWait(bcrypt bool, cost int) time.Duration {
	if !bcrypt {
		return throttle.DefaultWait
	}
	return max(2*password.CheckTime(cost), throttle.DefaultWait)
}
