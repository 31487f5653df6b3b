package auth

import (
	"context"
	"net/http"
)

// The capabilities a Provider may have besides Identify and Challenge,
// each a small interface found by type assertion (as net/http finds
// http.Flusher): the program, the web layer and the proxy ask for them,
// a type implements only what it needs. They are all in this file so that
// whoever adds a type sees at once what it can offer.

// Mounter is implemented by providers that serve routes of their own: the
// login page, logout, the OAuth login and callback: what the Flask-era
// service called init_app(app).
type Mounter interface {
	Mount(mux *http.ServeMux)
}

// Reloader is implemented by providers whose data can be re-read without a
// restart (the flask-login user file). The program calls Reload on SIGHUP.
type Reloader interface {
	Reload() error
}

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

// Checker is implemented by providers that can tell whether they are able
// to answer authenticated requests right now (their user file is loaded,
// their session store answers). /readyz asks it. The error should be a
// *NotReady naming the kind of part that is down: /readyz shows only that
// kind to its unauthenticated clients, and logs the rest.
type Checker interface {
	Ready(ctx context.Context) error
}

// NotReady is a Checker's answer: Part says, in words fit for anyone who
// can reach /readyz, what kind of part is down ("the session store does
// not answer"); Err holds the detail (addresses, error texts), which goes
// to the log only.
type NotReady struct {
	Part string
	Err  error
}

func (e *NotReady) Error() string {
	if e.Err == nil {
		return e.Part
	}
	return e.Part + ": " + e.Err.Error()
}

func (e *NotReady) Unwrap() error { return e.Err }

// Watcher is implemented by providers whose data can change on disk while
// the program runs (the flask-login user file): Watch follows the changes
// until ctx ends. The program runs it, with the SIGHUP loop that calls
// Reloader.Reload, from one place.
type Watcher interface {
	Watch(ctx context.Context)
}

// LoginRedirecter is implemented by the session types: the URL of their
// login page with next, checked by their rules for next (a local path, or
// an allowed host). The forward-auth endpoint sends browsers there.
type LoginRedirecter interface {
	LoginURLFor(next string) string
}

// PathOwner is implemented by providers that serve paths of their own (a
// login page, logout, the OAuth flow). In proxy mode those paths stay with
// backupweb instead of going to the guarded interface.
type PathOwner interface {
	OwnPaths() []string
}

// SessionCounter is implemented by the session types whose store can tell
// cheaply how many sessions it holds (ok false when it cannot). The program
// exports the count as a metric.
type SessionCounter interface {
	SessionCount() (n int, ok bool)
}

// AccountLink is a page of the signed-in user's own account that a
// provider serves (the passkeys page), shown beside "Signed in as".
type AccountLink struct {
	// Label is the link's text.
	Label string
	// Path is the page's local path.
	Path string
}

// AccountLinker is implemented by providers that serve pages of the
// signed-in user's own account: the catalog page links to those u may use.
type AccountLinker interface {
	AccountLinks(u User) []AccountLink
}

// FormTargeter is implemented by providers whose sign-out form leads the
// browser on to another site (oauth: the identity provider's
// end_session_endpoint, RP-initiated logout). Browsers hold a form's
// submission, redirects included, to the page's Content-Security-Policy
// form-action; FormTargets returns the origins ("https://idp.example.com")
// to add to it, besides the service's own.
type FormTargeter interface {
	FormTargets() []string
}
