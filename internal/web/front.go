package web

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/accesslog"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/ui"
)

// frontOptions are what the outermost layer of every request needs.
type frontOptions struct {
	log    *slog.Logger
	site   *site
	brand  ui.Brand
	res    *peer.Resolver
	access accesslog.Logger // nil: no access log
	obs    Observer         // nil: no metrics
}

// front is the outermost layer of every request, the work of four
// middlewares done in one place so that a request costs one allocation
// (frontState, which holds the writer, the log entry and the request's
// context itself) and one copy of the *http.Request, where the four made
// a context value, a copy of the request and a value of their own each:
//
//   - the brand (ui.WithBrand) for every page and refusal below;
//   - the admitted user: the witness carries it (auth.Witness.CarryUser),
//     so RequireAuth passes the request inward without a copy of its own;
//   - the client's address and scheme (peer), resolved once;
//   - what the request means for a decision (access.Read: method with
//     every override spelling, path, host, query), read once, so that
//     the rules, a token's scope and the catalog's hiding all see one
//     reading;
//   - the access log and the observer: route, status, bytes, duration,
//     client, admitted user (see below);
//   - panic recovery: a panic in any handler is logged with its stack
//     and answered 500 (the error page with the security headers); once
//     the response has begun a 500 can no longer be sent, so the
//     connection is cut instead (http.ErrAbortHandler) and the client
//     sees a broken transfer rather than a complete-looking one.
//
// The access-log entry holds method, path (never the query string, which
// can carry OAuth codes and states), status, bytes, duration, client and,
// when a protected route admitted someone, user. Headers and cookies are
// never logged. A request whose handler panicked is logged with the 500 it
// was answered (or the status already sent before the cut).
func front(o frontOptions, next http.Handler) http.Handler {
	var brand any = o.brand // boxed once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &frontState{start: time.Now()}
		st.sw.ResponseWriter = w
		defer func() {
			if v := recover(); v != nil {
				o.recovered(st, r, v)
			}
			st.served(o, r)
		}()
		st.info = o.res.Request(r)
		st.target = access.Read(r)
		st.wit.CarryUser()
		st.ctx = frontContext{Context: r.Context(), st: st, brand: brand}
		r = r.WithContext(&st.ctx)
		next.ServeHTTP(&st.sw, r)
	})
}

// frontState is what front keeps for one request, allocated once: the
// request's context lives in it too.
type frontState struct {
	start  time.Time
	info   peer.Info
	target access.Target
	slot   routeSlot
	sw     statusWriter
	wit    auth.Witness
	ctx    frontContext
	entry  accesslog.Entry
}

// frontContext is the request's context below front: one value that
// answers for the brand (ui), the client (peer), the route slot and the
// witness of the admitted user (auth, which also answers auth.FromContext),
// where five context.WithValue would make five.
type frontContext struct {
	context.Context
	st    *frontState
	brand any
}

// Value answers front's keys and asks the parent for the others.
func (c *frontContext) Value(key any) any {
	switch key {
	case routeKey{}:
		return &c.st.slot
	case peer.InfoContextKey:
		return &c.st.info
	case access.TargetContextKey:
		return &c.st.target
	case ui.BrandContextKey:
		return c.brand
	case auth.WitnessContextKey:
		return &c.st.wit
	}
	return c.Context.Value(key)
}

// recovered answers a request whose handler panicked with v, or cuts its
// connection when the answer had begun; http.ErrAbortHandler, the
// deliberate cut, passes on unlogged.
func (o frontOptions) recovered(st *frontState, r *http.Request, v any) {
	if v == http.ErrAbortHandler {
		st.served(o, r)
		panic(v)
	}
	o.log.ErrorContext(r.Context(), "web: handler panicked",
		"method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
	if st.sw.started() {
		st.served(o, r)
		panic(http.ErrAbortHandler)
	}
	h := st.sw.Header()
	clear(h)
	setSecurityHeaders(h)
	o.site.fail(&st.sw, r, refusal.Panicked)
}

// served reports the request to the observer and the access log, once.
func (st *frontState) served(o frontOptions, r *http.Request) {
	if st.sw.reported {
		return
	}
	st.sw.reported = true
	if o.access == nil && o.obs == nil {
		return
	}
	now := time.Now()
	d := now.Sub(st.start)
	status := st.sw.status
	if status == 0 {
		status = http.StatusOK
	}
	if o.obs != nil {
		o.obs.Served(st.slot.pattern, status, d)
	}
	if o.access == nil {
		return
	}
	e := &st.entry
	*e = accesslog.Entry{Time: now, Method: r.Method, Path: r.URL.Path, Status: status,
		Bytes: st.sw.bytes, Duration: d, ClientAddr: st.info.Addr}
	if !st.info.Addr.IsValid() {
		e.Client = st.info.String() // "unknown"
	}
	if u, ok := st.wit.Admitted(); ok {
		e.User, e.HasUser = u.Name, true
	}
	o.access.Log(r.Context(), e)
}
