package config

import (
	"strings"

	"github.com/backupweb/backupweb/internal/ini"
)

// Values of [server] mode.
const (
	// ModeCatalog serves backupweb's own backup catalog, [backups] dir.
	ModeCatalog = "catalog"
	// ModeProxy guards [proxy] upstream as its reverse proxy.
	ModeProxy = "proxy"
	// ModeForwardAuth serves only /auth/request, /auth/forward, the
	// sign-in pages and the probes, for nginx, Traefik or Caddy: no
	// catalog and no proxy.
	ModeForwardAuth = "forward-auth"
)

// proxyOnlyKeys are the [proxy] keys only the built-in proxy uses.
var proxyOnlyKeys = []string{"user_header", "email_header", "pass_authorization", "dial_timeout", "response_header_timeout",
	"pass_host_header", "rewrite_redirects", "skip_auth_routes", "allow_anonymous"}

// loadMode reads [server] mode, checks that it agrees with [proxy]
// upstream, and warns about keys the chosen mode does not use: [backups]
// outside catalog mode, the built-in proxy's keys without an upstream.
func loadMode(srv, backups, prx *ini.Section, p Proxy) string {
	mode := strings.ToLower(strings.TrimSpace(srv.String("mode", "")))
	upstream := p.Upstream != nil || prx.Has("upstream")
	switch mode {
	case "":
		mode = ModeCatalog
		if upstream {
			mode = ModeProxy
		}
	case ModeCatalog, ModeForwardAuth:
		if upstream {
			srv.Errorf("mode", "is %q but [proxy] upstream is set, which means mode = proxy; remove one of them", mode)
		}
	case ModeProxy:
		if !upstream {
			srv.Errorf("mode", "is %q but [proxy] upstream is not set; set upstream to the guarded interface's URL", mode)
		}
	default:
		srv.Errorf("mode", "must be %q (the backup catalog), %q (guard [proxy] upstream) or %q (answer nginx, Traefik or Caddy only)", ModeCatalog, ModeProxy, ModeForwardAuth)
		mode = ModeCatalog
	}
	if mode != ModeCatalog && backups.Present() {
		for _, k := range backups.OwnKeys() {
			backups.Warnf(k, "is not used: in %s mode backupweb serves no backup catalog", mode)
		}
	}
	if mode != ModeProxy {
		for _, k := range proxyOnlyKeys {
			if prx.Has(k) {
				prx.Warnf(k, "is not used: only the built-in proxy ([proxy] upstream) uses it")
			}
		}
	}
	return mode
}
