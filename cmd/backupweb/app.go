package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/backupweb/backupweb/access"
	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/auth/factory"
	"github.com/backupweb/backupweb/groupfile"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/web"
	"github.com/backupweb/backupweb/redisstore"
)

// app is a loaded configuration with the provider it selects: everything
// serve needs before it listens, and everything check-config validates.
type app struct {
	cfg      *config.Config
	provider auth.Provider      // nil when the configuration has errors
	metrics  *metrics.Metrics   // nil unless serving with [server] metrics_listen
	shared   *redisstore.Client // nil unless serving with [server] store = redis
	errs     *auth.Errors       // the one error writer, handed to the provider and the web layer
	typeName string             // the authentication type, "" when the configuration has errors
	groups   *groupfile.File    // [authentication] groups_file (basic, flask-login); nil when unset
}

// load reads the configuration at path ("" for ./backupweb.ini or the
// built-in defaults), applies listen when it is not empty, and builds the
// authentication provider. With checkOnly it runs the type's loader only
// (factory.Check): everything is validated, nothing is built, opened,
// created or connected. Problems, all of them, are in a.cfg.Report.
func (c *cli) load(path, listen string, log *slog.Logger, checkOnly bool) *app {
	cfg := config.Load(path, c.lookupEnv)
	if listen != "" {
		cfg.Server.Listen = listen
		if err := config.CheckListen(listen); err != nil {
			cfg.Report.Errorf("", 0, "", "", "-listen %s", err)
		}
	}
	factory.CheckPlacement(cfg.File, config.SectionKeys())
	factory.CheckSecrets(cfg)
	checkPasskeys(cfg)
	if cfg.Server.Mode == config.ModeCatalog {
		cfg.CheckBackupsDir() // in proxy and forward-auth modes the catalog is not served
	}
	a := &app{cfg: cfg}
	lookupEnv := c.lookupEnv
	if t, ok := factory.Lookup(strings.TrimSpace(cfg.Auth.String("type", ""))); ok && t.NeedsSecret {
		if cfg.Server.Store != config.StoreRedis {
			if err := config.CheckStateDir(cfg.Server.StateDir); err != nil {
				cfg.File.Section("server").Errorf("state_dir", "%v", err)
			}
		}
		if msg, packaged := packagedKeyProblem(cfg.Source, c.lookupEnv); packaged {
			// Installed from the package: name its key file rather than
			// advise a new key. The other keys are still checked, with a
			// stand-in key, and nothing is built.
			cfg.Auth.Errorf("type", "%s", msg)
			lookupEnv, checkOnly = standInKey(c.lookupEnv), true
		}
	}
	a.errs = web.NewErrors(log)
	a.groups = openGroups(cfg, log)
	if checkOnly {
		// Only the loaders: nothing is opened, created or connected.
		t, err := factory.Check(cfg.Auth, lookupEnv)
		if err == nil && !cfg.Report.HasErrors() {
			a.typeName = t.Name
		}
		if err == nil && t.Name == "none" {
			warnAuthOff(cfg)
		}
		return a
	}
	env := auth.Deps{Logger: log, Errors: a.errs, StateDir: cfg.Server.StateDir,
		CookieDomain: cfg.Server.CookieDomain, RedirectHosts: cfg.Proxy.RedirectHosts, PublicURL: cfg.Server.PublicURL}
	if cfg.Server.MetricsListen != "" && !cfg.Report.HasErrors() {
		a.metrics = metrics.New()
		env.Hooks = a.metrics.Hooks()
		if t, ok := factory.Lookup(strings.TrimSpace(cfg.Auth.String("type", ""))); ok && t.Name == "oauth" {
			env.HTTPClient = a.metrics.InstrumentClient(strings.ToLower(cfg.Auth.String("provider", "")), nil)
		}
	}
	if cfg.Server.Store == config.StoreRedis && !cfg.Report.HasErrors() {
		if t, ok := factory.Lookup(strings.TrimSpace(cfg.Auth.String("type", ""))); ok && t.Name != "none" {
			shared, err := redisstore.Open(redisstore.Options(cfg.Redis), log)
			if err != nil {
				cfg.File.Section("redis").Errorf("", "%v", err)
			} else {
				a.shared, env.Shared = shared, shared
			}
		}
	}
	p, err := factory.New(cfg.Auth, env, lookupEnv)
	if err == nil && !cfg.Report.HasErrors() {
		a.provider, a.typeName = p, p.Type()
	}
	if err == nil && p.Type() == "none" {
		warnAuthOff(cfg)
	}
	return a
}

// openGroups reads [authentication] groups_file for the types that take
// groups from it (basic, flask-login): a file that cannot be used is a
// configuration error. It also warns about rules that cannot work with the
// configured type: rules naming groups when no user can have any, and
// second_factor rules under a type without a second factor (they refuse
// every user).
func openGroups(cfg *config.Config, log *slog.Logger) *groupfile.File {
	t, typed := factory.Lookup(strings.TrimSpace(cfg.Auth.String("type", "")))
	if !typed {
		return nil
	}
	var g *groupfile.File
	if path := strings.TrimSpace(cfg.Auth.String("groups_file", "")); path != "" && slices.Contains(t.Keys, "groups_file") {
		var err error
		if g, err = groupfile.Open(path, log); err != nil {
			cfg.Auth.Errorf("groups_file", "%v", err)
		}
	}
	noGroups := g == nil && t.Name != "oauth"
	for _, r := range cfg.Access.Rules.List {
		switch {
		case noGroups && len(r.Groups) > 0:
			cfg.File.Section("access").Warnf(r.Name, "names groups, but authentication type %s has no groups here (set groups_file): no user is in any group", t.Name)
		case r.Policy == access.SecondFactor && t.Name != "flask-login":
			cfg.File.Section("access").Warnf(r.Name, "is second_factor, but authentication type %s has no second factor: it refuses every user it names", t.Name)
		}
	}
	return g
}

// warnAuthOff records the warning that authentication is off: a pointed
// one when the address can be reached from other machines.
func warnAuthOff(cfg *config.Config) {
	what, all := "read the backups", "read and download every backup"
	switch cfg.Server.Mode {
	case config.ModeProxy:
		what, all = "use the guarded interface", "use the guarded interface"
	case config.ModeForwardAuth:
		what, all = "pass the forward-authentication check", "pass the forward-authentication check"
	}
	if !loopbackListen(cfg.Server.Listen) {
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

// printProblems writes every problem, one a line, each starting "error:"
// or "warning:", and returns how many were errors.
func printProblems(w io.Writer, rep *ini.Report) (errs int) {
	for _, p := range rep.Problems() {
		fmt.Fprintln(w, p.String())
		if p.Severity == ini.Error {
			errs++
		}
	}
	return errs
}

// logWarnings sends the warnings of rep to log, one line each.
func logWarnings(log *slog.Logger, rep *ini.Report) {
	for _, p := range rep.Problems() {
		if p.Severity == ini.Warning {
			log.Warn("config: " + strings.TrimPrefix(p.String(), "warning: "))
		}
	}
}

// newLogger returns the program's logger on w: text lines, or JSON lines
// when format is "json", at level and above (debug, info, warn, error).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil || strings.ContainsAny(level, "+-") {
		return nil, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("unknown log format %q (use text or json)", format)
	}
}
