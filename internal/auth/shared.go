package auth

import (
	"context"
	"time"
)

// Shared is the state several instances of the program must agree on
// ([server] store = redis): sessions, failure counts and the single use
// of OAuth states and second-factor steps. Deps.Shared is nil when each
// process keeps its own (sessions in state_dir, the rest in memory).
//
// The core names only what any type may use. The session store and the
// failure counters are abilities of the same value, found by type
// assertion by the packages that use them (sessionauth.SharedSessions,
// passwordauth.SharedCounters), so that the core needs neither package
// session nor package throttle.
//
// Every method may fail when the store cannot be reached; providers then
// refuse with an Unavailable error (503), never admit and never sign out.
type Shared interface {
	// SpendOnce marks token of kind used for ttl and reports whether it
	// was unused until now: across every instance, it returns true once.
	SpendOnce(ctx context.Context, kind, token string, ttl time.Duration) (bool, error)
	// Ping reports whether the store answers now, for readiness.
	Ping(ctx context.Context) error
}
