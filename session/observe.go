package session

import "context"

// Observer is told when sessions start and end (by the manager's Type, and
// for ends a reason: "logout", "expired", "revoked", "limit", "user
// removed"). It rides in the request's context (WithObserver), as
// net/http/httptrace's hooks do; an end that no request causes (a user
// removed from the user file by a reload) is seen only when the caller's
// context carries one. It must be cheap and safe for concurrent use.
type Observer interface {
	SessionStarted(authType string)
	SessionsEnded(authType, reason string, n int)
}

type contextKey struct{ name string }

// ObserverContextKey is the context key under which WithObserver stores
// the Observer, exported like http.ServerContextKey so that one context
// can answer for several packages' hooks at once (see package metrics).
var ObserverContextKey = &contextKey{"session observer"}

// WithObserver returns a copy of ctx that carries o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, ObserverContextKey, o)
}

// ended tells ctx's Observer, if any, that n sessions ended for reason.
func (m *Manager) ended(ctx context.Context, reason string, n int) {
	if o, ok := ctx.Value(ObserverContextKey).(Observer); ok && n > 0 {
		o.SessionsEnded(m.typ, reason, n)
	}
}
