package auth

import (
	"context"
	"net/http"
	"net/url"
)

type scopedAsKey struct{}

// ScopedAs returns r telling RequireAuth that a machine token's scope may
// also admit r as the request for as: the catalog's listing of a folder
// (GET /api/backups?path=db/) is read as the folder it shows
// (/backups/db/), so that a token limited to /backups/db/ may list that
// folder and no other. The method, the override headers and the query
// (_method) are still r's; r's own path admits it as before.
func ScopedAs(r *http.Request, as *url.URL) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), scopedAsKey{}, as))
}

// scopePermits reports whether s lets r through: as r itself, or as the
// request ScopedAs named.
func scopePermits(s Scope, r *http.Request) bool {
	if s.Permits(r.Method, r.URL, r.Header) {
		return true
	}
	as, ok := r.Context().Value(scopedAsKey{}).(*url.URL)
	return ok && s.Permits(r.Method, as, r.Header)
}
