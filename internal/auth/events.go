package auth

import "time"

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

// PasswordObserver is told of the password checks' work: each bcrypt
// comparison and its time, each wait for the bcrypt gate, each lookup of
// the verification cache. It has password.Observer's methods, so that the
// core need not import package password: the password types hand it to
// their Verifier as it is.
type PasswordObserver interface {
	BcryptChecked(d time.Duration)
	GateWaited(d time.Duration)
	CacheLookup(hit bool)
}

// SessionObserver is told of sessions started and ended. It has
// session.Observer's methods, so that the core need not import package
// session: the session types hand it to their Manager as it is.
type SessionObserver interface {
	SessionStarted(authType string)
	SessionsEnded(authType, reason string, n int)
}

// Hooks are the observers of what the providers do, handed to every
// provider in one value (Deps.Hooks) instead of riding in each request's
// context: authentication outcomes (Events), the password checks' work
// (Password, given to the password.Verifier) and sessions started and
// ended (Sessions, given to the session.Manager). The program's come from
// package metrics (Metrics.Hooks). A nil field observes nothing.
type Hooks struct {
	Events   Events
	Password PasswordObserver
	Sessions SessionObserver
}
