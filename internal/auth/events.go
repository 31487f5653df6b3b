package auth

import (
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/session"
)

// Events is told about authentication outcomes: a refused attempt (by
// type and reason, the same reasons the log uses), a request refused
// because its client is throttled, a sign-in and a sign-out. It is told
// from the one place each outcome is logged (Audit). It must be cheap and
// safe for concurrent use.
type Events interface {
	Refused(authType, reason string)
	Throttled(authType string)
	SignedIn(authType string)
	SignedOut(authType string)
}

// TokenObserver, when the Events also implement it, is told of each
// request admitted by a machine token (type flask-login), so that token
// requests are counted apart from sign-ins, which they are not.
type TokenObserver interface {
	TokenAdmitted(authType string)
}

// Hooks are the observers of what the providers do, handed to every
// provider in one value (Deps.Hooks) instead of riding in each request's
// context: authentication outcomes (Events), the password checks' work
// (password.Observer, given to the Verifier) and sessions started and ended
// (session.Observer, given to the session Manager). The program's come from
// package metrics (Metrics.Hooks). A nil field observes nothing.
type Hooks struct {
	Events   Events
	Password password.Observer
	Sessions session.Observer
}
