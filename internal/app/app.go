// Package app wires the program: it reads the configuration file, holds
// the one table of authentication types (what each type reads and what
// the program must do for it), reads each type's keys into its plain
// configuration, and builds everything serve needs. cmd/backupweb keeps
// the flags, signals, prompts and printing; adding a type means adding one
// entry to the table here, its keys declared with their kinds (keys.go),
// and their rows to docs/configuration.md (TestKeysDocumented checks).
//
// Check validates a configuration and builds nothing; Open builds the
// provider, the metrics and the shared store. Both record every problem
// in the configuration's report, so check-config can show all of them.
package app

import (
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/acmecert"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/groupfile"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/tlscert"
	"github.com/backupweb/backupweb/internal/web"
)

// Options are what the program hands to Check and Open besides the path of
// the configuration file.
type Options struct {
	// Listen, when not empty, replaces [server] listen (serve's -listen).
	Listen string
	// Logger receives the log lines of what is built; nil discards them.
	Logger *slog.Logger
	// LookupEnv reads the environment: ${NAME} in the file and
	// BACKUP_SECRET_KEY. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Packaged names the files of the Debian package, so that a missing
	// key names the packaged key file rather than advising a new key.
	Packaged Packaged
	// ACMERenewBefore is how long before its end an ACME certificate is
	// ordered again; zero: acmecert.DefaultRenewBefore.
	ACMERenewBefore time.Duration
}

// App is a loaded configuration with what it selects: everything serve
// needs before it listens, and everything check-config validates.
type App struct {
	// Config is the loaded configuration; its Report holds every problem
	// found, by config.Load and by Check or Open.
	Config *config.Config
	// Type is the authentication type the [authentication] type key
	// names; the zero Type (Name "") when it names none the table knows,
	// or is not set.
	Type Type
	// TypeName is the authentication type, "" when the configuration has
	// errors.
	TypeName string
	// Provider is the authentication provider (Open only); nil when the
	// configuration has errors.
	Provider auth.Provider
	// Metrics are the program's metrics (Open only, with [server]
	// metrics_listen); nil otherwise.
	Metrics *metrics.Metrics
	// Shared is the shared store (Open only, with [server] store = redis);
	// nil otherwise. The caller closes it after the provider.
	Shared *redisstore.Client
	// Errors is the one error writer, handed to the provider and the web
	// layer.
	Errors *refusal.Errors
	// Groups is [authentication] groups_file (basic, flask-login); nil
	// when unset.
	Groups *groupfile.File
	// TLS is the certificate and key listen serves (Open only, with
	// [server] tls_cert): read again on SIGHUP and when the files change.
	TLS *tlscert.Files
	// ACME obtains and renews the certificates listen serves (Open only,
	// with [server] acme_domains).
	ACME *acmecert.Manager
	// files are the paths of the type's file keys (Check only), by key:
	// see Files.
	files map[string]string
	// users are the users the configuration names itself (Check only):
	// see Users.
	users []string
	// state is where type flask-login keeps what it writes about its
	// users (Check only); nil for the other types.
	state *StateFiles
	// directoryUsers is set with [authentication] users = ldap: users,
	// passwords and groups are the directory's.
	directoryUsers bool
	// groupsPath is the value of groups_file when the type reads it.
	groupsPath string
	// clientLabel is the value of the type's ClientLabel key, lower-cased.
	clientLabel string
}

// File is a file the configured type uses: the key that names it and
// its path, defaults applied.
type File struct {
	Key  Key
	Path string
}

// Files lists the files the configured type uses (Check only), in the
// order of its keys: every key declared ReadFile or RewrittenFile that
// names a file, by its value or by the type's default (flask-login's
// factors and tokens files beside the user file). check-config
// -as-service checks that the service user can use each.
func (a *App) Files() []File {
	var out []File
	for _, k := range a.Type.Keys {
		if p := a.files[k.Name]; k.IsFile() && p != "" {
			out = append(out, File{k, p})
		}
	}
	return out
}

// StateFiles returns where the configured type flask-login keeps the
// second factors and machine tokens of its users, defaults applied (Check
// only); ok is false for the other types and without a users_file.
func (a *App) StateFiles() (sf StateFiles, ok bool) {
	if a.state == nil || a.state.UsersFile == "" {
		return StateFiles{}, false
	}
	return *a.state, true
}

// Users returns the users the configuration names itself (Check only):
// basic's one user. ok is false for the types whose users are elsewhere:
// in a file that Files names (flask-login's users_file) or at the
// identity provider (oauth), or nowhere (none).
func (a *App) Users() (names []string, ok bool) { return a.users, a.users != nil }

// Check reads the configuration at path ("" for ./backupweb.ini or the
// built-in defaults) and validates it as Open would: every key of every
// section, the files the type names (read, as they must be to be checked)
// and the groups file. Nothing is opened for writing, created or
// connected, and no provider is built. Problems, all of them, are in
// App.Config.Report.
func Check(path string, opts Options) *App {
	a, lookupEnv, _ := prepare(path, opts)
	a.check(lookupEnv)
	return a
}

// Open reads and validates the configuration at path as Check does and
// builds what serve needs: the metrics, the shared store and the
// provider. When the configuration has errors, App.Provider is nil and the
// report says why; a missing key of the Debian package builds nothing
// either (the other keys are still checked).
func Open(path string, opts Options) *App {
	a, lookupEnv, checkOnly := prepare(path, opts)
	if checkOnly {
		a.check(lookupEnv)
		return a
	}
	cfg := a.Config
	log := logger(opts)
	deps := auth.Deps{Logger: log, Errors: a.Errors, StateDir: cfg.Server.StateDir,
		CookieDomain: cfg.Server.CookieDomain, RedirectHosts: cfg.Proxy.RedirectHosts, PublicURL: cfg.Server.PublicURL}
	if cfg.Server.MetricsListen != "" && !cfg.Report.HasErrors() {
		a.Metrics = metrics.New()
		deps.Hooks = a.Metrics.Hooks()
		if a.Type.ClientLabel != "" {
			deps.HTTPClient = a.Metrics.InstrumentClient(a.clientLabel, nil)
		}
	}
	if cfg.Server.Store == config.StoreRedis && !cfg.Report.HasErrors() && a.Type.SharedState {
		shared, err := redisstore.Open(cfg.Redis, log)
		if err != nil {
			cfg.File.Section("redis").Errorf("", "%v", err)
		} else {
			a.Shared, deps.Shared = shared, shared
		}
	}
	deps.PreviousSecretKey = PreviousSecret(lookupEnv)
	t, p, err := buildProvider(cfg.Auth, cfg.File.Section(LDAPSection), deps, EnvSecret(lookupEnv))
	if err == nil && !cfg.Report.HasErrors() {
		a.Provider, a.TypeName = p, p.Type()
	}
	if err == nil && t.AuthOff {
		warnAuthOff(cfg, lookupEnv)
	}
	if cfg.Server.TLS.CertFile != "" && !cfg.Report.HasErrors() {
		files, err := tlscert.Open(cfg.Server.TLS.CertFile, cfg.Server.TLS.KeyFile, log)
		if err != nil { // changed since Load read it
			cfg.File.Section("server").Errorf("tls_cert", "%v", err)
		} else {
			a.TLS = files
		}
	}
	if cfg.Server.TLS.ACME.On() && !cfg.Report.HasErrors() {
		a.openACME(lookupEnv, opts.ACMERenewBefore, log)
	}
	return a
}

// prepare loads the configuration, applies opts.Listen and runs the checks
// Check and Open share: the placement of [authentication] keys, secrets in
// a file others may read, passkeys, the backups folder, the state folder
// and the packaged key of the types that keep sessions, the groups file.
// It returns the lookup the type's loader must use, and checkOnly true when
// nothing may be built (the packaged key is missing).
func prepare(path string, opts Options) (a *App, lookupEnv func(string) (string, bool), checkOnly bool) {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	lookupEnv = opts.LookupEnv
	cfg := config.Load(path, lookupEnv)
	if opts.Listen != "" {
		cfg.Server.Listen = opts.Listen
		if err := config.CheckListen(opts.Listen); err != nil {
			cfg.Report.Errorf("", 0, "", "", "-listen %s", err)
		}
	}
	a = &App{Config: cfg}
	a.readWiring()
	CheckPlacement(cfg.File, config.SectionKeys())
	if a.Type.Name != "" {
		cfg.CheckSecrets(cfg.Auth, a.Type.Secrets())
		if a.Type.SecondFactor {
			checkPasskeys(cfg)
		}
	}
	if cfg.Server.Mode == config.ModeCatalog {
		cfg.CheckBackupsDir() // in proxy and forward-auth modes the catalog is not served
	}
	if a.Type.NeedsSecret {
		if cfg.Server.Store != config.StoreRedis {
			if err := config.CheckStateDir(cfg.Server.StateDir); err != nil {
				cfg.File.Section("server").Errorf("state_dir", "%v", err)
			}
		}
		if msg, packaged := opts.Packaged.keyProblem(cfg.Source, opts.LookupEnv); packaged {
			// Installed from the package: name its key file rather than
			// advise a new key. The other keys are still checked, with a
			// stand-in key, and nothing is built.
			cfg.Auth.Errorf("type", "%s", msg)
			lookupEnv, checkOnly = standInKey(opts.LookupEnv), true
		}
	}
	if cfg.Server.TLS.ACME.On() {
		checkACME(cfg, lookupEnv, a.Type.NeedsSecret)
	}
	log := logger(opts)
	a.Errors = web.NewErrors(log)
	a.Groups = a.openGroups(log)
	return a, lookupEnv, checkOnly
}

// readWiring reads, once, the [authentication] keys the wiring itself uses
// rather than the type's loader: the type, groups_file when the type reads
// it, and the key that labels the type's outgoing requests in the metrics.
// The type's other keys are typed by its loader.
func (a *App) readWiring() {
	s := a.Config.Auth
	a.Type, _ = Lookup(strings.TrimSpace(s.String("type", "")))
	if a.Type.Reads(groupsFile.Name) {
		a.groupsPath = strings.TrimSpace(s.String(groupsFile.Name, ""))
	}
	if a.Type.Reads(usersKey.Name) {
		a.directoryUsers = strings.EqualFold(strings.TrimSpace(s.String(usersKey.Name, "")), login.UsersFromDirectory)
	}
	if a.Type.ClientLabel != "" {
		a.clientLabel = strings.ToLower(s.String(a.Type.ClientLabel, ""))
	}
}

// check runs the type's loader only: nothing is opened, created or
// connected.
func (a *App) check(lookupEnv func(string) (string, bool)) {
	cfg := a.Config
	env := &loadEnv{stateDir: cfg.Server.StateDir, ldap: cfg.File.Section(LDAPSection)}
	t, typed, err := checkProvider(cfg.Auth, lookupEnv, env)
	a.state = env.state
	a.files = map[string]string{groupsFile.Name: a.groupsPath}
	if f, named := typed.(fileNamer); named {
		maps.Copy(a.files, f.Files())
	}
	if u, named := typed.(userNamer); named {
		a.users = u.Users()
	}
	if err == nil && !cfg.Report.HasErrors() {
		a.TypeName = t.Name
	}
	if err == nil && t.AuthOff {
		warnAuthOff(cfg, lookupEnv)
	}
}

// discard is the logger of a program that gave none.
var discard = slog.New(slog.DiscardHandler)

// logger is opts.Logger, or discard.
func logger(opts Options) *slog.Logger {
	if opts.Logger == nil {
		return discard
	}
	return opts.Logger
}

// openGroups reads [authentication] groups_file for the types that take
// groups from it (basic, flask-login): a file that cannot be used is a
// configuration error. It also warns about rules that cannot work with the
// configured type: rules naming groups when no user can have any, and
// second_factor rules under a type without a second factor (they refuse
// every user).
func (a *App) openGroups(log *slog.Logger) *groupfile.File {
	cfg, t := a.Config, a.Type
	if t.Name == "" {
		return nil
	}
	var g *groupfile.File
	if a.directoryUsers && a.groupsPath != "" {
		// One source of groups: the directory's, read at each sign-in.
		cfg.Auth.Errorf(groupsFile.Name, "cannot go with users = ldap: the users' groups are the directory's (groups_filter in [%s]); remove groups_file", LDAPSection)
		return nil
	}
	if a.groupsPath != "" {
		var err error
		if g, err = groupfile.Open(a.groupsPath, log); err != nil {
			cfg.Auth.Errorf("groups_file", "%v", err)
		}
	}
	noGroups := g == nil && !t.ProviderGroups && !a.directoryUsers
	for _, r := range cfg.Access.Rules.List {
		switch {
		case noGroups && len(r.Groups) > 0:
			cfg.File.Section("access").Warnf(r.Name, "names groups, but authentication type %s has no groups here (set groups_file): no user is in any group", t.Name)
		case r.Policy == access.SecondFactor && !t.SecondFactor:
			cfg.File.Section("access").Warnf(r.Name, "is second_factor, but authentication type %s has no second factor: it refuses every user it names", t.Name)
		}
	}
	return g
}

// AllowOpenEnv is the environment variable that says whether authentication
// may be off on an address other machines can reach: "0" refuses it (the
// container image sets it, since its built-in configuration listens on
// 0.0.0.0 with no authentication), "1" allows it with a warning. Unset,
// it is allowed with a warning.
const AllowOpenEnv = "BACKUPWEB_ALLOW_OPEN"

// warnAuthOff records the warning that authentication is off: a pointed
// one when the address can be reached from other machines, and there an
// error instead when AllowOpenEnv is 0 (or not 0 or 1).
func warnAuthOff(cfg *config.Config, lookupEnv func(string) (string, bool)) {
	what, all := "read the backups", "read and download every backup"
	switch cfg.Server.Mode {
	case config.ModeProxy:
		what, all = "use the guarded interface", "use the guarded interface"
	case config.ModeForwardAuth:
		what, all = "pass the forward-authentication check", "pass the forward-authentication check"
	}
	if !loopbackListen(cfg.Server.Listen) {
		if v, set := lookupEnv(AllowOpenEnv); set && v != "1" {
			if v != "0" {
				cfg.Report.Errorf(cfg.Source, 0, "", "", "environment variable %s is %q; it must be 0 (refuse authentication off on an address other machines reach) or 1 (allow it)", AllowOpenEnv, v)
				return
			}
			cfg.Report.Errorf(cfg.Source, 0, "", "", "authentication is off (type none) and backupweb listens on %s, which %s=0 refuses: anyone who can reach it could %s. Mount a folder holding your backupweb.ini (with an [authentication] section) and user file at /etc/backupweb (docker run -v /srv/backupweb:/etc/backupweb:ro ...), or set %s=1 to allow it",
				cfg.Server.Listen, AllowOpenEnv, all, AllowOpenEnv)
			return
		}
		cfg.Report.Warnf(cfg.Source, 0, "", "", "authentication is off (type none) and backupweb listens on %s: anyone who can reach this address can %s; set type = basic, flask-login or oauth in an [authentication] section", cfg.Server.Listen, all)
		return
	}
	cfg.Report.Warnf(cfg.Source, 0, "", "", "authentication is off (type none): anyone who can reach this address can %s; set [authentication] type for production", what)
}

// loopbackListen reports whether addr only accepts connections from this
// machine: a loopback IP address or "localhost".
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
