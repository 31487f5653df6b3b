package web

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/peer"
)

// targetHeaders names the request headers a forward-authentication
// endpoint reads the original request from: exactly those the documented
// snippet of its proxy overwrites, never one a client could have written
// and the proxy passed on.
type targetHeaders struct {
	method, uri, host string
}

// The rows of the contract's table "Forward authentication: what the
// proxy must say". nginx's auth subrequest carries the client's own
// headers unless its location overwrites them, and the documented snippet
// overwrites X-Original-*; Traefik and Caddy overwrite X-Forwarded-*.
var (
	requestRow = targetHeaders{method: "X-Original-Method", uri: "X-Original-URI", host: "X-Original-Host"}
	forwardRow = targetHeaders{method: "X-Forwarded-Method", uri: "X-Forwarded-Uri", host: "X-Forwarded-Host"}
)

// targetRow is the row of /auth/forward (forward true) or /auth/request.
func targetRow(forward bool) targetHeaders {
	if forward {
		return forwardRow
	}
	return requestRow
}

// forwardedTarget is the request a proxy asks about: its method, host and
// URI as a trusted proxy tells them in row's headers. What an untrusted
// peer tells is not believed: the whole target is unknown, and missing is
// nil (nothing for the operator of a proxy to fix). From a trusted proxy,
// missing names each header of row that is absent (or, for the URI, not
// an absolute path); that part is unknown, and the rules must then decide
// every possibility alike (see access.Rules.Decide), which never turns an
// unknown part into an allow. The client's method-override headers, which
// the proxy passes on the question, count in every case
// (access.ReadForwarded).
func forwardedTarget(r *http.Request, row targetHeaders) (t access.Target, missing []string) {
	if !peer.Of(r).Proxied {
		return access.ReadForwarded("", "", "", r.Header), nil
	}
	method, uri, host := r.Header.Get(row.method), r.Header.Get(row.uri), r.Header.Get(row.host)
	t = access.ReadForwarded(method, uri, host, r.Header)
	if method == "" {
		missing = append(missing, row.method)
	}
	if t.URL == nil {
		missing = append(missing, row.uri)
	}
	if host == "" {
		missing = append(missing, row.host)
	}
	return t, missing
}

// logUnknownTarget writes the warning of a forward-authentication question
// whose trusted proxy left out headers of its endpoint's row: the proxy's
// configuration lacks lines of the documented snippet.
func logUnknownTarget(log *slog.Logger, r *http.Request, missing []string) {
	if log == nil {
		return
	}
	log.LogAttrs(r.Context(), slog.LevelWarn, "forward auth: the proxy did not say which request it asks about",
		slog.String("path", r.URL.Path), slog.String("missing", strings.Join(missing, ",")),
		slog.String("client", peer.Of(r).String()))
}
