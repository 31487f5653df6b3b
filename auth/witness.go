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
