package peer

import (
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Bounds of the untrusted-proxy notice: each peer is named once, at most
// one line is written per noticeInterval, and at most noticePeers peers are
// remembered (a host sending forged headers from many addresses cannot
// grow the set without bound, nor the log).
const (
	noticeInterval = time.Minute
	noticePeers    = 256
)

// notice remembers which untrusted peers were already reported.
type notice struct {
	log  *slog.Logger
	now  func() time.Time
	mu   sync.Mutex
	seen map[netip.Addr]bool
	last time.Time
}

// WithNotice returns a copy of res that logs one warning when a peer outside
// the trusted proxies sends X-Forwarded-For, X-Real-IP or X-Forwarded-Proto:
// most often a reverse proxy that nobody listed in [server] trusted_proxies,
// so that every client looks like the proxy and cookies lose their Secure
// flag. Each peer is reported once, and at most one line a minute is
// written. now is the clock (nil: time.Now).
func (res *Resolver) WithNotice(log *slog.Logger, now func() time.Time) *Resolver {
	if now == nil {
		now = time.Now
	}
	c := &Resolver{notice: &notice{log: log, now: now, seen: map[netip.Addr]bool{}}}
	if res != nil {
		c.trusted = res.trusted
	}
	return c
}

func (n *notice) check(res *Resolver, r *http.Request) {
	h := r.Header
	// The canonical spellings, read from the map: Header.Get("X-Real-IP")
	// would allocate the canonical key at every request.
	if first(h["X-Forwarded-For"]) == "" && first(h["X-Forwarded-Proto"]) == "" && first(h["X-Real-Ip"]) == "" {
		return
	}
	addr := remoteAddr(r.RemoteAddr)
	if !addr.IsValid() || res.Trusted(addr) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	if n.seen[addr] || len(n.seen) >= noticePeers || now.Sub(n.last) < noticeInterval && !n.last.IsZero() {
		return
	}
	n.seen[addr], n.last = true, now
	n.log.LogAttrs(r.Context(), slog.LevelWarn,
		"requests carry forwarding headers (X-Forwarded-For, X-Forwarded-Proto) from a peer that is not a trusted proxy; they are ignored. If a reverse proxy runs there, add its address to [server] trusted_proxies",
		slog.String("peer", addr.String()))
}

// first is Header.Get on the values of one canonical name.
func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
