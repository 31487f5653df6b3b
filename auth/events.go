package auth

import (
	"context"
	"net/http"
)

// Events is told about authentication outcomes: a refused attempt (by
// type and reason, the same reasons the log uses), a request refused
// because its client is throttled, a sign-in and a sign-out. It rides in
// the request's context (WithEvents), as net/http/httptrace's hooks do, so
// that the one place each outcome is logged also counts it. It must be
// cheap and safe for concurrent use.
type Events interface {
	Refused(authType, reason string)
	Throttled(authType string)
	SignedIn(authType string)
	SignedOut(authType string)
}

type contextKey struct{ name string }

// EventsContextKey is the context key under which WithEvents stores
// Events. It is exported, like http.ServerContextKey, so that one context
// can answer for several packages' hooks at once (see package metrics).
var EventsContextKey = &contextKey{"auth events"}

// WithEvents returns a copy of ctx that carries e.
func WithEvents(ctx context.Context, e Events) context.Context {
	return context.WithValue(ctx, EventsContextKey, e)
}

// eventsOf returns the Events r's context carries, or nil.
func eventsOf(r *http.Request) Events {
	e, _ := r.Context().Value(EventsContextKey).(Events)
	return e
}

// CountThrottled records one request refused because its client is
// throttled. Only the first refusal of a block is logged (LogRefused); each
// is counted.
func CountThrottled(r *http.Request, authType string) {
	if e := eventsOf(r); e != nil {
		e.Throttled(authType)
	}
}
