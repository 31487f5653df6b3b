package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
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
	errs         *refusal.Errors
	log          *slog.Logger
	g            *guard
	groupsHeader string
}

// RefusedPath is the page nginx shows in place of a 403 of /auth/request
// (its error_page), since nginx keeps no body of an auth subrequest: the
// question of /auth/forward asked again and answered for a person, with
// the styled page (or JSON, by the refusal rule) of whatever refuses.
const RefusedPath = "/_backupweb/refused"

// answer returns the handler of /auth/forward (forward true) or
// /auth/request. It answers a proxy's question about the request it
// forwards: it applies the provider exactly as a protected route does
// (throttling, decoy work and logging included) to this request's cookies
// and Authorization header. Bodies are never more than the error message.
//
// The access rules apply to the forwarded request, as the endpoint's row
// of headers tells it (targetRow) from a trusted proxy: one that an
// anonymous rule names is answered 200 without identity headers and
// without sign-in; a signed-in user the rules refuse (allow_users
// included) is answered 403, which nginx, Traefik and Caddy pass on to the
// browser, never a redirect to the sign-in page. A header of the row that
// a trusted proxy leaves out makes that part of the target unknown, which
// the rules never read as an allow, and is logged once per request. A path
// that reads two ways, asked before sign-in, is refused at once when one
// of its readings falls to a rule that refuses (guard.unreadable). The
// client's method-override headers reach this endpoint on the proxy's
// question, and count as methods; a path-override header
// (access.PathOverrideHeaders) is refused with 400 before anything else.
func (f forwarder) answer(forward bool) http.HandlerFunc {
	return f.ask(targetRow(forward), forward, true, f.vouch)
}

// refusedPage returns the handler of RefusedPath: /auth/forward's question
// (its row of headers, its throttling, its redirect of a browser without
// a session to the login page), whose refusals are pages since the path is
// not under /auth/. A request that is admitted after all (the rules or the
// session changed since nginx asked) is sent back to where it was going,
// as a local path. Headers missing are not logged: any client can ask for
// this page directly, and only nginx's error_page tells it the request.
func (f forwarder) refusedPage() http.HandlerFunc {
	return f.ask(forwardRow, true, false, func(w http.ResponseWriter, r *http.Request, _ *auth.User) {
		next := forwardedNext(r, forwardRow)
		if !strings.HasPrefix(next, "/") {
			next = "/"
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
	})
}

// vouch answers 200 for an admitted request: with u's name, e-mail and
// groups in the answer headers, or none for a request an anonymous rule
// lets through (u nil).
func (f forwarder) vouch(w http.ResponseWriter, _ *http.Request, u *auth.User) {
	h := w.Header()
	if u != nil {
		// userHeader and emailHeader are canonical: assigned without
		// Set's canonicalisation.
		h[userHeader] = []string{u.Name}
		if email := u.Attrs.Get("email"); email != "" {
			h[emailHeader] = []string{email}
		}
		if groups := groupsValue(u.Groups); groups != "" && f.groupsHeader != "" {
			h.Set(groupsAnswerHeader, groups)
			h.Set(f.groupsHeader, groups)
		}
	}
	noBodyHeaders(h)
	w.WriteHeader(http.StatusOK)
}

// ask is the forward-authentication question about the request row
// describes: admitted requests go to admitted (u nil for an anonymous
// rule's), the others get the provider's and the rules' refusals. forward
// selects /auth/forward's answers (429 when throttled, the login page for
// a browser) over /auth/request's; logMissing logs a target the trusted
// proxy did not fully tell.
func (f forwarder) ask(row targetHeaders, forward, logMissing bool, admitted func(http.ResponseWriter, *http.Request, *auth.User)) http.HandlerFunc {
	p, errs := f.p, f.errs
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Control"] = noStoreValue
		t, missing := forwardedTarget(r, row)
		if t.PathOverride != "" {
			// The client's header, passed on by the proxy: the
			// application behind it could serve the path it names
			// rather than the one judged here.
			f.g.audit.RefusedDetail(r, p.Type(), access.ReasonAmbiguous, "path override header "+t.PathOverride, "")
			errs.Refuse(w, r, refusal.PathOverride)
			return
		}
		if logMissing && len(missing) > 0 && !f.g.idle() {
			logUnknownTarget(f.log, r, missing)
		}
		// Every decision below (the rules, a token's scope) reads this
		// one target.
		r = access.WithTarget(r, t)
		if f.g.anonymous(t) {
			admitted(w, r, nil)
			return
		}
		u, ok, err := p.Identify(r)
		var throttled refusal.Throttled
		switch {
		case err != nil && !forward && errors.As(err, &throttled):
			// nginx turns any status but 2xx, 401 and 403 into a 500.
			errs.Refuse(w, r, refusal.ForwardThrottled)
		case err != nil:
			errs.Error(w, r, err)
		case ok:
			if u.Scope != nil && !u.Scope.Permits(r) {
				// A machine token's scope, checked against the forwarded
				// request before the rules; an unknown target is refused.
				f.g.audit.OutOfScope(w, r, errs, u)
				return
			}
			if u, ok = f.g.admit(w, r, u, t); ok {
				admitted(w, r, &u)
			}
		case f.g.unreadable(w, r, t, p.Type(), ambiguousAnswer(forward)):
			// Answered: a path that reads two ways, one way refused.
		case forward && browserNavigation(r, row):
			if lr, isSession := p.(auth.LoginRedirecter); isSession {
				http.Redirect(w, r, lr.LoginURLFor(forwardedNext(r, row)), http.StatusFound)
				return
			}
			p.Challenge(w, r)
		default:
			challenge401(p, errs, w, r)
		}
	}
}

// ambiguousAnswer is the refusal of an ambiguous path before sign-in:
// 400, but 403 for nginx, which turns any status but 2xx, 401 and 403
// into a 500.
func ambiguousAnswer(forward bool) refusal.Refusal {
	if forward {
		return refusal.AmbiguousAddress
	}
	return refusal.AmbiguousPath
}

// challenge401 answers 401: the provider's own challenge for types that
// answer with 401 (basic's WWW-Authenticate), a plain 401 for the session
// types, whose challenge would redirect.
func challenge401(p auth.Provider, errs *refusal.Errors, w http.ResponseWriter, r *http.Request) {
	if _, isSession := p.(auth.LoginRedirecter); isSession {
		errs.Refuse(w, r, refusal.SignInFirst)
		return
	}
	p.Challenge(w, r)
}

// browserNavigation reports whether the forwarded request is a browser
// asking for a page: Accept names text/html and the original method (as
// row's method header tells, from a trusted proxy) is GET.
func browserNavigation(r *http.Request, row targetHeaders) bool {
	if !refusal.Accepts(r, "text/html") {
		return false
	}
	method := http.MethodGet
	if peer.Of(r).Proxied {
		if m := r.Header.Get(row.method); m != "" {
			method = m
		}
	}
	return method == http.MethodGet
}

// forwardedNext rebuilds where the browser was going from the trusted
// proxy's row of headers (X-Forwarded-Uri and -Host on /auth/forward, with
// the scheme from X-Forwarded-Proto): the path and query when the host is
// this one, the absolute URL otherwise (which the login keeps only for a
// redirect host). From any other peer those headers are not believed, and
// next is "/".
func forwardedNext(r *http.Request, row targetHeaders) string {
	if !peer.Of(r).Proxied {
		return "/"
	}
	uri := r.Header.Get(row.uri)
	if uri == "" || !strings.HasPrefix(uri, "/") || strings.HasPrefix(uri, "//") {
		return "/"
	}
	host := r.Header.Get(row.host)
	if host == "" || strings.EqualFold(host, r.Host) {
		return uri
	}
	proto := "http"
	if peer.Of(r).HTTPS {
		proto = "https"
	}
	return proto + "://" + host + uri
}
