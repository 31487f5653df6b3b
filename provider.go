package backupweb

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/groupfile"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/web"
)

// Options is what a program gives every provider besides the
// [authentication] keys. The zero value works for the types none and
// basic; flask-login and oauth keep sessions and need SecretKey and
// StateDir.
type Options struct {
	// SecretKey keys the sessions, their CSRF tokens and the sealed
	// sign-in state of flask-login and oauth: at least 32 characters,
	// the same across restarts (`backupweb gen-secret` makes one). It is
	// taken only from here, never from the environment: the program reads
	// BACKUP_SECRET_KEY, a library leaves that choice to its caller.
	// Default: none, which those two types refuse.
	SecretKey string
	// StateDir is the folder where sessions are kept (the program's
	// [server] state_dir), and with flask-login its second factors and
	// machine tokens unless factors_file and tokens_file say otherwise (a
	// file left beside the user file by an earlier version is moved there
	// once); it is created if missing, mode 0700. Needed by flask-login and
	// oauth. Default: none, which those two types refuse.
	StateDir string
	// Logger receives refused sign-ins (one warning line each, with the
	// word auth), the configuration's warnings (one line each, starting
	// "backupweb: configuration: ", naming the key; never a value) and
	// operational messages. Default: nil, which discards them.
	Logger *slog.Logger
	// PublicURL is the absolute URL users reach the service at (scheme
	// and host, as the program's [server] public_url): passkeys take their
	// relying-party id and origin from it. Default: empty, no passkeys.
	PublicURL string
	// LookupEnv reads the environment for ${NAME} in the configuration's
	// values. Default: nil, which means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// AccountPage adds, for flask-login and oauth, the account page
	// (/_backupweb/account: the user's own sessions, with buttons to end
	// them, and for flask-login the user's machine tokens with a form
	// that makes new ones) and its link on the pages. Default: off.
	AccountPage bool
	// MachineTokens makes flask-login accept machine tokens
	// ("Authorization: Bearer bwt_...", made by `backupweb token add` in
	// tokens_file, or on the account page) as their user. Default: off:
	// a request is identified by its session alone.
	MachineTokens bool
	// LDAP holds the keys of the [ldap] section, as written in the INI
	// file (${NAME} expanded as in config), for users = ldap with
	// flask-login and basic: the directory users sign in against (url,
	// bind_dn, bind_password, base_dn, ...; ReadLDAP reads them from a
	// file). They are checked as check-config checks the section, each
	// error naming its key. Default: nil; users = ldap without it is an
	// error at users.
	LDAP map[string]string
}

// Provider is one configured authentication type, ready to guard routes
// of a net/http server. It is safe for concurrent use. Call Close when the
// server is done with it. Only NewProvider makes a working one: the zero
// Provider (and a nil one) guards by refusing every request with 500.
type Provider struct {
	p      auth.Provider
	errs   *refusal.Errors
	groups *groupfile.File

	routesOnce sync.Once
	routes     http.Handler
}

// NewProvider builds the provider of type typ from config, the
// [authentication] keys as an INI file writes them (the specification's
// get_auth_provider). Keys are case-insensitive and ${NAME} in a value is
// replaced by the environment variable NAME (an unset one is an error
// naming the variable and the key). typ names the type ("none", "basic",
// "flask-login", "oauth"); when it is empty the "type" key does, and when
// both are given they must name the same type. Neither is an error: no
// authentication is a choice to write down, never a default.
//
// The configuration is validated as `backupweb check-config` validates
// the file, with the same messages, each naming its key; the returned
// error holds every error found, one a line, and the warnings go to
// opts.Logger. The provider is built by the same code as the program's.
func NewProvider(typ string, config map[string]string, opts Options) (*Provider, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := withType(typ, config)
	if err != nil {
		return nil, err
	}
	s, ldap := app.SectionsOf(m, opts.LDAP, opts.LookupEnv)
	if users, _ := s.Lookup("users"); strings.EqualFold(strings.TrimSpace(users), "ldap") && ldap == nil {
		return nil, &ConfigError{Section: app.Section, Key: "users", Msg: "is ldap, but Options.LDAP is empty: give it the [ldap] keys (url, bind_dn, bind_password, base_dn; ReadLDAP reads them from a file)"}
	}
	name, _ := s.Lookup("type") // expanded, as the table reads it
	t, _ := app.Lookup(strings.TrimSpace(name))
	publicURL, err := checkOptions(t, opts)
	if err != nil {
		return nil, err
	}
	if t.SecondFactor {
		app.CheckPasskeys(s, publicURL, "Options.PublicURL")
	}
	errs := web.NewErrors(log)
	deps := auth.Deps{Errors: errs, Logger: log, StateDir: opts.StateDir, PublicURL: publicURL,
		NoAccountPage: !opts.AccountPage, NoMachineTokens: !opts.MachineTokens}
	_, p, buildErr := app.BuildProviderWith(s, ldap, deps, secret(opts.SecretKey))
	out := &Provider{p: p, errs: errs}
	if t.Reads("groups_file") {
		out.groups = openGroups(s, log)
	}
	err = report(s.Report(), log)
	if _, known := app.Lookup(strings.TrimSpace(name)); !known {
		mark(err, func(ce *ConfigError) bool { return ce.Key == "type" }, ErrUnknownType)
	}
	mark(err, func(ce *ConfigError) bool { return strings.Contains(ce.Msg, "Options.SecretKey") }, ErrNoSecretKey)
	if err == nil && buildErr != nil {
		err = fmt.Errorf("backupweb: %w", buildErr)
	}
	if err != nil {
		if c, ok := p.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	if t.AuthOff {
		log.Warn("backupweb: authentication is off (type none): every request is admitted")
	}
	return out, nil
}

// mark makes the problems of err (report's) that is picks, and that wrap
// nothing yet, wrap cause.
func mark(err error, is func(*ConfigError) bool, cause error) {
	var all []error
	if es, ok := err.(configErrors); ok {
		all = es
	} else if err != nil {
		all = []error{err}
	}
	for _, e := range all {
		if ce, ok := e.(*ConfigError); ok && ce.Err == nil && is(ce) {
			ce.Err = cause
		}
	}
}

// withType returns config with its type key agreeing with typ, or an
// error when they disagree or neither names a type.
func withType(typ string, config map[string]string) (map[string]string, error) {
	m := make(map[string]string, len(config)+1)
	for k, v := range config {
		m[k] = v
	}
	typ = strings.TrimSpace(typ)
	key := typeKey(m)
	switch {
	case typ == "" && key == "":
		return nil, &causeError{fmt.Sprintf("backupweb: no authentication type: pass one of %s to NewProvider or set the type key", strings.Join(app.Names(), ", ")), ErrNoType}
	case key == "":
		m["type"] = typ
	case typ != "" && !sameType(typ, m[key]):
		return nil, &ConfigError{Section: app.Section, Key: "type", Msg: fmt.Sprintf("the type key names another type than NewProvider was given (%q); give the type once, or make them agree", typ)}
	}
	return m, nil
}

// typeKey returns the spelling of the type key in m, "" when m has none.
func typeKey(m map[string]string) string {
	for k := range m {
		if strings.EqualFold(strings.TrimFunc(k, ini.IsSpace), "type") {
			return k
		}
	}
	return ""
}

// sameType reports whether a and b name the same type (a name or an
// alias, in any letter case).
func sameType(a, b string) bool {
	b = strings.TrimSpace(b)
	ta, okA := app.Lookup(a)
	tb, okB := app.Lookup(b)
	if okA && okB {
		return ta.Name == tb.Name
	}
	return strings.EqualFold(a, b)
}

// checkOptions checks the options type t needs, and returns the parsed
// public URL (nil when unset).
func checkOptions(t app.Type, opts Options) (*url.URL, error) {
	var publicURL *url.URL
	if opts.PublicURL != "" {
		u, err := config.ParsePublicURL(opts.PublicURL)
		if err != nil {
			return nil, &causeError{fmt.Sprintf("backupweb: Options.PublicURL: %v", err), nil}
		}
		publicURL = u
	}
	if t.NeedsSecret {
		if err := config.CheckStateDir(opts.StateDir); err != nil {
			return nil, &causeError{fmt.Sprintf("backupweb: Options.StateDir: %v (type %s keeps sessions there)", err, t.Name), ErrNoStateDir}
		}
	}
	return publicURL, nil
}

// secret is BuildProvider's secret key: Options.SecretKey, checked as the
// program checks BACKUP_SECRET_KEY.
func secret(key string) func() ([]byte, error) {
	return func() ([]byte, error) {
		switch {
		case key == "":
			return nil, &causeError{"this type keeps sessions and needs Options.SecretKey; make one with `backupweb gen-secret`", ErrNoSecretKey}
		case len(key) < app.MinSecretLen:
			return nil, &causeError{fmt.Sprintf("Options.SecretKey is shorter than %d characters; make a new one with `backupweb gen-secret`", app.MinSecretLen), ErrNoSecretKey}
		}
		return []byte(key), nil
	}
}

// openGroups opens [authentication] groups_file when it is set, recording
// in s's report why it cannot be used.
func openGroups(s *ini.Section, log *slog.Logger) *groupfile.File {
	path := strings.TrimSpace(s.String("groups_file", ""))
	if path == "" {
		return nil
	}
	g, err := groupfile.Open(path, log)
	if err != nil {
		s.Errorf("groups_file", "%v", err)
		return nil
	}
	return g
}

// Type returns the provider's type: "none", "basic", "flask-login" or
// "oauth"; "" for a Provider that NewProvider did not make.
func (p *Provider) Type() string {
	if !p.made() {
		return ""
	}
	return p.p.Type()
}

// made reports whether p was made by NewProvider: the zero Provider and
// a nil one refuse every request instead of panicking.
func (p *Provider) made() bool { return p != nil && p.p != nil }

// Mount serves the type's own routes on mux (the specification's
// init_app):
//
//   - flask-login: the login page (login_view, /login by default), /logout,
//     and under /_backupweb/ the second factor's step and enrolment, the
//     passkeys page and the password page they need (with
//     second_factor), and the account page with its token forms (with
//     Options.AccountPage);
//   - oauth: /oauth/login, /oauth/callback, /oauth/signed-out, /logout,
//     and the account page (with Options.AccountPage);
//   - every type: the stylesheet and icon its pages use, under
//     /_backupweb/ (unless mux serves that path already).
//
// Paths lists them. Call it once per mux: the routes cannot be registered
// twice. A nil mux is refused at once (a panic naming the call, as
// http.Handle refuses a nil handler); a Provider that NewProvider did not
// make mounts nothing. For another router, see Routes.
func (p *Provider) Mount(mux *http.ServeMux) {
	if mux == nil {
		panic("backupweb: Mount: nil mux")
	}
	if !p.made() {
		return
	}
	if m, ok := p.p.(auth.Mounter); ok {
		m.Mount(mux)
		return
	}
	ui.Mount(mux)
}

// Routes returns the type's own routes (those Mount adds) as one handler,
// for a router other than http.ServeMux (chi, gorilla/mux): route each of
// Paths to it. A path it does not serve answers 404.
func (p *Provider) Routes() http.Handler {
	if !p.made() {
		return http.HandlerFunc(refuseUnmade)
	}
	p.routesOnce.Do(func() {
		mux := http.NewServeMux()
		p.Mount(mux)
		p.routes = mux
	})
	return p.routes
}

// Paths returns what Routes serves: exact paths, and prefixes, which end
// in "/" (as http.ServeMux reads a pattern; chi writes "/_backupweb/*").
func (p *Provider) Paths() []string {
	if !p.made() {
		return nil
	}
	paths := []string{ownPrefix}
	if po, ok := p.p.(auth.PathOwner); ok {
		for _, path := range po.OwnPaths() {
			if !strings.HasPrefix(path, ownPrefix) {
				paths = append(paths, path)
			}
		}
	}
	return paths
}

// RequireAuth returns next behind authentication (the specification's
// require_auth): a request the provider admits reaches next with its user,
// which CurrentUser reads; any other gets the type's challenge (401 with
// WWW-Authenticate for basic; for flask-login and oauth a redirect to the
// sign-in page for a browser's GET, 401 for the rest). A refusal is JSON
// under /api/ and for clients that prefer it, the styled page otherwise.
// Every answer carries Cache-Control: no-store. A nil next is refused at
// once (a panic naming the call, as http.Handle does); on a Provider that
// NewProvider did not make, every request gets 500 and one error line.
func (p *Provider) RequireAuth(next http.Handler) http.Handler {
	if next == nil {
		panic("backupweb: RequireAuth: nil handler")
	}
	if !p.made() {
		return http.HandlerFunc(refuseUnmade)
	}
	if p.groups != nil {
		next = withGroups(p.groups, next)
	}
	return auth.RequireAuth(p.p, p.errs, auth.Audit{Log: p.errs.Logger})(next)
}

// refuseUnmade answers a request guarded by a Provider that NewProvider
// did not make: 500, and one error line, never the request through.
func refuseUnmade(w http.ResponseWriter, r *http.Request) {
	slog.Default().ErrorContext(r.Context(), "backupweb: a Provider that NewProvider did not make guards this route; every request is refused", "path", r.URL.Path)
	w.Header().Set("Cache-Control", "no-store")
	(&refusal.Errors{}).Refuse(w, r, refusal.NotConfigured)
}

// withGroups fills in the user's groups from the groups file before next.
func withGroups(g *groupfile.File, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := auth.FromContext(r.Context())
		if ok {
			u.Groups, _ = g.GroupsOf(u.Name)
			r = r.WithContext(auth.NewContext(r.Context(), u))
		}
		next.ServeHTTP(w, r)
	})
}

// Handler returns h behind what every answer of backupweb passes, for a
// server whose pages should be kept as backupweb keeps its own: the
// security headers (a Content-Security-Policy that allows only the
// server's own stylesheet and images and no scripts, nosniff,
// Referrer-Policy: no-referrer, X-Frame-Options: DENY), Go's cross-origin
// protection (a state-changing request a browser marks as coming from
// another site is refused with 403), and a request body limit of 64 KiB
// (413). Wrap the whole mux; a host whose own pages need scripts or other
// sites' resources wraps only the routes Mount serves. A nil h is refused
// at once (a panic naming the call).
func (p *Provider) Handler(h http.Handler) http.Handler {
	if h == nil {
		panic("backupweb: Handler: nil handler")
	}
	errs := &refusal.Errors{}
	if p.made() {
		errs = p.errs
		return web.SecurityHeadersFor(p.p, web.CrossOrigin(errs)(limitBody(errs, h)))
	}
	return web.SecurityHeaders(web.CrossOrigin(errs)(limitBody(errs, h)))
}

// limitBody refuses a body announced larger than web.MaxBodyBytes with
// 413 and stops reading a longer one there.
func limitBody(errs *refusal.Errors, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > web.MaxBodyBytes {
			w.Header().Set("Connection", "close")
			errs.Refuse(w, r, refusal.TooLarge)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, web.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// Close releases what the provider holds (flask-login and oauth write
// their sessions' pending activity and close their store). Requests still
// being answered may fail afterwards; later calls do nothing, and so does
// Close on a Provider that NewProvider did not make.
func (p *Provider) Close() error {
	if !p.made() {
		return nil
	}
	if c, ok := p.p.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ownPrefix is where backupweb's own pages, stylesheet and icon live.
const ownPrefix = "/_backupweb/"
