package auth

import (
	"context"
	"time"

	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
)

// Shared is the state several instances of the program must agree on
// ([server] store = redis): sessions, failure counts and the single use
// of OAuth states. Deps.Shared is nil when each process keeps its own
// (sessions in state_dir, the rest in memory).
//
// Every method may fail when the store cannot be reached; providers then
// refuse with an Unavailable error (503), never admit and never sign out.
type Shared interface {
	// SessionStore is where the session types keep their sessions.
	SessionStore() session.Store
	// Counter returns the failure counter named name, configured by o.
	// Names tell counters apart in the store ("basic.addr",
	// "flask-login.user"); o.Now and o.OnFull are not used, since the
	// count lives in the store.
	Counter(name string, o throttle.Options) throttle.Counter
	// SpendOnce marks token of kind used for ttl and reports whether it
	// was unused until now: across every instance, it returns true once.
	SpendOnce(ctx context.Context, kind, token string, ttl time.Duration) (bool, error)
	// Ping reports whether the store answers now, for readiness.
	Ping(ctx context.Context) error
}

// Counter returns the failure counter a provider uses: shared through
// e.Shared when the program has one, else counted in this process by a
// throttle.Limiter configured by o.
func (e Deps) Counter(name string, o throttle.Options) throttle.Counter {
	if e.Shared != nil {
		return e.Shared.Counter(name, o)
	}
	return throttle.Local(throttle.New(o))
}
