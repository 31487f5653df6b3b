package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/peer"
)

// Forward-authentication endpoints, for a proxy that asks backupweb about
// each request it is about to pass on.
const (
	// RequestAuthPath is for nginx's auth_request: 200 or 401, and 403
	// when throttled, since nginx treats any other status as an error.
	RequestAuthPath = "/auth/request"
	// ForwardAuthPath is for Traefik's forwardAuth and Caddy's
	// forward_auth: 200, 401, a redirect to the login page for browsers
	// of session types, and 429 when throttled.
	ForwardAuthPath = "/auth/forward"
)

// Headers an authenticated answer carries for the proxy to copy upstream.
const (
	userHeader  = "X-Auth-Request-User"
	emailHeader = "X-Auth-Request-Email"
)

// groupsAnswerHeader carries the user's groups in a forward-authentication
// answer, beside X-Auth-Request-User (and in the header [proxy]
// groups_header names).
const groupsAnswerHeader = "X-Auth-Request-Groups"

// forwarder answers the forward-authentication endpoints.
type forwarder struct {
	p            auth.Provider
	errs         *auth.Errors
	log          *slog.Logger
	g            *guard
	groupsHeader string
}

// answer returns the handler of /auth/forward (forward true) or
// /auth/request. It answers a proxy's question about the request it
// forwards: it applies the provider exactly as a protected route does
// (throttling, decoy work and logging included) to this request's cookies
// and Authorization header. Bodies are never more than the error message.
//
// The access rules apply to the forwarded request (X-Forwarded-Method,
// -Host and -Uri from a trusted proxy): one that an anonymous rule names
// is answered 200 without identity headers and without sign-in; a
// signed-in user the rules refuse (allow_users included) is answered 403,
// which nginx, Traefik and Caddy pass on to the browser, never a redirect
// to the sign-in page.
func (f forwarder) answer(forward bool) http.HandlerFunc {
	p, errs := f.p, f.errs
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Control"] = noStoreValue
		t := forwardedTarget(r)
		if f.g.anonymous(t) {
			noBodyHeaders(w.Header())
			w.WriteHeader(http.StatusOK)
			return
		}
		u, ok, err := p.Identify(r)
		var throttled auth.Throttled
		switch {
		case err != nil && !forward && errors.As(err, &throttled):
			// nginx turns any status but 2xx, 401 and 403 into a 500.
			errs.Refuse(w, r, auth.ForwardThrottled)
		case err != nil:
			errs.Error(w, r, err)
		case ok:
			if u.Scope != nil && !u.Scope.Permits(t.Method, t.URL, r.Header) {
				// A machine token's scope, checked against the forwarded
				// request before the rules; an unknown target is refused.
				errs.Refuse(w, r, auth.OutOfScope)
				return
			}
			if u, ok = f.g.admit(w, r, u, t); !ok {
				return
			}
			// userHeader and emailHeader are canonical: assigned
			// without Set's canonicalisation.
			h := w.Header()
			h[userHeader] = []string{u.Name}
			if email := u.Attrs["email"]; email != "" {
				h[emailHeader] = []string{email}
			}
			if groups := groupsValue(u.Groups); groups != "" && f.groupsHeader != "" {
				w.Header().Set(groupsAnswerHeader, groups)
				w.Header().Set(f.groupsHeader, groups)
			}
			noBodyHeaders(h)
			w.WriteHeader(http.StatusOK)
		case forward && browserNavigation(r):
			if lr, isSession := p.(auth.LoginRedirecter); isSession {
				http.Redirect(w, r, lr.LoginURLFor(forwardedNext(r)), http.StatusFound)
				return
			}
			p.Challenge(w, r)
		default:
			challenge401(p, errs, w, r)
		}
	}
}

// challenge401 answers 401: the provider's own challenge for types that
// answer with 401 (basic's WWW-Authenticate), a plain 401 for the session
// types, whose challenge would redirect.
func challenge401(p auth.Provider, errs *auth.Errors, w http.ResponseWriter, r *http.Request) {
	if _, isSession := p.(auth.LoginRedirecter); isSession {
		errs.Refuse(w, r, auth.SignInFirst)
		return
	}
	p.Challenge(w, r)
}

// browserNavigation reports whether the forwarded request is a browser
// asking for a page: Accept names text/html and the original method (as
// X-Forwarded-Method tells, from a trusted proxy) is GET.
func browserNavigation(r *http.Request) bool {
	if !auth.Accepts(r, "text/html") {
		return false
	}
	method := http.MethodGet
	if peer.Of(r).Proxied {
		if m := r.Header.Get("X-Forwarded-Method"); m != "" {
			method = m
		}
	}
	return method == http.MethodGet
}

// forwardedNext rebuilds where the browser was going from the trusted
// proxy's X-Forwarded-Proto, -Host and -Uri: the path and query when the
// host is this one, the absolute URL otherwise (which the login keeps only
// for a redirect host). From any other peer those headers are not
// believed, and next is "/".
func forwardedNext(r *http.Request) string {
	if !peer.Of(r).Proxied {
		return "/"
	}
	uri := r.Header.Get("X-Forwarded-Uri")
	if uri == "" || !strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, "//") {
		return "/"
	}
	host := r.Header.Get("X-Forwarded-Host")
	if host == "" || strings.EqualFold(host, r.Host) {
		return uri
	}
	proto := "http"
	if peer.Of(r).HTTPS {
		proto = "https"
	}
	return proto + "://" + host + uri
}
