package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/backupweb/backupweb/internal/accesslog"
	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/buildinfo"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/tlscert"
	"github.com/backupweb/backupweb/internal/web"
)

// runServe runs the web interface until SIGINT or SIGTERM.
func runServe(c *cli, args []string) int {
	fs := c.flagSet("serve")
	path := configFlag(fs)
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
	a := app.Open(*path, c.options(*listen, log))
	if a.Provider == nil || a.Config.Report.HasErrors() {
		printProblems(c.stderr, a.Config.Report)
		fmt.Fprintln(c.stderr, "backupweb serve: configuration errors; not starting (run `backupweb check-config` to list them)")
		return exitError
	}
	logWarnings(log, a.Config.Report)
	if a.Shared != nil {
		defer a.Shared.Close() // after the provider, deferred below
	}
	if closer, ok := a.Provider.(io.Closer); ok {
		defer closer.Close()
	}

	// The web layer follows the configuration in force: a reload
	// (SIGHUP) replaces it. Access lines are at info level: a higher
	// -log-level omits them.
	accessLogger := accesslog.NewWriter(accessBuf, accessFormat)
	live := a.Live(*path, c.options(*listen, log), log, func(o *web.Options, cfg *config.Config) {
		o.AccessLog = cfg.Server.AccessLog && log.Enabled(c.ctx, slog.LevelInfo)
		o.AccessLogger = accessLogger
	})
	defer live.Close() // stops watching the backups folder
	if a.Metrics != nil {
		stop, err := c.serveMetrics(a.Config.Server.MetricsListen, a.Metrics, a.Config.Server.Pprof, log)
		if err != nil {
			log.Error("cannot listen for metrics", "addr", a.Config.Server.MetricsListen, "err", err)
			return exitError
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", a.Config.Server.Listen)
	if err != nil {
		log.Error("cannot listen", "addr", a.Config.Server.Listen, "err", err)
		return exitError
	}
	guarding := "backups " + a.Config.Backups.Dir
	switch {
	case a.Config.Proxy.Upstream != nil:
		guarding = "upstream " + a.Config.Proxy.Upstream.Redacted()
	case a.Config.Server.Mode == config.ModeForwardAuth:
		guarding = "forward-auth answers only"
	}
	srv := web.NewServer(live, log)
	scheme := "http"
	if tc := a.Config.Server.TLS; a.TLS != nil || a.ACME != nil {
		scheme = "https"
		// The plain listener answers HTTP-01 challenges with ACME, and
		// nothing but the 308 to https otherwise.
		redirect := func(h http.Handler) http.Handler { return h }
		if a.ACME != nil {
			srv.TLSConfig = a.ACME.ServerConfig(tc.MinVersion)
			redirect = a.ACME.HTTPHandler
			log.Info("certificates by ACME", "domains", strings.Join(tc.ACME.Domains, ","), "ca", tc.ACME.CA)
		} else {
			srv.TLSConfig = tlscert.ServerConfig(tc.MinVersion, a.TLS.GetCertificate)
		}
		ln = tls.NewListener(ln, srv.TLSConfig)
		if tc.HSTS {
			srv.Handler = web.StrictTransport(live, config.HSTSValue)
		}
		if tc.RedirectListen != "" {
			stop, err := c.serveRedirect(tc.RedirectListen, a.Config.Server.PublicURL, ln.Addr(), redirect, log)
			if err != nil {
				log.Error("cannot listen for plain HTTP", "addr", tc.RedirectListen, "err", err)
				ln.Close()
				return exitError
			}
			defer stop()
		}
	}
	log.Info("listening", "addr", ln.Addr().String(), "scheme", scheme, "version", buildinfo.Get().String(), "auth_type", a.Provider.Type(), "serving", guarding)

	// SIGHUP reloads the configuration, and through it the files it
	// names (Live.Reload), the TLS pair among them.
	stopFollowing := c.keepCurrent(a.Watchers(), []auth.Reloader{live})
	defer stopFollowing()
	if err := web.Serve(c.ctx, srv, ln); err != nil {
		log.Error("server stopped", "err", err)
		return exitError
	}
	log.Info("shut down")
	return exitOK
}

// keepCurrent is the one place that keeps the provider's data current
// while serving: it runs the watchers (the user file's poller, the groups
// file's) and calls the reloaders on every SIGHUP, all under one context;
// the function it returns stops them and waits for them.
func (c *cli) keepCurrent(watchers []auth.Watcher, reloaders []auth.Reloader) (stop func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	var wg sync.WaitGroup
	for _, w := range watchers {
		wg.Go(func() { w.Watch(ctx) })
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

// serveRedirect answers every plain-HTTP request on addr with 308 to
// https ([server] redirect_http_listen): to origin (public_url) when set,
// else to the request's host on the port of httpsAddr, until the returned
// function is called (or the program's context ends). wrap puts a handler
// before the redirect (ACME's HTTP-01 challenges).
func (c *cli) serveRedirect(addr string, origin *url.URL, httpsAddr net.Addr, wrap func(http.Handler) http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(httpsAddr.String())
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := web.Serve(ctx, web.NewServer(wrap(web.RedirectHTTPS(origin, port)), log), ln); err != nil {
			log.Error("redirect server stopped", "err", err)
		}
	}()
	log.Info("redirecting plain HTTP to https", "addr", ln.Addr().String())
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
