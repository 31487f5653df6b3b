package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/config"
	"github.com/backupweb/backupweb/groupfile"
	"github.com/backupweb/backupweb/internal/accesslog"
	"github.com/backupweb/backupweb/internal/buildinfo"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/web"
	"github.com/backupweb/backupweb/peer"
	"github.com/backupweb/backupweb/proxy"
)

// runServe runs the web interface until SIGINT or SIGTERM.
func runServe(c *cli, args []string) int {
	fs := c.flagSet("serve")
	path := fs.String("config", "", "configuration file (default ./backupweb.ini if present, else built-in defaults)")
	listen := fs.String("listen", "", "address to listen on, overriding [server] listen")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "least severe level logged: debug, info, warn or error")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb serve: unexpected arguments:", fs.Args())
		return exitUsage
	}
	// The program's log and the access log's batches share standard
	// error; one lock keeps their writes whole.
	stderr := &lockedWriter{w: c.stderr}
	log, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintln(c.stderr, "backupweb serve:", err)
		return exitUsage
	}
	// Access lines go through a bounded buffer, flushed every 100 ms and
	// when serve returns (after the graceful shutdown: no line is lost).
	accessBuf := accesslog.NewBuffer(stderr, 0, accessFlushInterval)
	defer accessBuf.Close()
	accessFormat := accesslog.Text
	if *logFormat == "json" {
		accessFormat = accesslog.JSON
	}
	a := c.load(*path, *listen, log, false)
	if a.provider == nil || a.cfg.Report.HasErrors() {
		printProblems(c.stderr, a.cfg.Report)
		fmt.Fprintln(c.stderr, "backupweb serve: configuration errors; not starting (run `backupweb check-config` to list them)")
		return exitError
	}
	logWarnings(log, a.cfg.Report)
	if a.shared != nil {
		defer a.shared.Close() // after the provider, deferred below
	}
	if closer, ok := a.provider.(io.Closer); ok {
		defer closer.Close()
	}

	opts := web.Options{
		Provider: a.provider,
		Resolver: peer.NewResolver(a.cfg.Server.TrustedProxies),
		Logger:   log,
		// Access lines are at info level: a higher -log-level omits them.
		AccessLog:    a.cfg.Server.AccessLog && log.Enabled(c.ctx, slog.LevelInfo),
		AccessLogger: accesslog.NewWriter(accessBuf, accessFormat),
		Errors:       a.errs,
		Rules:        a.cfg.Access.Rules,
		GroupsHeader: a.cfg.Proxy.GroupsHeader,
		NoCatalog:    a.cfg.Server.Mode == config.ModeForwardAuth,
		Brand:        brand(a.cfg),
	}
	if a.cfg.Server.Mode == config.ModeCatalog {
		opts.Catalog = catalog.New(a.cfg.Backups.Dir).WithLogger(log)
		defer opts.Catalog.Close() // stops watching the folder
	}
	if a.shared != nil {
		opts.Ready = a.shared
	}
	if a.groups != nil {
		opts.Groups = a.groups
	}
	if up := a.cfg.Proxy.Upstream; up != nil {
		// skip_auth_routes and allow_users are part of the access rules,
		// which the web layer applies before the proxy.
		po := proxy.Options{
			Upstream:              up,
			UserHeader:            a.cfg.Proxy.UserHeader,
			EmailHeader:           a.cfg.Proxy.EmailHeader,
			GroupsHeader:          a.cfg.Proxy.GroupsHeader,
			PassAuthorization:     a.cfg.Proxy.PassAuthorization,
			DialTimeout:           a.cfg.Proxy.DialTimeout,
			ResponseHeaderTimeout: a.cfg.Proxy.ResponseHeaderTimeout,
			PassHostHeader:        a.cfg.Proxy.PassHostHeader,
			RewriteRedirects:      a.cfg.Proxy.RewriteRedirects,
			PublicURL:             a.cfg.Server.PublicURL,
			Logger:                log,
			Errors:                a.errs,
		}
		if rc, ok := a.provider.(auth.Rechecker); ok {
			po.Rechecker = rc
		}
		opts.Proxy = proxy.New(po)
	}
	if a.metrics != nil {
		opts.Observer = a.metrics
		opts.Events = a.metrics
		if sc, ok := a.provider.(auth.SessionCounter); ok {
			a.metrics.WatchSessions(a.provider.Type(), sc.SessionCount)
		}
		stop, err := c.serveMetrics(a.cfg.Server.MetricsListen, a.metrics, a.cfg.Server.Pprof, log)
		if err != nil {
			log.Error("cannot listen for metrics", "addr", a.cfg.Server.MetricsListen, "err", err)
			return exitError
		}
		defer stop()
	}
	handler := web.NewHandler(opts)
	ln, err := net.Listen("tcp", a.cfg.Server.Listen)
	if err != nil {
		log.Error("cannot listen", "addr", a.cfg.Server.Listen, "err", err)
		return exitError
	}
	guarding := "backups " + a.cfg.Backups.Dir
	switch {
	case a.cfg.Proxy.Upstream != nil:
		guarding = "upstream " + a.cfg.Proxy.Upstream.Redacted()
	case a.cfg.Server.Mode == config.ModeForwardAuth:
		guarding = "forward-auth answers only"
	}
	log.Info("listening", "addr", ln.Addr().String(), "version", buildinfo.Get().String(), "auth_type", a.provider.Type(), "serving", guarding)

	stopFollowing := c.keepCurrent(a.provider, a.groups)
	defer stopFollowing()
	if err := web.Serve(c.ctx, web.NewServer(handler, log), ln); err != nil {
		log.Error("server stopped", "err", err)
		return exitError
	}
	log.Info("shut down")
	return exitOK
}

// brand is what the pages call the service, from [ui]: the title defaults
// to the product name when only that is set, and in proxy mode a page
// without a product name sends people back to "the application", not to
// backups it does not serve.
func brand(cfg *config.Config) ui.Brand {
	b := ui.Brand{Title: cmp.Or(cfg.UI.Title, cfg.UI.ProductName), Product: cfg.UI.ProductName}
	if b.Product == "" && cfg.Server.Mode != config.ModeCatalog {
		b.Product = "the application" // proxy or forward-auth: not our backups
	}
	return b
}

// keepCurrent is the one place that keeps the provider's data current
// while serving: it runs the provider's Watch (the user file's poller) and
// the groups file's, and calls their Reload on every SIGHUP, all under one
// context; the function it returns stops them and waits for them. groups
// may be nil.
func (c *cli) keepCurrent(p auth.Provider, groups *groupfile.File) (stop func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	var wg sync.WaitGroup
	if w, ok := p.(auth.Watcher); ok {
		wg.Go(func() { w.Watch(ctx) })
	}
	if groups != nil {
		wg.Go(func() { groups.Watch(ctx) })
	}
	var reloaders []auth.Reloader
	if r, ok := p.(auth.Reloader); ok {
		reloaders = append(reloaders, r)
	}
	if groups != nil {
		reloaders = append(reloaders, groups)
	}
	if len(reloaders) > 0 {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		wg.Go(func() {
			defer signal.Stop(hup)
			for {
				select {
				case <-hup:
					for _, r := range reloaders {
						r.Reload() // each logs its own reload outcome
					}
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// serveMetrics serves m at /metrics on its own listener until the returned
// function is called (or the program's context ends), and with pprof Go's
// profiles at /debug/pprof/ ([server] pprof).
func (c *cli) serveMetrics(addr string, m *metrics.Metrics, pprof bool, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	if pprof {
		mountPprof(mux)
	}
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := web.Serve(ctx, web.NewServer(mux, log), ln); err != nil {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	log.Info("serving metrics", "addr", ln.Addr().String(), "path", "/metrics", "pprof", pprof)
	return func() { cancel(); <-done }, nil
}

// lockedWriter serialises writes to w, which may not be safe for
// concurrent use (a test's buffer).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// accessFlushInterval is how often the access log's buffer is flushed;
// tests lengthen it.
var accessFlushInterval = accesslog.FlushInterval
