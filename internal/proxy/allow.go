package proxy

import (
	"net/http"

	"github.com/backupweb/backupweb/internal/auth"
)

// allowed reports whether the user in r's context may pass the proxy
// (Options.AllowUsers), and when not answers 403 through the error writer
// (the styled page or JSON, never a redirect to the sign-in page, which
// would only sign the same user in again) and logs the refusal. Requests
// without a user (skip_auth_routes) and an empty list pass.
func allowed(o Options, w http.ResponseWriter, r *http.Request) bool {
	u, ok := auth.FromContext(r.Context())
	if !ok || auth.AllowedBy(o.AllowUsers, u) {
		return true
	}
	auth.LogNotAllowed(o.Logger, r, u)
	o.Errors.Refuse(w, r, auth.NotAllowed)
	return false
}

// SkipsAuth reports whether r is on one of Options.SkipAuthRoutes: it
// then passes to the upstream without sign-in and without identity
// headers. The web layer asks it before RequireAuth.
func (h *Handler) SkipsAuth(r *http.Request) bool {
	return h.o.SkipAuthRoutes.Match(r)
}

// RecheckNow checks at once the sign-in of every request still being
// answered, rather than at the next interval. The web layer calls it after
// a sign-out on this instance, so that the connections of the session
// just ended close at once.
func (h *Handler) RecheckNow() { h.live.now() }
