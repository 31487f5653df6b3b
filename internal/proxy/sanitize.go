package proxy

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/session"
)

// What crosses the proxy, header by header: the rules by which nothing the
// client or the guarded application sends can change who a user is.
//
// Request side (dropForged, dropH2C): a header name is compared the way the
// upstream may read it, case-folded and with "_" read as "-". WSGI and CGI
// servers (and the frameworks built on them) turn both X-Forwarded-User and
// X_Forwarded_User into HTTP_X_FORWARDED_USER and join the two values, so a
// client that sends X_Forwarded_User: admin beside its own session would be
// "bob,admin" to a Python application. Every spelling of an identity header
// or a forwarding header is therefore removed before backupweb sets its own,
// and so is every spelling of a path-override header
// (access.PathOverrideHeaders: X-Original-URL and its kin), by which an
// application could serve another path than the one the rules judged.
//
// Response side (stripOwnSetCookies): the upstream must not set, replace or
// clear backupweb's own cookies (session, login form, OAuth flow), under any
// prefix.

// groupsHeader carries a user's groups to the upstream. It is reserved
// whether or not groups are sent: a client can never supply it.
const groupsHeader = "X-Forwarded-Groups"

// foldName returns a header name as an upstream may read it: lower case,
// "_" read as "-".
func foldName(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "_", "-")
}

// foldHasPrefix reports whether name, read as foldName reads it, begins
// with folded (itself already folded). It allocates nothing: it runs for
// every header of every proxied request. Header names are ASCII tokens, so
// ASCII folding is the whole rule.
func foldHasPrefix(name, folded string) bool {
	if len(name) < len(folded) {
		return false
	}
	for i := 0; i < len(folded); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '_':
			c = '-'
		}
		if c != folded[i] {
			return false
		}
	}
	return true
}

// foldEqual reports whether name, read as foldName reads it, is folded.
func foldEqual(name, folded string) bool {
	return len(name) == len(folded) && foldHasPrefix(name, folded)
}

// reservedNames returns the folded names of the headers that carry
// identity to the upstream (o's user, e-mail and groups headers, and
// X-Forwarded-Groups whatever groups_header says): the client's spellings
// of them are always dropped.
func reservedNames(o Options) []string {
	names := []string{foldName(groupsHeader)}
	for _, n := range []string{o.UserHeader, o.EmailHeader, o.GroupsHeader} {
		if n != "" {
			names = append(names, foldName(n))
		}
	}
	return names
}

// otherIdentities are the folded names of the headers by which other
// authentication proxies (oauth2-proxy, Authelia, Authentik, Apache's
// REMOTE_USER convention) tell an application who is signed in, besides
// every X-Auth-Request-* header: an application set up for one of them
// believes such a header, so the client's never reaches the upstream.
var otherIdentities = []string{"remote-user", "remote-groups", "remote-email", "remote-name", "x-remote-user"}

// forged reports whether a request header named name, as the client sent
// it, must not reach the upstream: a spelling of a reserved identity
// header, of another proxy's identity header (X-Auth-Request-*,
// otherIdentities), of a forwarding header (X-Forwarded-*, X-Real-IP,
// Forwarded), which backupweb sets itself from what it believes, or of a
// path-override header (access.IsPathOverride), by which the upstream
// could serve another path than the one the rules judged.
func forged(name string, reserved []string) bool {
	if foldHasPrefix(name, "x-forwarded-") || foldEqual(name, "x-real-ip") || foldEqual(name, "forwarded") ||
		foldHasPrefix(name, "x-auth-request-") || access.IsPathOverride(name) {
		return true
	}
	for _, r := range reserved {
		if foldEqual(name, r) {
			return true
		}
	}
	for _, o := range otherIdentities {
		if foldEqual(name, o) {
			return true
		}
	}
	return false
}

// dropForged removes from h every header that forged refuses, whatever its
// spelling.
func dropForged(h http.Header, reserved []string) {
	for name := range h {
		if forged(name, reserved) {
			delete(h, name)
		}
	}
}

// dropH2C removes a cleartext HTTP/2 upgrade (Upgrade: h2c, and
// HTTP2-Settings) from a request on its way upstream: the upstream must
// never switch the connection to a protocol whose later requests would
// bypass backupweb's checks. Other upgrades (WebSocket) are left alone.
// ReverseProxy has already reduced Connection to "Upgrade" when Upgrade is
// set.
func dropH2C(h http.Header) {
	for name := range h {
		if foldEqual(name, "http2-settings") {
			delete(h, name)
		}
	}
	for _, v := range h.Values("Upgrade") {
		for token := range strings.SplitSeq(v, ",") {
			proto, _, _ := strings.Cut(strings.TrimSpace(token), "/")
			if strings.EqualFold(proto, "h2c") {
				h.Del("Upgrade")
				h.Del("Connection")
				return
			}
		}
	}
}

// ownCookiePrefix begins the name of every cookie backupweb sets: the
// session and login-form cookies (session.DefaultCookieName,
// session.DefaultFormCookieName), the OAuth flow's backupweb_oauth_…
// cookies and any later one.
const ownCookiePrefix = "backupweb_"

// cookiePrefixesLower are the cookie name prefixes ownCookie looks past,
// in lower case, made once.
var cookiePrefixesLower = [...]string{strings.ToLower(session.HostPrefix), strings.ToLower(session.SecurePrefix)}

// ownCookie reports whether a cookie is one of backupweb's own, with or
// without the __Host-/__Secure- prefix (in any letter case, as browsers
// read prefixes): those never reach the upstream, and the upstream never
// sets them.
func ownCookie(name string) bool {
	lower := strings.ToLower(name)
	for _, p := range cookiePrefixesLower {
		if strings.HasPrefix(lower, p) {
			lower = lower[len(p):]
			break
		}
	}
	return strings.HasPrefix(lower, ownCookiePrefix)
}

// setCookieName returns the name of the cookie a Set-Cookie line sets,
// trimmed as browsers trim it.
func setCookieName(line string) string {
	pair, _, _ := strings.Cut(line, ";")
	name, _, _ := strings.Cut(pair, "=")
	return strings.TrimSpace(name)
}

// cookieGuard removes backupweb's cookies from the upstream's answers and
// warns once (per upstream) that the upstream tried to set one.
type cookieGuard struct {
	log      *slog.Logger
	upstream string
	once     sync.Once
}

// strip removes from resp every Set-Cookie line that names one of
// backupweb's cookies. It is ReverseProxy's ModifyResponse.
func (g *cookieGuard) strip(resp *http.Response) error {
	lines := resp.Header.Values("Set-Cookie")
	if len(lines) == 0 {
		return nil
	}
	kept := lines[:0:0]
	var removed []string
	for _, l := range lines {
		if name := setCookieName(l); ownCookie(name) {
			removed = append(removed, name)
			continue
		}
		kept = append(kept, l)
	}
	if len(removed) == 0 {
		return nil
	}
	resp.Header.Del("Set-Cookie")
	for _, l := range kept {
		resp.Header.Add("Set-Cookie", l)
	}
	g.once.Do(func() {
		// The names only: the values may be someone's session.
		g.log.Warn("proxy: the upstream tried to set backupweb's own cookies; they were removed from its answer (logged once)",
			"upstream", g.upstream, "cookies", strings.Join(removed, ","))
	})
	return nil
}
