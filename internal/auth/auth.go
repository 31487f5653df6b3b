// Package auth is the core of backupweb's pluggable authentication: the
// current-user record, the Provider interface every authentication type
// implements, the context that carries the user to handlers, and the
// RequireAuth middleware that protects routes.
//
// The Flask-era service's programmatic interface is package backupweb at
// the module root (NewProvider, Mount, RequireAuth, CurrentUser), built on
// these pieces:
//
//	get_auth_provider(type, config)  app.BuildProvider (package internal/app)
//	provider.init_app(app)           Mounter.Mount, for providers with routes
//	@provider.require_auth           RequireAuth(provider, errs, audit) middleware
//	provider.get_current_user()      FromContext(r.Context())
//
// Authentication is split in two steps, as in most well-kept Go servers:
// Identify is a pure function of the request that says who made it and never
// writes a response; Challenge answers the requests Identify did not admit
// (a 401 with WWW-Authenticate, or a redirect to a login page). RequireAuth
// joins the two.
package auth

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/refusal"
)

// Anonymous is the user name of requests admitted by type none.
const Anonymous = "anonymous"

// AttrSecondFactor is the session attribute that records the second
// factor a sign-in was completed with (User.SecondFactor).
const AttrSecondFactor = "second_factor"

// User is the current-user record: who made the request and how they were
// admitted. It is a value; handlers may copy it freely.
type User struct {
	// Name is the user name: the configured one for basic, the user file's
	// for flask-login, the e-mail address for oauth, Anonymous for none.
	Name string
	// Type is the authentication type that admitted the user.
	Type string
	// Attrs holds facts some types know (for oauth: "email", "name",
	// "provider"); empty for types that know nothing more. It cannot be
	// changed in place: a session's attributes are its stored,
	// authenticated ones, shared with every handler without a copy.
	Attrs attrs.Map
	// Groups are the user's groups, sorted and without repeats: from the
	// groups file for basic and flask-login, from the identity provider
	// (organisations, teams, groups claim) for oauth. Nil when the user
	// belongs to none or the type knows no groups.
	Groups []string
	// SecondFactor names the second factor that completed this user's
	// sign-in ("totp", "passkey" or "recovery"), or "" when the session was
	// made with a password alone or the type has no second factor.
	SecondFactor string
	// Expires is when the user's session ends if no further navigation
	// renews it (the earlier of its idle and absolute deadlines); zero for
	// types without sessions (none, basic), which admit each request on
	// its own. Not part of Record.
	Expires time.Time
	// Scope, set for a request admitted by a machine token, limits what
	// it may do (access.Scope: read-only, a path prefix); RequireAuth and
	// forward authentication check it before the access rules. Nil: no
	// limit. Not part of Record.
	Scope Scope
	// csrf computes the token state-changing requests of this user's
	// session must carry (logout). Nil for types without sessions. It is
	// asked so the token (an HMAC, masked afresh) is only computed for
	// the pages that show a logout button, not on every request.
	csrf CSRFSource
}

// CSRFSource computes the CSRF token of a session when a page needs it
// (a session's own value, such as *session.Session: no allocation to
// hand it over).
type CSRFSource interface {
	CSRFToken() string
}

// csrfFunc is a function as a CSRFSource.
type csrfFunc func() string

func (f csrfFunc) CSRFToken() string { return f() }

// WithCSRF returns a copy of u whose session's CSRF token is computed by
// token when a page needs it.
func (u User) WithCSRF(token func() string) User {
	if token == nil {
		u.csrf = nil
		return u
	}
	return u.WithCSRFSource(csrfFunc(token))
}

// WithCSRFSource returns a copy of u whose session's CSRF token is
// computed by src when a page needs it.
func (u User) WithCSRFSource(src CSRFSource) User {
	u.csrf = src
	return u
}

// CSRFToken returns the token state-changing requests of this user's
// session must carry (the logout form's csrf_token), or "" for types
// without sessions. It is never part of Record.
func (u User) CSRFToken() string {
	if u.csrf == nil {
		return ""
	}
	return u.csrf.CSRFToken()
}

// Record returns the user as the current-user mapping of the Flask-era
// service's get_current_user(): at
// least "username" and "auth_type", then the attributes.
func (u User) Record() map[string]string {
	m := make(map[string]string, u.Attrs.Len()+2)
	for k, v := range u.Attrs.All() {
		m[k] = v
	}
	m["username"] = u.Name
	m["auth_type"] = u.Type
	return m
}

// HasSession reports whether the user holds a session that can be ended
// with a logout.
func (u User) HasSession() bool { return u.csrf != nil }

// Provider is one authentication type. Implementations are safe for
// concurrent use.
type Provider interface {
	// Type returns the type's name as the configuration spells it
	// ("none", "basic", "flask-login", "oauth").
	Type() string

	// Identify reports who made r. It never writes a response.
	//
	// ok is false when r carries no credentials or wrong ones: that is an
	// answer ("no"), not an error. A provider logs refused attempts itself
	// with Audit.Refused, since only it knows the reason.
	//
	// err is non-nil only when the provider could not decide: the client is
	// throttled (*RetryError), bcrypt work is saturated, a session store
	// failed. RequireAuth answers it with the Reply ReplyTo gives.
	Identify(r *http.Request) (u User, ok bool, err error)

	// Challenge answers a request that Identify did not admit: 401 with
	// WWW-Authenticate for basic; for session types, a redirect to the login
	// page for browsers and 401 for everything else.
	Challenge(w http.ResponseWriter, r *http.Request)
}

// Deps is what the program hands every provider besides its configuration
// section: the services it shares with them (logger, clock, error writer,
// shared state) and the facts they need (secret key, state folder, cookie
// domain), injectable for tests.
type Deps struct {
	// Errors writes refusals and errors (the program's is the web layer's
	// styled page with its logger). Default: a zero Errors (plain text).
	Errors *refusal.Errors
	// Logger receives refused attempts and operational messages.
	// Default: slog.Default().
	Logger *slog.Logger
	// SecretKey is BACKUP_SECRET_KEY. The program checks it (set, at least
	// 32 characters) for the types that need it before calling them.
	SecretKey []byte
	// PreviousSecretKey is BACKUP_SECRET_KEY_PREVIOUS, nil when unset:
	// during a rotation, accepted for reading what was made under it
	// (sessions, sealed values, second factors), never for writing. The
	// program checks it as it checks SecretKey.
	PreviousSecretKey []byte
	// StateDir is where session state is kept ([server] state_dir).
	StateDir string
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// HTTPClient is used for calls to identity providers. Default: a
	// client with timeouts, chosen by the provider.
	HTTPClient *http.Client
	// CookieDomain is [server] cookie_domain: over https the session
	// cookies name it (and carry __Secure- instead of __Host-), so one
	// sign-in serves every host name of the site. Empty: the login's own
	// host only.
	CookieDomain string
	// RedirectHosts is [proxy] redirect_hosts: with CookieDomain, the
	// hosts a login's next may name as an absolute https URL.
	RedirectHosts []string
	// Shared, when set, holds the state several instances share (see
	// Shared). Nil: sessions in StateDir, counters and OAuth states in
	// this process.
	Shared Shared
	// PublicURL is [server] public_url: the absolute URL users reach the
	// service at (scheme and host), nil when unset. Passkeys take their
	// relying-party id and origin from it.
	PublicURL *url.URL
	// Hooks observe what the provider does (the program's metrics).
	// Zero: nothing is observed.
	Hooks Hooks
	// NoAccountPage leaves out the account page (the user's sessions,
	// and flask-login's token forms) and its link: a library's host that
	// did not ask for it gets no page it never mentioned. The program
	// serves it.
	NoAccountPage bool
	// NoMachineTokens makes flask-login ignore machine tokens
	// ("Authorization: Bearer bwt_..."): a request is identified by its
	// session alone. The program accepts them.
	NoMachineTokens bool
}

// Errs returns the error writer, never nil.
func (e Deps) Errs() *refusal.Errors {
	if e.Errors == nil {
		return &refusal.Errors{Logger: e.Logger}
	}
	return e.Errors
}

// Log returns the logger, defaulting to slog.Default().
func (e Deps) Log() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}

// Clock returns the clock, defaulting to time.Now.
func (e Deps) Clock() func() time.Time {
	if e.Now == nil {
		return time.Now
	}
	return e.Now
}

// Scope is what limits a request admitted by a machine token
// (access.Scope): Permits reports whether it lets r through, read as the
// access rules read it (access.TargetOf), String names it in a log line.
// The core only asks it; what a scope is belongs to the access rules.
type Scope interface {
	Permits(r *http.Request) bool
	// String describes the scope for a log line (the refusal's detail).
	String() string
}

type userKey struct{}

// NewContext returns a copy of ctx that carries u.
func NewContext(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// FromContext returns the user RequireAuth admitted: what the Flask-era
// service called get_current_user(). ok is false outside a protected route.
func FromContext(ctx context.Context) (User, bool) {
	if u, ok := ctx.Value(userKey{}).(User); ok {
		return u, true
	}
	return carriedUser(ctx)
}
