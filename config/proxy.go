package config

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
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
}

// Defaults of [proxy].
const (
	DefaultUserHeader            = "X-Forwarded-User"
	DefaultEmailHeader           = "X-Forwarded-Email"
	DefaultDialTimeout           = 5 * time.Second
	DefaultResponseHeaderTimeout = 60 * time.Second
)

var proxyKeys = []string{"upstream", "user_header", "email_header", "pass_authorization", "dial_timeout", "response_header_timeout", "redirect_hosts"}

// loadProxy reads [proxy].
func loadProxy(s *Section) Proxy {
	warnUnknown(s, proxyKeys)
	p := Proxy{
		UserHeader:            strings.TrimSpace(s.String("user_header", DefaultUserHeader)),
		EmailHeader:           strings.TrimSpace(s.String("email_header", DefaultEmailHeader)),
		PassAuthorization:     s.Bool("pass_authorization", false),
		DialTimeout:           s.Duration("dial_timeout", DefaultDialTimeout),
		ResponseHeaderTimeout: s.Duration("response_header_timeout", DefaultResponseHeaderTimeout),
	}
	for _, k := range []string{"user_header", "email_header"} {
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
func checkCookieDomain(s *Section) string {
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
