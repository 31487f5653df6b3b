package config

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/ini"
)

// Proxy is the [proxy] section: backupweb as the authenticating reverse
// proxy of another web interface.
type Proxy struct {
	// Upstream is the guarded interface, [proxy] upstream: an absolute
	// http or https URL. Nil: backupweb serves its own backup catalog.
	Upstream *url.URL
	// UserHeader carries the signed-in user's name to the upstream,
	// [proxy] user_header, default DefaultUserHeader; "" sends none.
	UserHeader string
	// EmailHeader carries the e-mail (oauth) to the upstream, [proxy]
	// email_header, default DefaultEmailHeader; "" sends none.
	EmailHeader string
	// GroupsHeader carries the signed-in user's groups (sorted,
	// comma-separated) to the upstream and in the forward-authentication
	// answers, [proxy] groups_header, default DefaultGroupsHeader; ""
	// sends none.
	GroupsHeader string
	// PassAuthorization lets the client's Authorization header reach the
	// upstream, [proxy] pass_authorization, default false.
	PassAuthorization bool
	// DialTimeout bounds connecting to the upstream, [proxy] dial_timeout,
	// default DefaultDialTimeout.
	DialTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the upstream's response
	// headers, [proxy] response_header_timeout, default
	// DefaultResponseHeaderTimeout.
	ResponseHeaderTimeout time.Duration
	// RedirectHosts are the host names (exact, or ".example.com" for its
	// sub-domains) that a login's next may name as an absolute https URL,
	// [proxy] redirect_hosts; used only with [server] cookie_domain.
	RedirectHosts []string
	// PassHostHeader sends the client's Host to the upstream instead of
	// the upstream's own, [proxy] pass_host_header, default false.
	PassHostHeader bool
	// RewriteRedirects rewrites a Location or Content-Location answer
	// that names the upstream's own address to the client's scheme and
	// host, [proxy] rewrite_redirects, default true.
	RewriteRedirects bool
	// SkipAuthRoutes pass the built-in proxy without sign-in and without
	// identity headers, [proxy] skip_auth_routes (METHODS=^/pattern or
	// ^/pattern entries), default none.
	SkipAuthRoutes access.Routes
	// AllowUsers, when set, are the only signed-in users who may pass the
	// proxy (and the forward-authentication endpoints); others get 403,
	// [proxy] allow_users, default empty (every signed-in user).
	AllowUsers []string
	// AllowAnonymous accepts skip_auth_routes entries that are unanchored
	// or match every path, [proxy] allow_anonymous, default false.
	AllowAnonymous bool
}

// Defaults of [proxy].
const (
	DefaultUserHeader            = "X-Forwarded-User"
	DefaultEmailHeader           = "X-Forwarded-Email"
	DefaultGroupsHeader          = "X-Forwarded-Groups"
	DefaultDialTimeout           = 5 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
)

var proxyKeys = []string{"upstream", "user_header", "email_header", "pass_authorization", "dial_timeout", "response_header_timeout", "redirect_hosts",
	"pass_host_header", "rewrite_redirects", "skip_auth_routes", "allow_users", "allow_anonymous", "groups_header"}

// loadProxy reads [proxy].
func loadProxy(s *ini.Section) Proxy {
	warnUnknown(s, proxyKeys)
	p := Proxy{
		UserHeader:            strings.TrimSpace(s.String("user_header", DefaultUserHeader)),
		EmailHeader:           strings.TrimSpace(s.String("email_header", DefaultEmailHeader)),
		GroupsHeader:          strings.TrimSpace(s.String("groups_header", DefaultGroupsHeader)),
		PassAuthorization:     s.Bool("pass_authorization", false),
		DialTimeout:           s.Duration("dial_timeout", DefaultDialTimeout),
		ResponseHeaderTimeout: s.Duration("response_header_timeout", DefaultResponseHeaderTimeout),
		PassHostHeader:        s.Bool("pass_host_header", false),
		RewriteRedirects:      s.Bool("rewrite_redirects", true),
		AllowAnonymous:        s.Bool("allow_anonymous", false),
		AllowUsers:            s.List("allow_users"),
	}
	p.SkipAuthRoutes = loadSkipAuthRoutes(s, p.AllowAnonymous)
	for _, k := range []string{"user_header", "email_header", "groups_header"} {
		if v := s.String(k, ""); v != "" && !validHeaderName(v) {
			s.Errorf(k, "is not a header name (letters, digits and -, such as X-Forwarded-User)")
		}
	}
	for _, h := range s.List("redirect_hosts") {
		if strings.ContainsAny(strings.TrimPrefix(h, "."), "/:@ ") || h == "." || h == "" {
			s.Errorf("redirect_hosts", "%q is not a host name (write backups.example.com, or .example.com for its sub-domains)", h)
			continue
		}
		p.RedirectHosts = append(p.RedirectHosts, strings.ToLower(h))
	}
	raw := strings.TrimSpace(s.String("upstream", ""))
	if raw == "" {
		return p
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		s.Errorf("upstream", "must be an absolute http or https URL such as http://127.0.0.1:5000, without user, query or fragment")
		return p
	}
	p.Upstream = u
	if u.Scheme == "http" && !localHost(u.Hostname()) {
		s.Warnf("upstream", "uses plain http to %s, which is neither loopback nor a private address: requests, the user's identity and the guarded interface's answers cross the network unencrypted; use https", u.Hostname())
	}
	return p
}

// loadSkipAuthRoutes reads [proxy] skip_auth_routes. An entry that cannot
// be used is an error; one that is unanchored or matches every path is an
// error too unless allow_anonymous = true says the operator means it.
func loadSkipAuthRoutes(s *ini.Section, allowAnonymous bool) access.Routes {
	var out access.Routes
	for _, e := range s.List("skip_auth_routes") {
		r, problem, err := access.Parse(e)
		if err != nil {
			s.Errorf("skip_auth_routes", "%v", err)
			continue
		}
		if problem != nil && !allowAnonymous {
			hint := "anchor it with ^ and name the application's public paths only, such as GET=^/rest/noauth/health$"
			if errors.Is(problem, access.ErrCatchAll) {
				hint = "it would let everyone in without signing in; name the public paths only, such as GET=^/rest/noauth/health$"
			}
			s.Errorf("skip_auth_routes", "%q: %v: %s (or set allow_anonymous = true if that is what you mean)", e, problem, hint)
			continue
		}
		out = append(out, r)
	}
	return out
}

// localHost reports whether host is loopback, "localhost" or a private
// address, where plain http to the upstream stays on a trusted network.
func localHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast()
}

// validHeaderName reports whether name can be an HTTP header name.
func validHeaderName(name string) bool {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return name != ""
}

// checkCookieDomain reads [server] cookie_domain: a host name such as
// example.com (a leading dot is dropped), not an address.
func checkCookieDomain(s *ini.Section) string {
	d := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s.String("cookie_domain", ""))), ".")
	if d == "" {
		return ""
	}
	if net.ParseIP(d) != nil || !strings.Contains(d, ".") || strings.ContainsAny(d, "/:@ ") {
		s.Errorf("cookie_domain", "must be a domain such as example.com, shared by the login's host and the guarded hosts")
		return ""
	}
	return d
}
