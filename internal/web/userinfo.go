package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
)

// UserinfoPath answers who is signed in, for a guarded application's
// pages and scripts (oauth2-proxy's /oauth2/userinfo, Authelia's
// /api/user/info). It is under /_backupweb/, so backupweb keeps it in
// every mode.
const UserinfoPath = "/_backupweb/userinfo"

// userinfo is the body of a signed-in answer. Email and Expires are null
// when the type does not know them: basic and none have no e-mail and no
// session, so no expiry.
type userinfo struct {
	Username string   `json:"username"`
	Email    *string  `json:"email"`
	Type     string   `json:"type"`
	Expires  *string  `json:"expires"`
	Groups   []string `json:"groups"`
}

// serveUserinfo answers GET /_backupweb/userinfo: 200 JSON
// {"username", "email", "type", "expires"} (expires in RFC 3339, UTC) for
// the signed-in user, with "groups" (sorted, [] when none: from the
// groups file for basic and flask-login, from the identity provider for
// oauth); 401 JSON {"error": ...} otherwise, with no redirect
// and no WWW-Authenticate (a script asks, not a person); a provider that
// cannot decide gets its Reply (429, 503...), JSON too. Never cached.
// A script's fetch of it is background traffic: under idle_renewal =
// navigation it does not renew the session.
func serveUserinfo(p auth.Provider, errs *refusal.Errors, g *guard) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		// The answer is JSON whatever the client accepts.
		r.Header.Set("Accept", "application/json")
		u, ok, err := p.Identify(r)
		switch {
		case err != nil:
			errs.Error(w, r, err)
			return
		case !ok:
			errs.Refuse(w, r, refusal.SignInFirst)
			return
		}
		if !g.idle() {
			u, _ = g.who(u)
		}
		out := userinfo{Username: u.Name, Type: u.Type, Groups: u.Groups}
		if out.Groups == nil {
			out.Groups = []string{}
		}
		if e := u.Attrs.Get("email"); e != "" {
			out.Email = &e
		}
		if !u.Expires.IsZero() {
			e := u.Expires.UTC().Format(time.RFC3339)
			out.Expires = &e
		}
		b, _ := json.Marshal(out)
		h := w.Header()
		apiHeaders(h)
		h["Content-Type"] = jsonContentType
		h["X-Content-Type-Options"] = nosniffValue
		w.WriteHeader(http.StatusOK)
		w.Write(append(b, '\n'))
	}
}
