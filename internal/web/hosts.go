package web

import (
	"net/http"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// anyHostPaths answer for every host: the probes, which load balancers
// ask by address, and the forward-authentication questions, which are
// about another request whose forwarded host the rules judge. The public
// static files (ui.IsStatic) do too, so that the 421 page has its
// stylesheet.
var anyHostPaths = map[string]bool{"/healthz": true, "/readyz": true, RequestAuthPath: true, ForwardAuthPath: true, RefusedPath: true}

// servedHostsOnly answers 421 Misdirected Request (the styled page, or
// JSON by the refusal rule) to a request for a host the rules do not serve
// (access.Rules.Serves: when a rule names hosts, only those and
// public_url's host), with an "auth refused" line, reason "host not
// served", the host as its detail. A rule limited to a host would
// otherwise be a deny that a client steps around by writing another Host.
// Without rules naming hosts it returns next itself.
func servedHostsOnly(rules *access.Rules, authType string, errs *refusal.Errors, audit auth.Audit, next http.Handler) http.Handler {
	if !rules.NamesHosts() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if anyHostPaths[r.URL.Path] || ui.IsStatic(r.URL.Path) || rules.Serves(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		host := access.NormalHost(r.Host)
		if len(host) > 100 {
			host = host[:100]
		}
		audit.RefusedDetail(r, authType, access.ReasonHostNotServed, "host "+host, "")
		setSecurityHeaders(w.Header())
		errs.Refuse(w, r, refusal.MisdirectedHost)
	})
}
