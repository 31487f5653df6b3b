package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/catalog"
	"github.com/backupweb/backupweb/peer"
	"github.com/backupweb/backupweb/web"
)

// runServe runs the web interface until SIGINT or SIGTERM.
func runServe(c *cli, args []string) int {
	fs := c.flagSet("serve")
	path := fs.String("config", "", "configuration file (default ./backupweb.ini if present, else built-in defaults)")
	listen := fs.String("listen", "", "address to listen on, overriding [server] listen")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb serve: unexpected arguments:", fs.Args())
		return exitUsage
	}
	log, err := newLogger(c.stderr, *logFormat)
	if err != nil {
		fmt.Fprintln(c.stderr, "backupweb serve:", err)
		return exitUsage
	}
	// Code that logs without a logger of its own (auth.WriteError) writes
	// in the same format to the same place.
	slog.SetDefault(log)

	a := c.load(*path, *listen, log, false)
	if a.provider == nil || a.cfg.Report.HasErrors() {
		printProblems(c.stderr, a.cfg.Report)
		fmt.Fprintln(c.stderr, "backupweb serve: configuration errors; not starting (run `backupweb check-config` to list them)")
		return exitError
	}
	logWarnings(log, a.cfg.Report)
	if closer, ok := a.provider.(io.Closer); ok {
		defer closer.Close()
	}

	handler := web.NewHandler(web.Options{
		Provider: a.provider,
		Catalog:  catalog.New(a.cfg.Backups.Dir).WithLogger(log),
		Resolver: peer.NewResolver(a.cfg.Server.TrustedProxies),
		Logger:   log,
	})
	ln, err := net.Listen("tcp", a.cfg.Server.Listen)
	if err != nil {
		log.Error("cannot listen", "addr", a.cfg.Server.Listen, "err", err)
		return exitError
	}
	log.Info("listening", "addr", ln.Addr().String(), "auth_type", a.provider.Type(), "backups", a.cfg.Backups.Dir)

	stopReload := c.reloadOnHangup(a.provider)
	defer stopReload()
	if err := web.Serve(c.ctx, web.NewServer(handler, log), ln); err != nil {
		log.Error("server stopped", "err", err)
		return exitError
	}
	log.Info("shut down")
	return exitOK
}

// reloadOnHangup calls the provider's Reload on every SIGHUP, when it has
// one, and returns a function that stops listening for the signal.
func (c *cli) reloadOnHangup(p auth.Provider) (stop func()) {
	r, ok := p.(auth.Reloader)
	if !ok {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				r.Reload() // providers log their own reload outcome
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}
