package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/basic"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/web"
)

// Live is what serve serves: the web layer of the configuration in
// force, which Reload (SIGHUP) replaces. What Open built (the provider,
// the shared store, the metrics, the groups file, the listeners) stays
// for the life of the process; the keys that need it rebuilt keep their
// running values, and Reload says which.
type Live struct {
	run    *App // what serve opened
	path   string
	opts   Options
	log    *slog.Logger
	finish func(o *web.Options, cfg *config.Config)

	catalog *catalog.Catalog               // catalog mode; nil otherwise
	verify  *verifier                      // [backups] verify_every's passes; nil when off
	recheck *ruleCheck                     // the proxy's recheck of open connections
	maxAge  atomic.Int64                   // [backups] max_age in force, for the metrics
	shrink  atomic.Pointer[catalog.Shrink] // [backups] shrink_ratio and shrink_window in force

	mu    sync.Mutex // serialises reloads; guards proxy and po
	proxy *proxy.Handler
	po    proxy.Options // what proxy was made with
	h     atomic.Pointer[http.Handler]
}

// Live returns the handler serve serves for a, opened from path with
// opts, logging to log. finish sets what serve decides besides the
// configuration (the access log's switch and writer), from the
// configuration in force; it runs at every reload.
func (a *App) Live(path string, opts Options, log *slog.Logger, finish func(o *web.Options, cfg *config.Config)) *Live {
	l := &Live{run: a, path: path, opts: opts, log: log, finish: finish, recheck: &ruleCheck{log: log}}
	if rc, ok := a.Provider.(auth.Rechecker); ok {
		l.recheck.rc = rc
	}
	cfg := a.Config
	rule := shrinkOf(cfg)
	l.shrink.Store(&rule)
	if cfg.Server.Mode == config.ModeCatalog {
		l.catalog = catalog.New(cfg.Backups.Dir).WithLogger(log)
		if a.Metrics != nil {
			a.Metrics.WatchBackups(backupFolders(l.catalog, func() catalog.Shrink { return *l.shrink.Load() }), func() time.Duration { return time.Duration(l.maxAge.Load()) })
			a.Metrics.WatchVerify(l.catalog.VerifyMismatches)
		}
		l.verify = startVerifier(l.catalog, cfg.Backups.VerifyEvery, cfg.Backups.VerifyRate, log)
	}
	if a.Metrics != nil {
		if sc, ok := a.Provider.(auth.SessionCounter); ok {
			a.Metrics.WatchSessions(a.Provider.Type(), sc.SessionCount)
		}
	}
	l.install(cfg)
	return l
}

// ServeHTTP serves r with the web layer in force.
func (l *Live) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*l.h.Load()).ServeHTTP(w, r) }

// Close stops the verification passes and watching the backups folder
// (catalog mode).
func (l *Live) Close() {
	l.verify.stop()
	l.catalog.Close()
}

// install builds the web layer of cfg and puts it in force; the
// connections the proxy still answers are checked against its rules at
// once.
func (l *Live) install(cfg *config.Config) {
	o := l.run.webOptions(cfg, l.log)
	o.Catalog = l.catalog
	l.maxAge.Store(int64(cfg.Backups.MaxAge))
	rule := shrinkOf(cfg)
	l.shrink.Store(&rule)
	l.recheck.set(o.Rules, o.Groups)
	if cfg.Proxy.Upstream != nil {
		po := proxyOptions(cfg, l.log, l.run.Errors)
		po.Rechecker = l.recheck
		if l.proxy == nil || !sameProxy(l.po, po) {
			if old := l.proxy; old != nil {
				defer old.RecheckNow() // its open connections follow the new rules too
			}
			l.proxy, l.po = proxy.New(po), po
		}
		o.Proxy = l.proxy
		defer l.proxy.RecheckNow()
	}
	if l.finish != nil {
		l.finish(&o, cfg)
	}
	h := web.NewHandler(o)
	l.h.Store(&h)
}

// Reload reads the configuration file again, and every file it names, and
// applies what can change in a running process (auth.Reloader: serve calls
// it on SIGHUP):
//
//   - a file check-config would refuse (its own errors, or those of a
//     file it names, such as a broken user file) changes nothing: one
//     error line, and the running configuration stays; the user file's
//     poller still follows that file;
//   - the keys that need a restart keep their running values, and one
//     error line names each that changed, with "restart to apply";
//   - the user, groups and factors files are read again (the provider's
//     and the groups file's own reloads, which log their outcome);
//   - the live keys take effect: [access], [proxy] allow_users,
//     skip_auth_routes and the headers and timeouts of the proxy,
//     [server] trusted_proxies and access_log, [ui], and the type's
//     live keys (Key.Live: the throttling keys, flask-login's second_factor
//     between optional and required). The proxied
//     connections still open are checked against the new rules at once.
//
// It returns an error when the new file was refused.
func (l *Live) Reload() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	co := l.opts
	co.Logger = nil // check-config's own lines are not the reload's
	next := Check(l.path, co)
	if rep := next.Config.Report; rep.HasErrors() {
		first := ""
		for _, p := range rep.Problems() {
			if p.Severity == ini.Error {
				first = p.String()
				break
			}
		}
		l.log.Error("reload: the configuration has errors; nothing of it is applied and the running configuration stays",
			"file", next.Config.Source, "errors", rep.ErrorCount(), "first", first)
		return fmt.Errorf("reload: %s has %d errors", next.Config.Source, rep.ErrorCount())
	}
	restart := l.applyAuth(next)
	cfg, more := l.merge(next)
	restart = append(restart, more...)
	if len(restart) > 0 {
		slices.Sort(restart)
		l.log.Error("reload: these keys need a restart to apply; they keep their running values until then: restart to apply",
			"file", next.Config.Source, "keys", restart)
	}
	var err error
	for _, r := range l.run.Reloaders() {
		err = errors.Join(err, r.Reload()) // each logs its own outcome
	}
	l.install(cfg)
	l.log.Info("reload: configuration applied", "file", next.Config.Source, "restart_needed", len(restart))
	return err
}

// applyAuth applies the [authentication] keys the running type can take
// live (Type.Live), and returns every other key of the section that
// differs from the running configuration, named "authentication.KEY".
func (l *Live) applyAuth(next *App) (restart []string) {
	cur, nxt := l.run.Config.Auth, next.Config.Auth
	applied := map[string]bool{}
	if next.Type.Name == l.run.Type.Name {
		// Every time, not only when the key differs from the start: a
		// second reload may set it back.
		for k, apply := range l.run.Type.Live() {
			applied[k] = apply(l.run.Provider, nxt) == nil
		}
	}
	for _, k := range changedKeys(cur, nxt) {
		if k == "type" && next.Type.Name == l.run.Type.Name {
			continue // another spelling of the same type
		}
		if !applied[k] {
			restart = append(restart, Section+"."+k)
		}
	}
	return restart
}

// merge returns the configuration in force after a reload to next: the
// running one with next's live keys ([access], [ui], the live keys of
// [server] and [proxy]), and the other changed keys of those sections,
// named "SECTION.KEY". A change of [server] mode applies nothing of
// [access] and [proxy]: their rules are built for a mode.
func (l *Live) merge(next *App) (*config.Config, []string) {
	cur, nc := l.run.Config, next.Config
	cfg := *cur
	var restart []string
	sameMode := nc.Server.Mode == cur.Server.Mode
	for _, sec := range reloadSections {
		for _, k := range changedKeys(cur.File.Section(sec), nc.File.Section(sec)) {
			if sec == "server" && k == "listen" && l.opts.Listen != "" {
				continue // -listen decides
			}
			live := slices.Contains(liveKeys[sec], k) || sec == "access"
			if !live || !sameMode && (sec == "access" || sec == "proxy") {
				restart = append(restart, sec+"."+k)
			}
		}
	}
	cfg.UI = nc.UI
	cfg.Backups.MaxAge, cfg.Backups.ShrinkRatio, cfg.Backups.ShrinkWindow = nc.Backups.MaxAge, nc.Backups.ShrinkRatio, nc.Backups.ShrinkWindow
	cfg.Server.TrustedProxies, cfg.Server.AccessLog = nc.Server.TrustedProxies, nc.Server.AccessLog
	if sameMode {
		cfg.Access = nc.Access
		p := nc.Proxy
		p.Upstream, p.RedirectHosts = cur.Proxy.Upstream, cur.Proxy.RedirectHosts
		cfg.Proxy = p
	}
	return &cfg, restart
}

// sameProxy reports whether a and b, options of the same running
// upstream, make the same proxy.
func sameProxy(a, b proxy.Options) bool {
	return a.UserHeader == b.UserHeader && a.EmailHeader == b.EmailHeader && a.GroupsHeader == b.GroupsHeader &&
		a.PassAuthorization == b.PassAuthorization && a.DialTimeout == b.DialTimeout &&
		a.ResponseHeaderTimeout == b.ResponseHeaderTimeout && a.PassHostHeader == b.PassHostHeader &&
		a.RewriteRedirects == b.RewriteRedirects
}

// reloadSections are the sections besides [authentication] whose keys a
// reload compares.
var reloadSections = []string{"server", "backups", "ldap", "proxy", "redis", "ui", "access"}

// liveKeys are the keys of reloadSections whose new value a reload
// applies; every key of [access] is live too. The others ([server]
// listen, state_dir, store, mode, metrics_listen, pprof, pprof_public, cookie_domain,
// public_url; [backups] dir, verify_every, verify_rate; [proxy] upstream,
// redirect_hosts; [redis])
// need a restart.
var liveKeys = map[string][]string{
	"server": {"trusted_proxies", "access_log"},
	"proxy": {"user_header", "email_header", "groups_header", "pass_authorization", "dial_timeout", "response_header_timeout",
		"pass_host_header", "rewrite_redirects", "skip_auth_routes", "allow_users", "allow_anonymous"},
	"ui":      {"title", "product_name", "icon"},
	"backups": {"max_age", "shrink_ratio", "shrink_window"},
}

// changedKeys returns the keys (those inherited from [DEFAULT] included)
// set in only one of a and b, or to different values.
func changedKeys(a, b *ini.Section) []string {
	var out []string
	for _, k := range slices.Concat(a.Keys(), b.Keys()) {
		if slices.Contains(out, k) {
			continue
		}
		if av, aok := a.Lookup(k); true {
			if bv, bok := b.Lookup(k); av != bv || aok != bok {
				out = append(out, k)
			}
		}
	}
	return out
}

// liveThrottling applies the throttling keys (and max_user_failures) to a running basic or flask-login provider.
func liveThrottling(p auth.Provider, s *ini.Section) error {
	t := loadThrottling(s)
	switch p := p.(type) {
	case *basic.Provider:
		p.SetThrottling(t, s.Int("max_user_failures", basic.DefaultMaxUserFailures, 1, 1_000_000))
	case *login.Provider:
		p.SetThrottling(t, s.Int("max_user_failures", login.DefaultMaxUserFailures, 1, 1_000_000))
	default:
		return fmt.Errorf("authentication type %s has no throttling", p.Type())
	}
	return nil
}

// liveSecondFactor applies a new second_factor to a flask-login provider,
// in every direction (login.Provider.SetSecondFactor).
func liveSecondFactor(p auth.Provider, s *ini.Section) error {
	lp, ok := p.(*login.Provider)
	if !ok {
		return fmt.Errorf("not a flask-login provider")
	}
	v, err := login.ParseSecondFactor(s.String("second_factor", ""))
	if err != nil {
		return err
	}
	return lp.SetSecondFactor(v)
}
