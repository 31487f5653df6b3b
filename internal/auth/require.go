package auth

import (
	"net/http"

	"github.com/backupweb/backupweb/internal/refusal"
)

// RequireAuth returns middleware that lets a request through only when p
// identifies its user, with the user in the request's context. Requests p
// does not admit get p's Challenge; requests p cannot decide on are
// answered by errs with the Reply ReplyTo gives (nil errs: plain text). A
// user admitted with a Scope (a machine token) that does not permit the
// request (nor the one access.ScopedAs names) gets 403 (OutOfScope) before
// anything else sees it, logged and counted by audit (Audit.OutOfScope).
//
// Every response of a protected route carries Cache-Control: no-store, so
// neither browsers nor shared caches keep what only an authenticated user
// may see.
func RequireAuth(p Provider, errs *refusal.Errors, audit Audit) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Cache-Control"] = noStore
			u, ok, err := p.Identify(r)
			if err != nil {
				errs.Error(w, r, err)
				return
			}
			if !ok {
				p.Challenge(w, r)
				return
			}
			if u.Scope != nil && !u.Scope.Permits(r) {
				audit.OutOfScope(w, r, errs, u)
				return
			}
			if witnessAdmitted(r.Context(), u) {
				// The request's witness answers FromContext: no copy.
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), u)))
		})
	}
}

// noStore is RequireAuth's Cache-Control value, built once and never
// modified (its capacity is its length: an Add copies it), so that
// setting it costs no allocation.
var noStore = []string{"no-store"}[:1:1]

// WantsHTML reports whether r is a browser navigation: a GET whose Accept
// header names text/html. Session types redirect those to their login page
// and answer everything else with 401.
func WantsHTML(r *http.Request) bool {
	return r.Method == http.MethodGet && refusal.Accepts(r, "text/html")
}
