package app

import (
	"cmp"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
	"github.com/backupweb/backupweb/internal/web"
)

// WebOptions returns the web layer's options for what Open built: the
// provider, the access rules, the catalog (catalog mode) or the reverse
// proxy ([proxy] upstream), the groups, the shared store's readiness and
// the metrics (which also start counting the provider's sessions). The
// access log's switch and writer are the caller's to set. serve uses Live
// instead, which builds the same and replaces it on reload.
func (a *App) WebOptions(log *slog.Logger) web.Options {
	cfg := a.Config
	opts := a.webOptions(cfg, log)
	if cfg.Server.Mode == config.ModeCatalog {
		opts.Catalog = catalog.New(cfg.Backups.Dir).WithLogger(log)
		if a.Metrics != nil {
			a.Metrics.WatchBackups(backupFolders(opts.Catalog, func() catalog.Shrink { return shrinkOf(cfg) }), func() time.Duration { return cfg.Backups.MaxAge })
		}
	}
	if cfg.Proxy.Upstream != nil {
		po := proxyOptions(cfg, log, a.Errors)
		if rc, ok := a.Provider.(auth.Rechecker); ok {
			po.Rechecker = rc
		}
		opts.Proxy = proxy.New(po)
	}
	if a.Metrics != nil {
		if sc, ok := a.Provider.(auth.SessionCounter); ok {
			a.Metrics.WatchSessions(a.Provider.Type(), sc.SessionCount)
		}
	}
	return opts
}

// webOptions returns the web layer's options that follow cfg, without the
// catalog and the proxy: what a reload can change, over what Open built.
func (a *App) webOptions(cfg *config.Config, log *slog.Logger) web.Options {
	opts := web.Options{
		Provider:     a.Provider,
		Resolver:     peer.NewResolver(cfg.Server.TrustedProxies),
		Logger:       log,
		Errors:       a.Errors,
		Rules:        cfg.Access.Rules,
		GroupsHeader: cfg.Proxy.GroupsHeader,
		NoCatalog:    cfg.Server.Mode == config.ModeForwardAuth,
		Brand:        brand(cfg),
		MaxAge:       cfg.Backups.MaxAge,
		Shrink:       shrinkOf(cfg),
	}
	opts.ConfigFile, opts.ConfigMissing = configFile(cfg)
	if a.Shared != nil {
		opts.Ready = a.Shared
	}
	if a.Groups != nil {
		opts.Groups = a.Groups
	}
	if a.Metrics != nil {
		opts.Observer = a.Metrics
		opts.Events = a.Metrics
	}
	return opts
}

// proxyOptions are the reverse proxy's options from cfg ([proxy]
// upstream set). skip_auth_routes and allow_users are part of the access
// rules, which the web layer applies before the proxy.
func proxyOptions(cfg *config.Config, log *slog.Logger, errs *refusal.Errors) proxy.Options {
	return proxy.Options{
		Upstream:              cfg.Proxy.Upstream,
		UserHeader:            cfg.Proxy.UserHeader,
		EmailHeader:           cfg.Proxy.EmailHeader,
		GroupsHeader:          cfg.Proxy.GroupsHeader,
		PassAuthorization:     cfg.Proxy.PassAuthorization,
		DialTimeout:           cfg.Proxy.DialTimeout,
		ResponseHeaderTimeout: cfg.Proxy.ResponseHeaderTimeout,
		PassHostHeader:        cfg.Proxy.PassHostHeader,
		RewriteRedirects:      cfg.Proxy.RewriteRedirects,
		PublicURL:             cfg.Server.PublicURL,
		Logger:                log,
		Errors:                errs,
	}
}

// shrinkOf is cfg's rule of a shrunk folder.
func shrinkOf(cfg *config.Config) catalog.Shrink {
	return catalog.Shrink{Ratio: cfg.Backups.ShrinkRatio, Window: cfg.Backups.ShrinkWindow}
}

// backupFolders reads the catalog's top-level folders for the backup
// metrics: each folder's newest backup and how many folders below it
// shrank under the rule shrink gives, and "/" for the backups directly
// inside the backups folder.
func backupFolders(cat *catalog.Catalog, shrink func() catalog.Shrink) func() ([]metrics.BackupFolder, error) {
	return func() ([]metrics.BackupFolder, error) {
		top, err := cat.Tree()
		if err != nil {
			return nil, err
		}
		rule := shrink()
		out := make([]metrics.BackupFolder, 0, len(top.Folders)+1)
		if len(top.Backups) > 0 {
			n := 0
			if top.Shrunk(rule, nil) {
				n = 1
			}
			out = append(out, metrics.BackupFolder{Name: "/", Newest: top.Backups[0].Modified, Shrunk: n})
		}
		for _, f := range top.Folders {
			out = append(out, metrics.BackupFolder{Name: f.Name, Newest: f.Newest, Shrunk: f.ShrunkFolders(rule)})
		}
		return out, nil
	}
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
	switch {
	case cfg.UI.IconFile != nil:
		b.Icon = ui.NewIcon(cfg.UI.IconFile.Body, cfg.UI.IconFile.Type)
	case cfg.UI.Icon == config.NoIcon, cfg.UI.Icon == "" && cfg.UI.ProductName != "":
		b.NoIcon = true
	}
	return b
}

// Watchers are what keeps its data current while serving: the provider's
// (the user file's poller), the groups file's and the TLS pair's.
func (a *App) Watchers() []auth.Watcher {
	var out []auth.Watcher
	if a.TLS != nil {
		out = append(out, a.TLS)
	}
	if w, ok := a.Provider.(auth.Watcher); ok {
		out = append(out, w)
	}
	if a.Groups != nil {
		out = append(out, a.Groups)
	}
	return out
}

// Reloaders are what SIGHUP reloads: the provider's data, the groups
// file and the TLS pair.
func (a *App) Reloaders() []auth.Reloader {
	var out []auth.Reloader
	if a.TLS != nil {
		out = append(out, a.TLS)
	}
	if r, ok := a.Provider.(auth.Reloader); ok {
		out = append(out, r)
	}
	if a.Groups != nil {
		out = append(out, a.Groups)
	}
	return out
}

// configFile is the configuration file cfg was read from, absolute, for
// the catalog's notice that authentication is off; missing tells that
// there was none and the built-in defaults run, so the file is the one
// the program would read: ./backupweb.ini.
func configFile(cfg *config.Config) (path string, missing bool) {
	path = cmp.Or(cfg.Source, config.DefaultPath)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, cfg.Source == ""
}
