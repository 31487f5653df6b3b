// Package web is backupweb's HTTP surface: the routes, the handlers of the
// catalog page, the JSON API and downloads, the middleware every response
// passes through, and the *http.Server that serves them.
//
// Authentication is not decided here. Every route but /healthz and /_backupweb/
// goes through auth.RequireAuth with the configured provider, and a provider
// with routes of its own (login, logout, OAuth) mounts them on the same mux.
// The handlers read the user from the request's context with
// auth.FromContext.
package web

import (
	"errors"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/accesslog"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// Options are what NewHandler serves.
type Options struct {
	// Provider authenticates every protected route. Required: without one
	// every protected request is refused with 500 and the mistake logged.
	Provider auth.Provider
	// Catalog is the backups folder. Required: without one the pages and
	// the API answer 500 and the mistake is logged.
	Catalog *catalog.Catalog
	// Resolver tells the client's address and scheme from trusted proxies'
	// forwarding headers. Nil trusts no proxy.
	Resolver *peer.Resolver
	// Logger receives handler errors and recovered panics.
	// Default: slog.Default().
	Logger *slog.Logger
	// AccessLog, when true, writes one info line "request" per request
	// ([server] access_log, on by default in the program): to
	// AccessLogger when set, else through Logger.
	AccessLog bool
	// AccessLogger receives the access log's entries when AccessLog is
	// true. The program gives an accesslog.Writer on an accesslog.Buffer
	// (lines formatted without slog, written in batches). Default:
	// accesslog.Slog{Logger}.
	AccessLogger accesslog.Logger
	// Observer, when set, is told about every request (metrics).
	Observer Observer
	// Events, when set, is told of the refusals the access rules make
	// (metrics), as auth.Deps.Hooks.Events is of the providers'.
	Events auth.Events
	// Proxy, when set, is the guarded interface's reverse proxy ([proxy]
	// upstream): every path backupweb does not keep for itself (see
	// NewHandler) passes RequireAuth and goes there, and the catalog
	// routes are not served. Proxied requests get neither backupweb's
	// security headers nor its body limit: they are the upstream's.
	Proxy http.Handler
	// Rules are the access rules ([access], with [proxy] skip_auth_routes
	// and allow_users folded in: config.Access), applied to every
	// protected route, every proxied request and every forward-
	// authentication question. Nil: every signed-in user may do
	// everything.
	Rules *access.Rules
	// Groups, when set, gives the groups of users of types basic and
	// flask-login ([authentication] groups_file): read at every request,
	// so a change of the file applies at the next one.
	Groups GroupSource
	// GroupsHeader is [proxy] groups_header: the forward-authentication
	// answers carry the user's groups in it and in X-Auth-Request-Groups;
	// "" sends none. (The built-in proxy has its own setting.)
	GroupsHeader string
	// NoCatalog serves no catalog routes even without a Proxy: the
	// forward-authentication-only instance ([server] mode = forward-auth),
	// which answers /auth/request, /auth/forward, the sign-in pages and
	// the probes, and 404 everywhere else. Catalog is then not needed.
	NoCatalog bool
	// Ready, when set, must also answer for /readyz to say ready: the
	// store several instances share ([server] store = redis).
	Ready auth.Checker
	// Errors writes every refusal and error; give the providers the same
	// (auth.Deps.Errors). Default: NewErrors(Logger).
	Errors *refusal.Errors
	// MaxAge is [backups] max_age: a folder whose newest backup is older
	// is marked stale on its page and in JSON. Zero: never.
	MaxAge time.Duration
	// Shrink is [backups] shrink_ratio and shrink_window: a folder whose
	// newest backup shrank under it is marked on its page and in JSON
	// ("shrunk"). Zero: never.
	Shrink catalog.Shrink
	// Brand names the service and what it guards on every page, the
	// providers' included ([ui] title and product_name). Zero:
	// backupweb's own wording.
	Brand ui.Brand
	// ConfigFile is the configuration file the program reads, named by
	// the catalog's notice that authentication is off; ConfigMissing
	// tells that it is not there (the built-in defaults run), so the
	// notice says how to make one. "": "the configuration file".
	ConfigFile    string
	ConfigMissing bool
}

// NewErrors returns the program's error writer: JSON for API clients, and
// for people the styled error page (package ui, the stylesheet of every
// page, a link back); unexpected errors, and pages that cannot be
// rendered, are logged to log.
func NewErrors(log *slog.Logger) *refusal.Errors {
	// Refusals under /api/ and on the forward-auth endpoints (/auth/…) are
	// JSON whatever Accept says: their clients are programs.
	jsonPaths := []string{"/api/", "/auth/"}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &refusal.Errors{Logger: log, JSONPaths: jsonPaths, Page: ui.ErrorWriter(log)}
}

// NewHandler returns the whole HTTP surface:
//
//	GET /healthz          200 "ok"; not protected, for load balancers
//	GET /_backupweb/...       the stylesheet and icon ([ui] icon's at
//	                          /_backupweb/brand-icon); not protected
//	GET /                 the top folder's page
//	GET /api/backups      {"backups":[{"name","size","modified"}]}, newest first;
//	                      with ?path=FOLDER/ (and q, sort, order, limit, cursor)
//	                      one page of a folder: {"path","folders","backups","next"}
//	GET /api/me           the current-user record: username, auth_type, ...
//	GET /backups/PATH/    a folder's page (/backups/ is the top folder)
//	GET /backups/PATH     the backup's bytes, as an attachment; for a folder
//	                      written without its slash, 301 to PATH/
//	GET /_backupweb/userinfo  the signed-in user as JSON, or 401 JSON
//	GET /_backupweb/refused   nginx's page for a 403 of /auth/request
//
// plus the provider's own routes when it implements auth.Mounter. GET
// routes answer HEAD too. Unknown paths are 404, known paths with another
// method 405 (with Allow). A path under /backups/ holding "." or ".."
// segments, doubled slashes or an encoded slash is 404, not redirected.
//
// Every response passes, outermost first: panic recovery (logged, 500),
// peer resolution, the security headers (Content-Security-Policy,
// X-Content-Type-Options, Referrer-Policy, X-Frame-Options; a successful
// JSON answer keeps only X-Content-Type-Options, a forward-authentication
// 200 none of them, see apiHeaders), and Go's
// cross-origin protection, which refuses with 403 a state-changing request
// (any method but GET, HEAD, OPTIONS) that a browser marks as coming from
// another site (Sec-Fetch-Site, or an Origin that does not match Host).
// Requests without those headers, from scripts and curl, pass.
func NewHandler(o Options) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	p := o.Provider
	if o.Catalog == nil && o.Proxy == nil && !o.NoCatalog {
		log.Error("web: no catalog given; the backups cannot be listed")
	}
	errs := o.Errors
	if errs == nil {
		errs = NewErrors(log)
	}
	if p == nil {
		log.Error("web: no authentication provider given; every protected request is refused")
		p = missingProvider{errs: errs}
	}
	res := o.Resolver.WithNotice(log, nil)
	s := &site{cat: o.Catalog, log: log, errs: errs, now: time.Now, maxAge: o.MaxAge, shrink: o.Shrink, configFile: o.ConfigFile, configMissing: o.ConfigMissing}
	if l, ok := p.(auth.AccountLinker); ok {
		s.links = l.AccountLinks
	}
	audit := auth.Audit{Log: log, Events: o.Events}
	g := &guard{rules: o.Rules, groups: o.Groups, errs: errs, log: log, audit: audit}
	requireAuth := auth.RequireAuth(g.challenger(p), errs, audit)
	s.guard = g
	protect := func(next http.Handler) http.Handler { return g.protect(requireAuth, next) }
	fa := forwarder{p: p, errs: errs, log: log, g: g, groupsHeader: o.GroupsHeader}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", health)
	mux.HandleFunc("GET /readyz", ready(p, o.Ready, log))
	mux.HandleFunc(RequestAuthPath, fa.answer(false))
	mux.HandleFunc(ForwardAuthPath, fa.answer(true))
	mux.HandleFunc("GET "+RefusedPath, fa.refusedPage())
	mux.HandleFunc("GET "+UserinfoPath, serveUserinfo(p, errs, g))
	ui.Mount(mux)
	mux.Handle("GET "+ui.BrandIconPath, ui.BrandIcon(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.fail(w, r, refusal.NoRoute) })))
	if o.Proxy == nil && !o.NoCatalog {
		mux.Handle("GET /{$}", protect(http.HandlerFunc(s.catalogPage)))
		mux.Handle("GET /api/backups", listingScope(protect(http.HandlerFunc(s.apiBackups))))
		mux.Handle("GET /api/me", protect(http.HandlerFunc(s.apiMe)))
		mux.Handle("GET /backups/{path...}", protect(http.HandlerFunc(s.browse)))
		// Not the folder /backups/: no redirect that would tell a
		// stranger what is served.
		mux.Handle("GET /backups", protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.fail(w, r, refusal.NoRoute) })))
	}
	if m, ok := p.(auth.Mounter); ok {
		m.Mount(mux)
	}

	// The mux would answer a path like /backups/../x with a redirect to
	// its cleaned form; under /backups/ such a path is simply not a
	// backup. It is still protected, so it says nothing to strangers.
	notCanonical := protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, refusal.NoBackup)
	}))
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI == "*" {
			// OPTIONS * asks what the server supports in general.
			w.Header().Set("Allow", "GET, HEAD, POST")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// Both spellings: "/backups/%2e%2e/x" is canonical as written but
		// not once decoded, and the mux would clean it out of /backups/.
		if strings.HasPrefix(r.URL.Path, "/backups/") && (notCleanFolder(r.URL.EscapedPath()) || notCleanFolder(r.URL.Path)) {
			notCanonical.ServeHTTP(w, r)
			return
		}
		if sw, ok := w.(*statusWriter); ok {
			// Under front: one lookup, the mux's own; its refusal of
			// an unrouted request is held back by the writer.
			if code := serveRouted(mux, sw, r); code != 0 {
				s.fail(w, r, unrouted(code))
				return
			}
			setRoute(r)
			return
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			// No route: the mux's own 404 or 405 (with Allow) is plain
			// text; answer it with the same page or JSON as every refusal.
			iw := &interceptWriter{ResponseWriter: w}
			mux.ServeHTTP(iw, r)
			if iw.code != 0 {
				s.fail(w, r, unrouted(iw.code))
			}
			return
		}
		mux.ServeHTTP(w, r)
		setRoute(r)
	})

	var access accesslog.Logger
	if o.AccessLog {
		access = o.AccessLogger
		if access == nil {
			access = accesslog.Slog{L: log}
		}
	}
	own := SecurityHeadersFor(p, limitBody(s, CrossOrigin(errs)(root)))
	if o.Proxy != nil {
		own = proxyOrOwn(p, o.Proxy, protect, own)
	}
	if !o.NoCatalog {
		own = servedHostsOnly(o.Rules, p.Type(), errs, audit, own)
	}
	own = oneCredential(p.Type(), errs, audit, own)
	return front(frontOptions{log: log, site: s, brand: o.Brand, res: res, access: access, obs: o.Observer}, own)
}

// keptPaths are the paths backupweb keeps for itself in proxy mode, besides
// everything under /_backupweb/ and the provider's own (auth.PathOwner).
var keptPaths = []string{"/healthz", "/readyz", "/auth/request", "/auth/forward"}

// rechecker is implemented by a proxy that can check the sign-ins of its
// live connections at once (proxy.Handler).
type rechecker interface{ RecheckNow() }

// proxyOrOwn sends a request for one of backupweb's own paths to own, and
// every other to the upstream behind RequireAuth and the access rules
// (protect, which lets anonymous rules, [proxy] skip_auth_routes among
// them, through without sign-in).
func proxyOrOwn(p auth.Provider, upstream http.Handler, protect func(http.Handler) http.Handler, own http.Handler) http.Handler {
	proxied := protect(upstream)
	kept := map[string]bool{}
	for _, k := range keptPaths {
		kept[k] = true
	}
	if po, ok := p.(auth.PathOwner); ok {
		for _, k := range po.OwnPaths() {
			kept[k] = true
		}
	}
	recheck, _ := upstream.(rechecker)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if kept[r.URL.Path] || strings.HasPrefix(r.URL.Path, "/_backupweb/") || r.RequestURI == "*" {
			own.ServeHTTP(w, r)
			if recheck != nil && r.Method == http.MethodPost && kept[r.URL.Path] {
				// A sign-out (or a sign-in, which ends the session the
				// browser held): close what the ended session keeps open.
				recheck.RecheckNow()
			}
			return
		}
		// One label for every proxied path: the upstream's paths are
		// not ours to name, and labels must stay bounded.
		setRouteLabel(r, "proxy")
		proxied.ServeHTTP(w, r)
	})
}

// unrouted is the refusal of a request no route takes.
func unrouted(code int) refusal.Refusal {
	if code == http.StatusMethodNotAllowed {
		return refusal.WrongMethod
	}
	return refusal.NoRoute
}

// serveRouted serves r through mux, writing to sw, and returns the status
// of the mux's own 404 or 405 when no route matched r (written to no
// one, its headers kept: Allow), 0 otherwise. The mux sets r.Pattern
// before it calls a handler, so a route's own 404 is not taken for the
// mux's.
func serveRouted(mux *http.ServeMux, sw *statusWriter, r *http.Request) int {
	sw.routing = r
	mux.ServeHTTP(sw, r)
	sw.routing = nil
	code := sw.unrouted
	sw.unrouted = 0
	return code
}

// interceptWriter swallows a 404 or 405 the mux writes for a request no
// route matched, keeping the headers it set (Allow), so that the caller can
// answer with the styled page instead. Any other answer (a redirect to a
// cleaned path) passes through.
type interceptWriter struct {
	http.ResponseWriter
	code int
}

func (i *interceptWriter) WriteHeader(code int) {
	if code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
		i.code = code
		return
	}
	i.ResponseWriter.WriteHeader(code)
}

func (i *interceptWriter) Write(p []byte) (int, error) {
	if i.code != 0 {
		return len(p), nil
	}
	return i.ResponseWriter.Write(p)
}

// notClean reports whether path.Clean would change p.
func notClean(p string) bool { return path.Clean(p) != p }

// notCleanFolder is notClean for a path that may name a folder: one final
// slash is allowed.
func notCleanFolder(p string) bool { return notClean(strings.TrimSuffix(p, "/")) }

// MaxBodyBytes bounds every request body: the interface takes forms of a
// few hundred bytes and no uploads. A body announced larger is refused with
// 413 before anything reads it; a longer chunked body stops being read at
// the limit (the handler then answers 413).
const MaxBodyBytes = 64 << 10

// limitBody enforces MaxBodyBytes for every request.
func limitBody(s *site, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			// Not reading the body: the server closes the connection
			// after the answer rather than draining megabytes.
			w.Header().Set("Connection", "close")
			s.fail(w, r, refusal.TooLarge)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// health answers load balancers and monitors. It checks nothing but that
// the process serves HTTP.
func health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte("ok"))
}

// errNoProvider is what missingProvider reports for every request.
var errNoProvider = errors.New("web: no authentication provider configured")

// missingProvider stands in for a nil Options.Provider: it admits no one.
// The zero value denies; "no authentication" must be chosen explicitly.
type missingProvider struct{ errs *refusal.Errors }

func (missingProvider) Type() string { return "missing" }

func (missingProvider) Identify(*http.Request) (auth.User, bool, error) {
	return auth.User{}, false, errNoProvider
}

func (m missingProvider) Challenge(w http.ResponseWriter, r *http.Request) {
	m.errs.Refuse(w, r, refusal.NotConfigured)
}
