package auth

import "context"

// witness is where RequireAuth leaves the user it admitted, for middleware
// that runs outside it (an access log, metrics) and so cannot read the
// context RequireAuth hands inward.
type witness struct {
	user User
	ok   bool
}

type witnessKey struct{}

// WithWitness returns a context for a request that RequireAuth will fill
// in, and a function that reports the user it admitted once the request
// has been served (ok false: no protected route admitted anyone).
func WithWitness(ctx context.Context) (context.Context, func() (User, bool)) {
	w := &witness{}
	return context.WithValue(ctx, witnessKey{}, w), func() (User, bool) { return w.user, w.ok }
}

// witnessAdmitted records u in the request's witness, if it has one.
func witnessAdmitted(ctx context.Context, u User) {
	if w, ok := ctx.Value(witnessKey{}).(*witness); ok {
		w.user, w.ok = u, true
	}
}
