// Package proxy is backupweb as the authenticating reverse proxy of a web
// interface it did not write ([proxy] upstream): a request that passed the
// configured type's RequireAuth goes to the upstream with its method, path
// (escaped as received), query, body and headers, minus what must not
// cross — the client's own identity headers, its Authorization (unless
// passed on purpose), backupweb's cookies, forwarding headers the client
// wrote — and plus the user's identity and the forwarding headers
// backupweb believes. The answer streams back as it arrives; WebSocket
// upgrades pass; connections to the upstream are kept alive and reused.
//
// What the application answers is its own: its caching headers pass as
// they are, and only a Location naming the upstream's address is turned
// into the client's (redirect.go). Who may pass is not decided here: the
// web layer puts RequireAuth and the access rules in front ([access],
// with [proxy] skip_auth_routes and allow_users folded in by package
// config), and a request that passes them without sign-in (an anonymous
// rule) reaches the upstream without identity. A request still being
// answered (a WebSocket, an event stream, a long poll) is closed once the
// sign-in that admitted it has ended (live.go).
//
// It is built on net/http/httputil.ReverseProxy's Rewrite hook. It does
// not use ProxyRequest.SetXForwarded, which appends to an X-Forwarded-For
// the client wrote: the forwarding headers are set from package peer's
// answer (the trusted-proxy rule) instead.
package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
)

// Options configure New.
type Options struct {
	// Upstream is the guarded interface. Required.
	Upstream *url.URL
	// UserHeader and EmailHeader carry the signed-in user's name and
	// e-mail to the upstream; "" sends none. Whatever the client sent in
	// them is always removed.
	UserHeader, EmailHeader string
	// GroupsHeader carries the signed-in user's groups to the upstream,
	// sorted and comma-separated ([proxy] groups_header); "" sends none,
	// and a user without groups gets none. Whatever the client sent in it
	// (and in X-Forwarded-Groups) is always removed.
	GroupsHeader string
	// PassAuthorization lets the client's Authorization header through.
	PassAuthorization bool
	// DialTimeout bounds connecting to the upstream; ResponseHeaderTimeout
	// the wait for its response headers. Zero: 5 s and 60 s.
	DialTimeout, ResponseHeaderTimeout time.Duration
	// Logger receives one error line per failed upstream request.
	Logger *slog.Logger
	// Errors writes the 502 and 504 answers (the program's is web's
	// styled page). Default: a zero refusal.Errors (plain text).
	Errors *refusal.Errors
	// Transport replaces the tuned default, for tests.
	Transport http.RoundTripper
	// PassHostHeader sends the client's Host to the upstream rather than
	// the upstream's own address ([proxy] pass_host_header).
	PassHostHeader bool
	// RewriteRedirects rewrites Location and Content-Location answers
	// that name the upstream's address to the client's scheme and host
	// ([proxy] rewrite_redirects; the program's default is true).
	RewriteRedirects bool
	// PublicURL, when set ([server] public_url), is the scheme and host
	// redirects are rewritten to, instead of the client's Host header and
	// scheme, which a client can choose.
	PublicURL *url.URL
	// Rechecker, when set (the provider, if it implements
	// auth.Rechecker), checks again the credential of every request still
	// being answered after RecheckInterval (default
	// DefaultRecheckInterval), and the requests whose sign-in has ended
	// (logout, expiry, user removed, password changed) are closed.
	Rechecker       auth.Rechecker
	RecheckInterval time.Duration
}

// Handler is the proxy: an http.Handler that sends what it is given to the
// upstream.
type Handler struct {
	o    Options
	rp   *httputil.ReverseProxy
	live *live
}

// New returns the proxy handler. It expects to run behind auth.RequireAuth
// and the access rules (the user is read from the context; type none, and
// a request an anonymous rule let through, send no identity), and behind
// peer's middleware.
func New(o Options) *Handler {
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.ResponseHeaderTimeout <= 0 {
		o.ResponseHeaderTimeout = 60 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Errors == nil {
		o.Errors = &refusal.Errors{Logger: o.Logger}
	}
	if o.Transport == nil {
		o.Transport = &http.Transport{
			Proxy:                 nil, // the upstream is reached directly
			DialContext:           (&net.Dialer{Timeout: o.DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			ResponseHeaderTimeout: o.ResponseHeaderTimeout,
			TLSHandshakeTimeout:   o.DialTimeout,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   128,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
			// The client's Accept-Encoding reaches the upstream as it
			// was sent: without this, a request that named none would
			// ask for gzip and have the answer inflated here.
			DisableCompression: true,
		}
	}
	reserved := reservedNames(o)
	cookies := &cookieGuard{log: o.Logger, upstream: o.Upstream.Redacted()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { rewrite(o, reserved, pr) },
		ModifyResponse: func(resp *http.Response) error {
			rewriteRedirects(o, resp)
			return cookies.strip(resp)
		},
		Transport: o.Transport,
		// Zero: ReverseProxy flushes at once every answer it recognises
		// as streaming (text/event-stream, or no Content-Length: long
		// polls, chunked downloads) and lets the others go out in full
		// writes, without a flush per write.
		FlushInterval: 0,
		ErrorLog:      errorLog(o.Logger),
		ErrorHandler:  func(w http.ResponseWriter, r *http.Request, err error) { failed(o.Logger, o.Errors, w, r, err) },
		BufferPool:    bufferPool{},
	}
	return &Handler{o: o, rp: rp, live: newLive(o.Rechecker, o.RecheckInterval, o.Logger)}
}

// ServeHTTP passes r to the upstream.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The application's caching headers are its own: RequireAuth's
	// no-store is for backupweb's pages, and an answer without caching
	// headers gets none from us either.
	w.Header().Del("Cache-Control")
	// Long polls, event streams, large uploads and downloads must not
	// be cut by the server's own read and write deadlines, which are
	// meant for backupweb's pages.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	r, tracked := h.live.track(w, r)
	if tracked == nil {
		h.rp.ServeHTTP(w, r)
		return
	}
	defer h.live.release(tracked)
	h.rp.ServeHTTP(&tracked.w, r)
	if tracked.cutOnWriter() && r.ProtoMajor == 1 && w.Header().Get("Connection") != "close" {
		// A cut request's HTTP/1 connection ends with it, whatever
		// was answered. The refusal of a request cut before its
		// answer began (failed) says Connection: close, and the
		// server closes the connection once it has gone out whole.
		panic(http.ErrAbortHandler)
	}
}

// copyBufferSize is the size of the proxy's copy buffers.
const copyBufferSize = 32 << 10

// buffers are the copy buffers of the proxy, reused across requests: a
// fresh 32 KiB buffer per request would be most of what a proxied request
// allocates. The pool holds array pointers, so that neither Get nor Put
// allocates.
var buffers = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

// bufferPool is httputil.BufferPool over buffers.
type bufferPool struct{}

func (bufferPool) Get() []byte { return buffers.Get().(*[copyBufferSize]byte)[:] }

// Put takes back a buffer Get gave; anything else is left to the
// collector.
func (bufferPool) Put(b []byte) {
	if len(b) == copyBufferSize && cap(b) == copyBufferSize {
		buffers.Put((*[copyBufferSize]byte)(b))
	}
}

// rewrite turns the inbound request into the upstream's. ReverseProxy has
// already removed hop-by-hop headers (those named in Connection included)
// and the inbound X-Forwarded-* headers from pr.Out; every other spelling
// of an identity or forwarding header goes here (see sanitize.go).
func rewrite(o Options, reserved []string, pr *httputil.ProxyRequest) {
	pr.SetURL(o.Upstream)
	out, in := pr.Out, pr.In
	setHost(o, out, in)
	h := out.Header
	dropForged(h, reserved)
	dropH2C(h)
	if !o.PassAuthorization {
		h.Del("Authorization")
	}
	stripOwnCookies(out)
	if u, ok := auth.FromContext(in.Context()); ok && u.Type != "none" {
		if o.UserHeader != "" && u.Name != "" {
			h.Set(o.UserHeader, u.Name)
		}
		if email := u.Attrs.Get("email"); o.EmailHeader != "" && email != "" {
			h.Set(o.EmailHeader, email)
		}
		if o.GroupsHeader != "" && len(u.Groups) > 0 {
			h.Set(o.GroupsHeader, joinSorted(u.Groups))
		}
	}
	info := peer.Of(in)
	if info.Addr.IsValid() {
		h.Set("X-Forwarded-For", info.Addr.String())
	}
	h.Set("X-Forwarded-Host", in.Host)
	if info.HTTPS {
		h.Set("X-Forwarded-Proto", "https")
	} else {
		h.Set("X-Forwarded-Proto", "http")
	}
}

// joinSorted returns groups sorted and comma-separated.
func joinSorted(groups []string) string {
	if !slices.IsSorted(groups) {
		groups = slices.Sorted(slices.Values(groups))
	}
	return strings.Join(groups, ",")
}

// stripOwnCookies removes backupweb's cookies from r's Cookie header and
// keeps the client's others, as written and in their order. A header
// without any of ours is left alone.
func stripOwnCookies(r *http.Request) {
	lines := r.Header.Values("Cookie")
	own := false
	for _, l := range lines {
		own = own || strings.Contains(l, "backupweb_")
	}
	if !own {
		return
	}
	// The kept cookies are written into one buffer as long as the
	// header: one allocation, where a slice of them and their join made
	// several.
	size := 0
	for _, l := range lines {
		size += len(l) + 2
	}
	var kept strings.Builder
	kept.Grow(size)
	for _, l := range lines {
		for part := range strings.SplitSeq(l, ";") {
			part = strings.TrimSpace(part)
			name, _, _ := strings.Cut(part, "=")
			if part != "" && !ownCookie(name) {
				if kept.Len() > 0 {
					kept.WriteString("; ")
				}
				kept.WriteString(part)
			}
		}
	}
	r.Header.Del("Cookie")
	if kept.Len() > 0 {
		r.Header["Cookie"] = []string{kept.String()}
	}
}

// failed answers a request the upstream could not serve: 504 when it did
// not answer in time, 502 otherwise, with the error page (or JSON) and one
// error line. A client that went away gets nothing.
func failed(log *slog.Logger, errs *refusal.Errors, w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(context.Cause(r.Context()), errEnded) {
		// Cut by the recheck before the upstream answered: an HTTP/1
		// connection ends after this answer (see Handler.ServeHTTP).
		// HTTP/2 ends the stream alone, the connection going on.
		if r.ProtoMajor == 1 {
			w.Header().Set("Connection", "close")
		}
		errs.Refuse(w, r, refusal.SignInEnded)
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return
	}
	answer := refusal.UpstreamUnreachable
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		answer = refusal.UpstreamTimeout
	}
	log.LogAttrs(r.Context(), slog.LevelError, "proxy: upstream request failed",
		slog.Int("status", answer.Status()), slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("err", err.Error()))
	errs.Refuse(w, r, answer)
}
