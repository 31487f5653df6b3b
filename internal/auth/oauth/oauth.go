// Package oauth is authentication type oauth: sign-in delegated to an
// identity provider with the OAuth 2.0 authorization code flow (PKCE S256),
// and OpenID Connect where the provider offers it, then a server-side
// session as for type flask-login.
//
// Providers are data (see ProviderNames): google (OpenID Connect with
// discovery), github and gitlab (OAuth 2.0 with their REST APIs), and
// generic (OpenID Connect when an issuer is configured, plain OAuth 2.0
// with the user-information endpoint otherwise). Whoever signs in is known
// by the e-mail address the provider vouches for, and admitted by the Rule
// (authorized_domains, authorized_users, and by group authorized_orgs,
// authorized_teams, authorized_groups). The account's groups (GitHub
// organisations and teams, GitLab groups, a generic provider's groups
// claim) are read at sign-in, kept in the session record and given to
// every request as auth.User.Groups; a failure to read them refuses the
// sign-in.
//
// Routes: GET /oauth/login starts a sign-in; GET /oauth/callback (the path
// of redirect_uri) completes it; POST /logout ends the session, and with an
// OpenID Connect provider that has an end_session_endpoint sends the
// browser there to end the provider's session too (RP-initiated logout);
// GET /oauth/signed-out says so; POST /oauth/backchannel-logout takes the
// provider's logout tokens and ends the sessions they name on every
// instance (back-channel logout). OpenID Connect discovery happens on the first
// sign-in, not at start-up, so the service starts while the provider is
// down; a failed discovery is retried by later sign-ins.
//
// The package keeps no access token: it lives only while the callback
// reads the account. The ID token is kept in the session's server-side
// record, never in a cookie, as the hint RP-initiated logout sends. The
// package does not refresh tokens or call the provider again during a
// session.
package oauth

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/filewatch"
	"github.com/backupweb/backupweb/internal/once"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/throttle"
	"github.com/backupweb/backupweb/internal/ui"
)

// Name is the type's name in configuration.
const Name = "oauth"

// Paths served by the provider.
const (
	// LoginPath starts a sign-in; unauthenticated browsers are sent here.
	LoginPath = "/oauth/login"
	// CallbackPath is the path redirect_uri must have.
	CallbackPath = "/oauth/callback"
	// SignedOutPath is where logout leads: a page saying so, rather than
	// LoginPath, which would sign the user straight back in while the
	// identity provider still remembers them.
	SignedOutPath = "/oauth/signed-out"
	// BackchannelLogoutPath takes the identity provider's logout tokens
	// (OpenID Connect Back-Channel Logout 1.0): the backchannel_logout_uri
	// to register is the service's public address followed by it.
	BackchannelLogoutPath = "/oauth/backchannel-logout"
)

// requestTimeout bounds each request to the identity provider made with
// the default HTTP client, and discovery.
const requestTimeout = 10 * time.Second

// Provider signs users in through an identity provider and keeps their
// sessions.
type Provider struct {
	// Guard identifies requests by session, challenges, serves logout,
	// and owns the sessions (readiness, closing). The identity provider is
	// not asked for readiness: it is reached only at sign-in, and its
	// outage must not take signed-in users off a load balancer.
	*sessionauth.Guard

	cfg    Config
	kind   *kind
	client *http.Client
	log    *slog.Logger
	now    func() time.Time
	audit  auth.Audit // refusals and sign-ins logged and counted, each line naming the provider
	errs   *refusal.Errors
	// spend marks token of kind used for ttl, across instances with a
	// shared state, and reports whether it was unused until now: the
	// sign-in states and the logout tokens' jti.
	spend func(ctx context.Context, kind, token string, ttl time.Duration) (unused bool, err error)
	// logoutErrs is errs answering JSON whatever the client asks: the
	// back-channel logout's caller is the identity provider.
	logoutErrs *refusal.Errors
	openID     *openID // nil without OpenID Connect
	// begins limits the sign-ins /oauth/login starts, per client address
	// and in total: each is a state the callback spends.
	begins *throttle.Rate
}

// MaxSpent is how many used states one process remembers (store = file):
// the states of callbacks within FlowTTL. When full, callbacks are refused
// (503 with Retry-After) until the oldest expire, never forgotten early;
// the limit on /oauth/login keeps it from filling.
const MaxSpent = once.DefaultMax

var (
	_ auth.Provider = (*Provider)(nil)
	_ auth.Mounter  = (*Provider)(nil)
	_ io.Closer     = (*Provider)(nil)

	_ auth.FormTargeter = (*Provider)(nil)
)

// New returns a Provider for cfg, its empty fields taking the defaults; it
// refuses a configuration Validate refuses. Sessions are kept in a
// file store under deps.StateDir, or in deps.Shared's store. deps.SecretKey keys the
// sessions and the sealed sign-in cookies; deps.HTTPClient, when set, makes
// every request to the identity provider (default: a client with a 10s
// timeout). New makes no network request.
func New(cfg Config, deps auth.Deps) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	k, _ := lookupKind(cfg.Provider)
	cfg = cfg.withDefaults(k)
	client := deps.HTTPClient
	if client == nil {
		client = defaultClient()
	}
	p := &Provider{
		cfg:    cfg,
		kind:   k,
		client: client,
		log:    deps.Log(),
		now:    deps.Clock(),
		audit:  deps.Audit().With("provider", cfg.Provider),
		errs:   deps.Errors,
		begins: throttle.NewRate(throttle.RateOptions{Now: deps.Clock(), OnTotal: func() {
			auth.LogBeginFlood(deps.Log(), Name, "sign-ins")
		}}),
	}
	if p.errs == nil {
		// Without the program's writer, a person still gets the styled
		// page with the sign-in's own title.
		p.errs = &refusal.Errors{Logger: p.log, Page: ui.ErrorWriter(p.log)}
	}
	jsonErrs := *p.errs
	jsonErrs.JSONPaths = append(slices.Clone(jsonErrs.JSONPaths), BackchannelLogoutPath)
	p.logoutErrs = &jsonErrs
	if deps.Shared != nil {
		p.spend = deps.Shared.SpendOnce
	} else {
		spent, err := once.New(once.Options{Max: MaxSpent, Now: deps.Clock()})
		if err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		p.spend = func(_ context.Context, kind, token string, ttl time.Duration) (bool, error) {
			return spent.Spend(kind, token, ttl)
		}
	}
	var err error
	p.Guard, err = sessionauth.Open(deps, sessionauth.Options{
		Type:           Name,
		LoginPath:      LoginPath,
		LogoutRedirect: SignedOutPath,
		SignedOut:      p.endSessionURL,
		Settings:       cfg.Settings,
		Admit:          p.admits,
	})
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	if cfg.OpenIDConnect() {
		p.openID = &openID{
			issuer: cfg.Issuer, clientID: cfg.ClientID,
			authURL: cfg.AuthURL, tokenURL: cfg.TokenURL, userinfoURL: cfg.UserinfoURL,
			endSessionURL: cfg.EndSessionURL,
			client:        client, now: deps.Clock(),
		}
	}
	return p, nil
}

// defaultClient is the HTTP client for identity providers: the default
// transport (which honours HTTPS_PROXY) with every request bounded.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = requestTimeout
	return &http.Client{Transport: t, Timeout: requestTimeout}
}

// Type returns "oauth".
func (p *Provider) Type() string { return Name }

// Config returns the configuration in use, defaults applied.
func (p *Provider) Config() Config { return p.cfg }

// admits reports whether a stored session still belongs to this provider
// and is admitted by the current rule, with the groups and hosted domain
// recorded at sign-in (a session outlives a configuration change only if
// the new rule admits it too); the guard asks it at every request.
func (p *Provider) admits(d session.Data) bool {
	return d.Attrs.Get("provider") == p.cfg.Provider && p.cfg.Rule.AdmitAccount(accountOf(d, p.cfg.Rule.ByGroup())) == nil
}

// accountOf is the account a session was made for, as sign-in recorded it
// in the session's attributes (which the record's MAC covers); its groups
// only when withGroups is set (a rule without lists by group needs none).
func accountOf(d session.Data, withGroups bool) Account {
	a := Account{Email: d.Username, HostedDomain: d.Attrs.Get(hostedDomainAttr)}
	if withGroups {
		a.Groups = decodeGroups(d.Attrs.Get(groupsAttr))
	}
	return a
}

// Identify admits r when it carries the cookie of a live session still
// admitted (see sessionauth.Guard.Identify). The user's groups are those
// recorded at sign-in, moved from the session's attributes to
// auth.User.Groups. What the session keeps for the identity provider's
// logout (the ID token, its subject and session id) stays in the store:
// it never reaches the user record, /api/me or an upstream.
func (p *Provider) Identify(r *http.Request) (auth.User, bool, error) {
	u, ok, err := p.Guard.Identify(r)
	if !ok || err != nil {
		return u, ok, err
	}
	if g, has := u.Attrs.Lookup(groupsAttr); has {
		u.Groups = decodeGroups(g)
	}
	u.Attrs = u.Attrs.Without(storeOnlyAttrs...)
	return u, true, nil
}

// Mount serves the sign-in routes, the callback and logout on mux, and,
// unless mux has them already, the stylesheet and icon of its pages
// (ui.Mount).
func (p *Provider) Mount(mux *http.ServeMux) {
	ui.Mount(mux)
	mux.HandleFunc("GET "+LoginPath, p.login)
	mux.HandleFunc("GET "+CallbackPath, p.callback)
	mux.HandleFunc("GET "+SignedOutPath, p.signedOut)
	mux.HandleFunc("GET "+sessionauth.LogoutPath, p.LogoutPage)
	mux.HandleFunc("POST "+sessionauth.LogoutPath, p.Logout)
	mux.HandleFunc("POST "+BackchannelLogoutPath, p.backchannelLogout)
	p.MountAccount(mux)
}

// signedOut is the page logout leads to. Its "Sign in again" link starts
// a new sign-in.
func (p *Provider) signedOut(w http.ResponseWriter, r *http.Request) {
	err := ui.Render(w, http.StatusOK, "error", ui.ErrorPage{
		Brand:   ui.BrandOf(r.Context()),
		Status:  http.StatusOK,
		Title:   "Signed out",
		Message: "You have signed out of this service. You may still be signed in at the identity provider.",
		SignIn:  LoginPath,
	})
	if err != nil {
		p.log.ErrorContext(r.Context(), "oauth: rendering the signed-out page", "err", err)
	}
}

// OwnPaths returns the paths the provider serves: the sign-in, the
// callback, the signed-out page, logout and the back-channel logout.
func (p *Provider) OwnPaths() []string {
	return []string{LoginPath, CallbackPath, SignedOutPath, sessionauth.LogoutPath, BackchannelLogoutPath}
}

// endpoints are the provider's endpoints for one sign-in.
type endpoints struct {
	oauth2   oauth2.Endpoint
	userinfo string
	openID   *discovered // nil without OpenID Connect
}

// endpoints returns the endpoints to use, discovering them first for
// OpenID Connect.
func (p *Provider) endpoints() (endpoints, error) {
	if p.openID == nil {
		return endpoints{
			oauth2:   oauth2.Endpoint{AuthURL: p.cfg.AuthURL, TokenURL: p.cfg.TokenURL, AuthStyle: p.kind.authStyle},
			userinfo: p.cfg.UserinfoURL,
		}, nil
	}
	d, err := p.openID.get()
	if err != nil {
		return endpoints{}, err
	}
	ep := d.endpoint
	ep.AuthStyle = p.kind.authStyle
	return endpoints{oauth2: ep, userinfo: d.userinfo, openID: d}, nil
}

// oauth2Config is the OAuth client for ep.
func (p *Provider) oauth2Config(ep endpoints) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     p.cfg.ClientID,
		ClientSecret: p.cfg.ClientSecret,
		Endpoint:     ep.oauth2,
		RedirectURL:  p.cfg.RedirectURL,
		Scopes:       p.cfg.Scopes,
	}
}

// RevocationPoll is how often the provider takes the requests `backupweb
// session revoke` leaves for a file store's running service.
const RevocationPoll = 2 * time.Second

// Watch ends, every RevocationPoll, the sessions `backupweb session
// revoke` asked the running service to end (a file store's requests; a
// shared store's sessions the command ends itself), until ctx ends
// (auth.Watcher).
func (p *Provider) Watch(ctx context.Context) {
	p.PollRevocations() // requests left while the service was not running
	filewatch.Every(ctx, RevocationPoll, p.PollRevocations)
}

var _ auth.Watcher = (*Provider)(nil)
