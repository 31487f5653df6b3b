// Package peer tells who is at the other end of a request: the client's IP
// address and whether the request reached the service over https.
//
// Behind a TLS-terminating reverse proxy both facts arrive in forwarding
// headers (X-Forwarded-For, X-Real-IP, X-Forwarded-Proto). Anyone can send
// those headers, so a Resolver believes them only when the connection comes
// from a trusted proxy, and reads X-Forwarded-For from the right: each proxy
// appends the address it saw, so only the entries added by trusted proxies
// are known to be true. The right-most entry that is not itself a trusted
// proxy is the client; entries further left may be forged by it.
package peer

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Info is what a Resolver learnt about a request's client.
type Info struct {
	// Addr is the client's IP address; the zero Addr when it could not be
	// parsed from the connection (which net/http servers do not produce).
	Addr netip.Addr
	// HTTPS reports whether the client reached the service over https,
	// directly or, as told by a trusted proxy, in front of it.
	HTTPS bool
	// Proxied reports whether the request came through a trusted proxy,
	// whose other forwarding headers (X-Forwarded-Host, X-Forwarded-Uri)
	// may then be believed too.
	Proxied bool
}

// String returns the address for logs, "unknown" when there is none.
func (i Info) String() string {
	if !i.Addr.IsValid() {
		return "unknown"
	}
	return i.Addr.String()
}

// Resolver resolves Info from requests. The zero Resolver, and a nil
// *Resolver, trust no proxy.
type Resolver struct {
	trusted []netip.Prefix
	notice  *notice // nil: forwarding headers from untrusted peers go unremarked
}

// NewResolver returns a Resolver that believes forwarding headers only from
// peers inside one of the trusted prefixes.
func NewResolver(trusted []netip.Prefix) *Resolver {
	ps := make([]netip.Prefix, len(trusted))
	for i, p := range trusted {
		ps[i] = p.Masked()
	}
	return &Resolver{trusted: ps}
}

// Trusted reports whether addr belongs to a trusted proxy.
func (res *Resolver) Trusted(addr netip.Addr) bool {
	if res == nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range res.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Resolve works out the client of r. It never fails: without believable
// headers the connection's own address and TLS state are the answer.
func (res *Resolver) Resolve(r *http.Request) Info {
	info := Info{Addr: remoteAddr(r.RemoteAddr), HTTPS: r.TLS != nil}
	if !info.Addr.IsValid() || !res.Trusted(info.Addr) {
		return info
	}
	info.Proxied = true
	if a, ok := res.fromForwardedFor(r.Header.Values("X-Forwarded-For")); ok {
		info.Addr = a
	} else if a, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get("X-Real-IP"))); err == nil {
		info.Addr = a.Unmap()
	}
	if proto, ok := lastValue(r.Header.Values("X-Forwarded-Proto")); ok {
		info.HTTPS = strings.EqualFold(proto, "https")
	}
	return info
}

// fromForwardedFor walks the X-Forwarded-For entries from the right and
// returns the first that is not a trusted proxy. When every entry is trusted
// the left-most one is the client. An entry that does not parse ends the walk
// without an answer: it cannot have been written by a trusted proxy.
func (res *Resolver) fromForwardedFor(values []string) (netip.Addr, bool) {
	var entries []string
	for _, v := range values {
		entries = append(entries, strings.Split(v, ",")...)
	}
	var last netip.Addr
	for i := len(entries) - 1; i >= 0; i-- {
		e := strings.TrimSpace(entries[i])
		if e == "" {
			continue
		}
		a, ok := parseEntry(e)
		if !ok {
			return netip.Addr{}, false
		}
		if !res.Trusted(a) {
			return a, true
		}
		last = a
	}
	return last, last.IsValid()
}

// parseEntry parses one X-Forwarded-For entry: an IP address, optionally
// with a port ("1.2.3.4:5678", "[::1]:80") as some proxies write it.
func parseEntry(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// lastValue returns the right-most non-empty entry of a comma-separated
// header: the one set by the nearest, trusted, proxy.
func lastValue(values []string) (string, bool) {
	for i := len(values) - 1; i >= 0; i-- {
		parts := strings.Split(values[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			if p := strings.TrimSpace(parts[j]); p != "" {
				return p, true
			}
		}
	}
	return "", false
}

func remoteAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

type ctxKey struct{}

// InfoContextKey is the context key under which NewContext stores the
// Info. It is exported, like http.ServerContextKey, so that one context
// can answer for several packages' values at once (package web's
// per-request context); such a context answers with an Info or an *Info.
var InfoContextKey any = ctxKey{}

// NewContext returns a copy of ctx carrying info.
func NewContext(ctx context.Context, info Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// FromContext returns the Info stored by NewContext.
func FromContext(ctx context.Context) (Info, bool) {
	switch v := ctx.Value(ctxKey{}).(type) {
	case Info:
		return v, true
	case *Info:
		return *v, v != nil
	}
	return Info{}, false
}

// Middleware resolves every request once and stores the Info in its
// context, so logs, rate limits and cookies all agree on the client. With
// WithNotice, it also warns about forwarding headers it had to ignore.
func (res *Resolver) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), res.Request(r))))
	})
}

// Request is Middleware's work for one request, for a caller that builds
// the request's context itself (see InfoContextKey): the WithNotice check
// of r's forwarding headers, then Resolve.
func (res *Resolver) Request(r *http.Request) Info {
	if res != nil && res.notice != nil {
		res.notice.check(res, r)
	}
	return res.Resolve(r)
}

// Of returns the Info of r: the one Middleware stored, or else what the
// connection alone tells (no forwarding header is believed).
func Of(r *http.Request) Info {
	if info, ok := FromContext(r.Context()); ok {
		return info
	}
	var none Resolver
	return none.Resolve(r)
}

// Secure reports whether r came over https; the rule for the Secure cookie flag.
func Secure(r *http.Request) bool { return Of(r).HTTPS }
