package auth

import (
	"context"
	"net/http"
)

// Rechecker is implemented by providers whose sign-ins can end while a
// request is still being answered: a session ends at logout, at its idle
// or absolute deadline, when its user is removed or their password
// changes. The built-in proxy asks it again, every fraction of a second,
// about every request it is still answering (WebSockets, event streams,
// long polls, downloads), and closes those it no longer admits.
//
// Types whose credential cannot change while the process runs (basic's
// one configured user, none) need not implement it: a restart closes every
// connection anyway.
type Rechecker interface {
	// Recheck returns the check of the credential r was admitted with as
	// u, or nil when r carries nothing that could end. The check answers
	// ok=false when that credential no longer identifies u, and an error
	// when it could not tell (the session store did not answer); the
	// caller then fails closed. It never writes a response, never renews
	// a session's activity and never counts as a sign-in attempt, so it
	// can run as often as needed; it must be cheap (one store lookup) and
	// safe for concurrent use.
	Recheck(r *http.Request, u User) func(ctx context.Context) (ok bool, err error)
}
