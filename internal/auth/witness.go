package auth

import "context"

// Witness is where RequireAuth leaves the user it admitted, for middleware
// that runs outside it (an access log, metrics) and so cannot read the
// context RequireAuth hands inward. Its zero value is ready; a middleware
// may keep one inside its own per-request value (see Witnessed).
type Witness struct {
	user  User
	ok    bool
	carry bool // CarryUser: FromContext reads the user here
}

// CarryUser makes w also the place FromContext finds the admitted user:
// RequireAuth then records the user in w and passes the request inward
// unchanged, instead of a copy of it with the user in a new context value
// (three allocations per request). Call it before the request is served,
// on a witness whose context answers WitnessContextKey with w for the
// whole request (package web's per-request context does). Below a
// RequireAuth that admitted someone, FromContext then reports that user
// for the rest of the request, as it does inside the protected handler.
func (w *Witness) CarryUser() { w.carry = true }

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

// witnessAdmitted records u in the request's witness, if it has one, and
// reports whether the witness carries it to FromContext (CarryUser).
func witnessAdmitted(ctx context.Context, u User) (carried bool) {
	if w, ok := ctx.Value(witnessKey{}).(*Witness); ok {
		w.user, w.ok = u, true
		return w.carry
	}
	return false
}

// carriedUser is FromContext's answer from a witness that carries the
// admitted user.
func carriedUser(ctx context.Context) (User, bool) {
	if w, ok := ctx.Value(witnessKey{}).(*Witness); ok && w.carry && w.ok {
		return w.user, true
	}
	return User{}, false
}
