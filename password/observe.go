package password

import (
	"context"
	"time"
)

// Observer is told about the work a Verifier does for one request: each
// bcrypt comparison and how long it took, how long a check waited for the
// gate, and whether the credential cache answered. It rides in the
// request's context (WithObserver), as net/http/httptrace's hooks do, so
// that metrics need no wiring through every constructor. It must be cheap
// and safe for concurrent use.
type Observer interface {
	BcryptChecked(d time.Duration)
	GateWaited(d time.Duration)
	CacheLookup(hit bool)
}

type contextKey struct{ name string }

// ObserverContextKey is the context key under which WithObserver stores
// the Observer, exported like http.ServerContextKey so that one context
// can answer for several packages' hooks at once (see package metrics).
var ObserverContextKey = &contextKey{"password observer"}

// WithObserver returns a copy of ctx that carries o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, ObserverContextKey, o)
}

// observerOf returns the Observer ctx carries, or nil.
func observerOf(ctx context.Context) Observer {
	o, _ := ctx.Value(ObserverContextKey).(Observer)
	return o
}
