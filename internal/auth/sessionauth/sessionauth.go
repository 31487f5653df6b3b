// Package sessionauth is what the session-based authentication types
// (flask-login and oauth) share: identifying a request by its session
// cookie, challenging with a redirect to the login page, starting a session
// after a successful login, and logout.
//
// The types differ only in how a user proves who they are (a password
// form, an identity provider); once they have, the session is the same.
package sessionauth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/ui"
)

// LogoutPath is where a session is ended, with POST and the CSRF token;
// GET shows the confirmation page with that form (see Guard.LogoutPage).
const LogoutPath = "/logout"

// maxLogoutBody bounds what Logout reads of a request body.
const maxLogoutBody = 64 << 10

// CSRFHeader is the header API clients may use instead of the csrf_token
// form field.
const CSRFHeader = "X-CSRF-Token"

// Options configure a Guard.
type Options struct {
	// Type is the authentication type's name, for user records and logs.
	Type string
	// Manager keeps the sessions. Required by New; Open makes it (with
	// the store under it, which the guard then owns and closes).
	Manager *session.Manager
	// Settings configure the sessions Open keeps (the type's session
	// keys; zero values take their defaults).
	Settings
	// LoginPath is where Challenge sends browsers, with ?next=. Required.
	LoginPath string
	// LogoutRedirect is where Logout sends the browser. Default LoginPath.
	// A type whose login page signs the user straight back in (oauth, while
	// the identity provider remembers them) names a signed-out page here.
	LogoutRedirect string
	// SignedOut, when set, is asked where the browser goes once Logout has
	// ended the session d: an absolute URL that takes the place of next
	// and LogoutRedirect, or "" for those. A type whose identity provider
	// keeps a session of its own (oauth: OpenID Connect RP-initiated
	// logout) names the provider's end-session address here.
	SignedOut func(r *http.Request, d session.Data) string
	// Logger receives refused attempts. Default slog.Default().
	Logger *slog.Logger
	// Events is told of refused attempts and sign-outs. Default: nobody;
	// Open takes deps.Hooks.Events.
	Events auth.Events
	// Errors writes refusals and errors. Default: a zero refusal.Errors.
	Errors *refusal.Errors
	// RedirectHosts, when set (with a cookie domain), are the hosts
	// (exact, or ".example.com" for its sub-domains) that next may name
	// as an absolute https URL; see Guard.SafeNext.
	RedirectHosts []string
	// Admit, when set, is asked on every request whether the session is
	// still admitted (for example, its user still listed in the user file
	// with the credential the session was made with). A session no longer
	// admitted is ended.
	Admit func(d session.Data) bool
	// Refusal, when set, names why Admit refused d, for the log and the
	// metrics (one of auth.RefusalReasons). Default auth.ReasonNotAdmitted.
	Refusal func(d session.Data) string
	// NoAccountPage leaves out the account page and its link
	// (MountAccount adds nothing); Open takes deps.NoAccountPage.
	NoAccountPage bool
}

// Guard identifies requests by session and serves logout. Made by Open,
// it owns the sessions (the store and the manager) and closes them; the
// session types embed one, so that identifying, challenging, logout,
// readiness and closing are written once.
type Guard struct {
	o        Options
	sessions *Sessions // nil for a guard made by New
	// accountExtra fills the type's own parts of the account page.
	accountExtra AccountExtra
}

var (
	_ auth.Rechecker      = (*Guard)(nil)
	_ auth.SessionCounter = (*Guard)(nil)
)

// Open opens the sessions of the type o.Type (see OpenSessions: the
// shared store, or a file store in deps.StateDir) and returns the guard
// that owns them. o.Manager is ignored.
func Open(deps auth.Deps, o Options) (*Guard, error) {
	s, err := OpenSessions(deps, o.Type, o.Settings)
	if err != nil {
		return nil, err
	}
	o.Manager = s.Manager
	if o.Logger == nil {
		o.Logger = deps.Log()
	}
	if o.Events == nil {
		o.Events = deps.Hooks.Events
	}
	if o.Errors == nil {
		o.Errors = deps.Errs()
	}
	if o.RedirectHosts == nil {
		o.RedirectHosts = RedirectHosts(deps)
	}
	o.NoAccountPage = o.NoAccountPage || deps.NoAccountPage
	g := New(o)
	g.sessions = s
	return g, nil
}

// New returns a Guard for o, over o.Manager, which it does not own.
func New(o Options) *Guard {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Errors == nil {
		o.Errors = &refusal.Errors{}
	}
	if o.LogoutRedirect == "" {
		o.LogoutRedirect = o.LoginPath
	}
	return &Guard{o: o}
}

// audit is where the guard's refusals and sign-outs are logged and
// counted.
func (g *Guard) audit() auth.Audit { return auth.Audit{Log: g.o.Logger, Events: g.o.Events} }

// Manager returns the session manager.
func (g *Guard) Manager() *session.Manager { return g.o.Manager }

// Store returns the store the sessions are kept in, nil for a guard made
// by New. Other short-lived server-side state that must be shared the
// same way (a passkey ceremony) is kept there too.
func (g *Guard) Store() session.Store {
	if g.sessions == nil {
		return nil
	}
	return g.sessions.store
}

// LoginPath returns the path of the login page.
func (g *Guard) LoginPath() string { return g.o.LoginPath }

// Ready reports whether the session store answers (see auth.Checker).
func (g *Guard) Ready(ctx context.Context) error {
	if g.sessions == nil {
		return nil
	}
	return g.sessions.Ready(ctx)
}

// SessionCount returns how many sessions the store holds, when it can
// tell cheaply (metrics).
func (g *Guard) SessionCount() (int, bool) {
	if g.sessions == nil {
		return 0, false
	}
	return g.sessions.Count()
}

// Close writes the store's pending changes and releases it, when the
// guard owns it.
func (g *Guard) Close() error {
	if g.sessions == nil {
		return nil
	}
	return g.sessions.Close()
}

// Identify admits r when it carries the cookie of a live session whose user
// is still admitted. The user record holds the session's user name and
// attributes, and the CSRF token its forms must carry.
func (g *Guard) Identify(r *http.Request) (auth.User, bool, error) {
	s, ok, err := g.o.Manager.Load(r)
	if err != nil || !ok {
		return auth.User{}, false, err
	}
	if g.o.Admit != nil && !g.o.Admit(s.Data) {
		// Only this session ends: the user may hold a newer one, made
		// with the current password, that stays good.
		g.audit().Refused(r, g.o.Type, g.refusal(s.Data), s.Username)
		if err := g.o.Manager.Revoke(r.Context(), s); err != nil {
			g.o.Logger.Error("auth: ending a session that is no longer admitted", "user", s.Username, "err", err)
		}
		return auth.User{}, false, nil
	}
	u := auth.User{Name: s.Username, Type: g.o.Type, Attrs: s.Attrs, SecondFactor: s.Attrs.Get(auth.AttrSecondFactor), Expires: s.Expires()}
	return u.WithCSRFSource(s), true, nil
}

// refusal names why Admit refused d.
func (g *Guard) refusal(d session.Data) string {
	if g.o.Refusal == nil {
		return auth.ReasonNotAdmitted
	}
	return g.o.Refusal(d)
}

// PollRevocations ends the sessions `backupweb session revoke` asked for
// (session.Manager.ApplyRevocations: a file store's requests), logging how
// many. The provider's watch loop runs it.
func (g *Guard) PollRevocations() {
	n, err := g.o.Manager.ApplyRevocations(context.Background())
	if err != nil {
		g.o.Logger.Error("auth: ending the sessions `session revoke` asked for failed", "auth_type", g.o.Type, "err", err)
		return
	}
	if n > 0 {
		g.o.Logger.Info("auth sessions ended by session revoke", "auth_type", g.o.Type, "sessions", n)
	}
}

// Recheck returns the check of r's session (auth.Rechecker): it is still
// in the store, neither idle nor past its lifetime, of the same user, and
// still admitted (Options.Admit: the user is listed with the credential
// the session was made with). It records no activity, so a WebSocket left
// open does not keep its session alive. A request without a session cookie
// (which Identify would not have admitted) gets a check that always says
// no.
func (g *Guard) Recheck(r *http.Request, u auth.User) func(ctx context.Context) (bool, error) {
	h, ok := g.o.Manager.Hold(r)
	if !ok {
		return func(context.Context) (bool, error) { return false, nil }
	}
	return func(ctx context.Context) (bool, error) {
		d, ok, err := g.o.Manager.Still(ctx, h)
		if err != nil || !ok {
			return false, err
		}
		if d.Username != u.Name || g.o.Admit != nil && !g.o.Admit(d) {
			return false, nil
		}
		return true, nil
	}
}

// Challenge sends a browser navigation (a GET accepting text/html) to the
// login page with next set to the original path and query, and answers
// everything else 401.
func (g *Guard) Challenge(w http.ResponseWriter, r *http.Request) {
	if auth.WantsHTML(r) {
		http.Redirect(w, r, g.LoginURLFor(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	g.o.Errors.Refuse(w, r, refusal.SignInFirst)
}

// Begin starts a session for d after a successful login. The session gets
// a brand-new id; any session the request carried is revoked first.
func (g *Guard) Begin(w http.ResponseWriter, r *http.Request, d session.Data) error {
	d.Client, d.Agent = peer.Of(r).String(), shortAgent(r.UserAgent())
	_, err := g.o.Manager.Start(w, r, d)
	return err
}

// maxAgent bounds the User-Agent kept with a session, for display.
const maxAgent = 160

// shortAgent returns ua cut to maxAgent bytes (at a rune boundary), with
// control characters dropped.
func shortAgent(ua string) string {
	ua = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, ua)
	if len(ua) <= maxAgent {
		return ua
	}
	cut := maxAgent
	for cut > 0 && !utf8.RuneStart(ua[cut]) {
		cut--
	}
	return ua[:cut]
}

// Logout is the handler of POST /logout. It needs the session's CSRF token
// in the csrf_token form field or the X-CSRF-Token header (else 403); it
// revokes the session on the server, clears the cookie and answers 303 to
// the form's next (or the query's next or rd) when SafeNext accepts it,
// else to Options.LogoutRedirect (the login page, saying "You have been
// signed out", by default); Options.SignedOut, when it names a place for
// the session just ended, wins over both. Without a session it still clears the cookie
// and redirects, so a stale tab's sign-out button does what the user
// expects.
func (g *Guard) Logout(w http.ResponseWriter, r *http.Request) {
	// The form holds one token: whatever else is sent is not read.
	r.Body = http.MaxBytesReader(w, r.Body, maxLogoutBody)
	s, ok, err := g.o.Manager.Load(r)
	if err != nil {
		g.o.Errors.Error(w, r, err)
		return
	}
	if ok {
		token := r.Header.Get(CSRFHeader)
		if token == "" {
			token = r.PostFormValue("csrf_token")
		}
		if !g.o.Manager.ValidCSRF(s, token) {
			g.audit().Refused(r, g.o.Type, auth.ReasonBadCSRF, s.Username)
			g.o.Errors.Refuse(w, r, refusal.StaleForm, ui.BrandOf(r.Context()).ProductName())
			return
		}
	} else if r.Header.Get(CSRFHeader) == "" && r.PostFormValue("csrf_token") == "" {
		g.o.Errors.Refuse(w, r, refusal.StaleForm, ui.BrandOf(r.Context()).ProductName())
		return
	}
	if err := g.o.Manager.Destroy(w, r); err != nil {
		g.o.Errors.Error(w, r, err)
		return
	}
	if ok {
		g.audit().SignedOut(r, g.o.Type, s.Username)
		if g.o.SignedOut != nil {
			if to := g.o.SignedOut(r, s.Data); to != "" {
				SeeOther(w, to)
				return
			}
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	if next := g.logoutNext(r); next != "" {
		SeeOther(w, next)
		return
	}
	to := g.o.LogoutRedirect
	if to == g.o.LoginPath {
		to += "?" + SignedOutQuery
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// SafeNext returns next when it is a local path (see localPath) or an
// absolute https URL whose host is one of Options.RedirectHosts, else "/".
// Nothing else is ever a redirect target.
func (g *Guard) SafeNext(next string) string {
	if local := localPath(next); local != "/" || next == "/" || len(g.o.RedirectHosts) == 0 {
		return local
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Opaque != "" || len(next) > 2048 ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range g.o.RedirectHosts {
		if host == h || strings.HasPrefix(h, ".") && strings.HasSuffix(host, h) {
			return next
		}
	}
	return "/"
}

// LoginURLFor returns the login page's URL with next as its query
// parameter, next checked by SafeNext (so it may name a redirect host):
// "/" when next is no safe target. next is always present, so a login page
// can tell where the browser was going.
func (g *Guard) LoginURLFor(next string) string {
	return g.o.LoginPath + "?next=" + url.QueryEscape(g.SafeNext(next))
}

// SignedOutQuery is added to the login page's URL after a logout, so the
// page can say "You have been signed out." It carries no state: anyone may
// set it, and all it does is show that sentence.
const SignedOutQuery = "signed_out=1"

// localPath returns next when it is a local path, else "/". A local path
// starts with exactly one slash: "//host" and "/\host" are read by browsers
// as another host, and an absolute URL is another site. Backslashes, which
// browsers treat as slashes, control characters, which some browsers strip
// before resolving, and "." or ".." segments, which a redirect cleans into
// something else ("/./\host" becomes "/\host"), are refused anywhere.
func localPath(next string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 {
		return "/"
	}
	if strings.HasPrefix(next, "//") || strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return "/"
		}
	}
	return next
}
