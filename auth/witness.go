package auth

import "context"

// Witness is where RequireAuth leaves the user it admitted, for middleware
// that runs outside it (an access log, metrics) and so cannot read the
// context RequireAuth hands inward. Its zero value is ready; a middleware
// may keep one inside its own per-request value (see Witnessed).
type Witness struct {
	user User
	ok   bool
}

// Admitted reports the user RequireAuth admitted once the request has been
// served (ok false: no protected route admitted anyone).
func (w *Witness) Admitted() (User, bool) { return w.user, w.ok }

type witnessKey struct{}

// WitnessContextKey is the context key under which Witnessed stores the
// *Witness. It is exported, like http.ServerContextKey, so that one
// context can answer for several packages' values at once (package web's
// per-request context).
var WitnessContextKey any = witnessKey{}

// Witnessed returns a context for a request that RequireAuth will fill in
// through w. w must not be shared between requests.
func Witnessed(ctx context.Context, w *Witness) context.Context {
	return context.WithValue(ctx, witnessKey{}, w)
}

// WithWitness returns a context for a request that RequireAuth will fill
// in, and a function that reports the user it admitted once the request
// has been served (ok false: no protected route admitted anyone).
func WithWitness(ctx context.Context) (context.Context, func() (User, bool)) {
	w := &Witness{}
	return Witnessed(ctx, w), w.Admitted
}

// witnessAdmitted records u in the request's witness, if it has one.
func witnessAdmitted(ctx context.Context, u User) {
	if w, ok := ctx.Value(witnessKey{}).(*Witness); ok {
		w.user, w.ok = u, true
	}
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
