package proxy

import (
	"bufio"
	"context"
	"errors"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/backupweb/backupweb/internal/auth"
)

// DefaultRecheckInterval is how often the requests still being answered
// (WebSockets, event streams, long polls, downloads) have their credential
// checked again: a logout, an expiry or a removed user closes them within
// about two intervals.
const DefaultRecheckInterval = 250 * time.Millisecond

// recheckTimeout bounds one check (one session lookup).
const recheckTimeout = 2 * time.Second

// maxParallelChecks bounds the checks of one sweep that run at once.
const maxParallelChecks = 16

// errorLog is the ReverseProxy's logger: its messages (a body copy that
// failed midway) go to log at warning level, except those about requests
// the recheck cut on purpose, which recheck has logged already.
func errorLog(log *slog.Logger) *stdlog.Logger {
	return stdlog.New(errorLogWriter{log}, "", 0)
}

type errorLogWriter struct{ log *slog.Logger }

func (w errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if !strings.Contains(msg, errEnded.Error()) {
		w.log.Warn("proxy: " + strings.TrimPrefix(msg, "httputil: "))
	}
	return len(p), nil
}

// errEnded is the cause of a request cut because its sign-in ended.
var errEnded = errors.New("proxy: the sign-in that admitted the request has ended")

// RecheckNow checks at once the sign-in of every request still being
// answered, rather than at the next interval. The web layer calls it after
// a sign-out on this instance, so that the connections of the session
// just ended close at once.
func (h *Handler) RecheckNow() { h.live.now() }

// live keeps the proxied requests still being answered, each with the
// check of the credential that admitted it, and checks again those that
// have lasted at least one interval: a request whose credential no longer
// admits its user is cut both ways (liveReq.cut): towards the application
// and towards the browser, whether it waits for the upstream's answer,
// streams an upload or a download, or holds an upgraded connection. Short requests come and
// go without ever being checked. A sweeper goroutine runs while there is
// something to check, and ends with the last request.
type live struct {
	rc       auth.Rechecker
	interval time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	held    map[*liveReq]struct{}
	running bool
	wake    chan struct{} // a sweep of every request at once, see now
}

// liveReq is one request in flight. Its check is made at its first
// recheck, so that the requests that end before (nearly all) cost nothing
// but their registration.
type liveReq struct {
	req    *http.Request
	u      auth.User
	check  func(context.Context) (bool, error) // nil until the first recheck
	cancel context.CancelCauseFunc
	since  time.Time
	// w is what the request is answered through: the server's writer,
	// with its hijacked connection kept for cut.
	w liveWriter

	mu       sync.Mutex // guards the fields below
	answered bool       // release has run: the server's writer is no longer ours
	ended    bool       // cut has run
	hijacked net.Conn   // the upgraded connection, once hijacked
}

// cutGrace is how long a cut request may still write: long enough for the
// refusal (401) of a request cut before its answer began to go out, and
// short enough that a client that stopped reading is cut well within the
// contract's second.
const cutGrace = 100 * time.Millisecond

// cut ends h's request both ways, in whatever state it is (see the
// contract: within one second, mid-upload and mid-download included): its
// context is cancelled (the upstream request ends, towards the
// application), and towards the browser a body read (an upload that
// stalls) ends at once, a write (a download the client does not read)
// within cutGrace, and an upgraded connection (a WebSocket) is closed. The
// handler then ends the connection itself (Handler.ServeHTTP).
func (h *liveReq) cut() {
	h.cancel(errEnded)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.answered || h.ended {
		return
	}
	h.ended = true
	if h.hijacked != nil {
		h.hijacked.Close()
		return
	}
	// Deadlines rather than closing the connection: with HTTP/2 they
	// are the stream's, and the browser's other streams go on.
	rc := http.NewResponseController(h.w.ResponseWriter)
	now := time.Now()
	rc.SetReadDeadline(now)
	rc.SetWriteDeadline(now.Add(cutGrace))
}

// cutOnWriter reports whether cut has run on h while its connection was
// still the server's (not hijacked).
func (h *liveReq) cutOnWriter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ended && h.hijacked == nil
}

// liveWriter is the server's writer of a tracked request, through which
// ReverseProxy hijacks a switched connection (a WebSocket): it keeps the
// connection, so that cut can close it even while a copy is blocked
// writing to a client that does not read. Flush and the deadlines reach
// the server's writer through Unwrap.
type liveWriter struct {
	http.ResponseWriter
	h *liveReq
}

// Unwrap returns the server's writer, for http.ResponseController.
func (w *liveWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hijacks the server's connection, unless the request has been
// cut: then it is refused and the writer stays usable for the refusal.
func (w *liveWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	if w.h.ended {
		return nil, nil, errEnded
	}
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.h.hijacked = conn
	}
	return conn, rw, err
}

// newLive returns the registry over rc; nil rc: nothing is tracked.
func newLive(rc auth.Rechecker, interval time.Duration, log *slog.Logger) *live {
	if rc == nil {
		return nil
	}
	if interval <= 0 {
		interval = DefaultRecheckInterval
	}
	return &live{rc: rc, interval: interval, log: log, held: map[*liveReq]struct{}{}, wake: make(chan struct{}, 1)}
}

// track registers r, answered through w and admitted as the user in its
// context, and returns the request to serve (with a context the registry
// may cancel) and its entry, whose writer (&entry.w) the request is to be
// answered through, to hand to release when it has been answered.
// Requests without a user (skip_auth_routes) or of type none are returned
// as they are, with a nil entry; one whose credential cannot end (Recheck
// gives no check) is dropped at its first recheck.
func (l *live) track(w http.ResponseWriter, r *http.Request) (*http.Request, *liveReq) {
	if l == nil {
		return r, nil
	}
	u, ok := auth.FromContext(r.Context())
	if !ok || u.Type == "none" {
		return r, nil
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	h := &liveReq{req: r, u: u, cancel: cancel, since: time.Now()}
	h.w = liveWriter{ResponseWriter: w, h: h}
	l.mu.Lock()
	l.held[h] = struct{}{}
	if !l.running {
		l.running = true
		go l.sweep()
	}
	l.mu.Unlock()
	return r.WithContext(ctx), h
}

// release forgets h, whose request has been answered, and cancels its
// context. A nil h (a request track did not register) is left alone. A
// method rather than a closure track would return: one allocation less
// per request.
func (l *live) release(h *liveReq) {
	if h == nil {
		return
	}
	l.mu.Lock()
	delete(l.held, h)
	l.mu.Unlock()
	h.mu.Lock()
	h.answered = true
	h.mu.Unlock()
	h.cancel(nil)
}

// now asks the sweeper, if one runs, to check every request at once,
// without waiting for the next interval: after a sign-out on this
// instance, its connections close at once rather than within an interval.
func (l *live) now() {
	if l == nil {
		return
	}
	select {
	case l.wake <- struct{}{}:
	default: // a sweep is asked for already
	}
}

// sweep checks, every interval, the requests that have lasted at least
// one interval (every request, when woken by now), until none is left.
func (l *live) sweep() {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		all := false
		select {
		case <-t.C:
		case <-l.wake:
			all = true
		}
		l.mu.Lock()
		if len(l.held) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		now := time.Now()
		due := make([]*liveReq, 0, len(l.held))
		for h := range l.held {
			if all || now.Sub(h.since) >= l.interval {
				due = append(due, h)
			}
		}
		l.mu.Unlock()
		var g errgroup.Group
		g.SetLimit(maxParallelChecks)
		for _, h := range due {
			g.Go(func() error { l.recheck(h); return nil })
		}
		g.Wait()
	}
}

// recheck checks h's credential and cuts h when it no longer admits its
// user, or when the check cannot tell (fail closed).
func (l *live) recheck(h *liveReq) {
	if h.check == nil {
		// Only this sweep's goroutine touches h.check.
		if h.check = l.rc.Recheck(h.req, h.u); h.check == nil {
			// Nothing that could end: never checked again.
			l.mu.Lock()
			delete(l.held, h)
			l.mu.Unlock()
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), recheckTimeout)
	ok, err := h.check(ctx)
	cancel()
	if ok && err == nil {
		return
	}
	attrs := []slog.Attr{slog.String("auth_type", h.u.Type), slog.String("user", h.u.Name),
		slog.String("method", h.req.Method), slog.String("path", h.req.URL.Path)}
	if err != nil {
		l.log.LogAttrs(context.Background(), slog.LevelWarn, "proxy: closed a live connection: its sign-in could not be checked", append(attrs, slog.String("err", err.Error()))...)
	} else {
		l.log.LogAttrs(context.Background(), slog.LevelInfo, "proxy: closed a live connection: its sign-in has ended", attrs...)
	}
	l.mu.Lock()
	delete(l.held, h)
	l.mu.Unlock()
	h.cut()
}
