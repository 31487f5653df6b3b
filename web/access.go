package web

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/backupweb/backupweb/accesslog"
	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/peer"
)

// Observer is told about every request once it has been answered: the
// route pattern that served it ("GET /api/backups"; "" when no route
// matched), the status and the time it took. Metrics implement it (and
// observe the providers through auth.Deps.Hooks); it must be cheap and
// safe for concurrent use.
type Observer interface {
	Served(route string, status int, d time.Duration)
}

// routeSlot carries the matched route pattern out of the mux to the
// middleware around it (which sees another *http.Request).
type routeSlot struct{ pattern string }

type routeKey struct{}

// setRoute records the pattern the mux matched for r, if r carries a slot.
func setRoute(r *http.Request) {
	if s, ok := r.Context().Value(routeKey{}).(*routeSlot); ok {
		s.pattern = r.Pattern
	}
}

// setRouteLabel records label as r's route, if r carries a slot.
func setRouteLabel(r *http.Request, label string) {
	if s, ok := r.Context().Value(routeKey{}).(*routeSlot); ok {
		s.pattern = label
	}
}

// observe wraps next with the access log (one entry per request, when log
// is not nil) and the observer (when not nil). The entry holds method, path
// (never the query string, which can carry OAuth codes and states),
// status, bytes, duration, client and, when a protected route admitted
// someone, user. Headers and cookies are never logged.
//
// The per-request state (the route slot, the status writer, the entry)
// lives in one value, allocated once.
func observe(log accesslog.Logger, obs Observer, next http.Handler) http.Handler {
	if log == nil && obs == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &observed{start: time.Now()}
		st.sw.ResponseWriter = w
		ctx, admitted := auth.WithWitness(context.WithValue(r.Context(), routeKey{}, &st.slot))
		defer func() {
			now := time.Now()
			d := now.Sub(st.start)
			status := st.sw.status
			if status == 0 {
				status = http.StatusOK
			}
			if obs != nil {
				obs.Served(st.slot.pattern, status, d)
			}
			if log == nil {
				return
			}
			e := &st.entry
			*e = accesslog.Entry{Time: now, Method: r.Method, Path: r.URL.Path, Status: status,
				Bytes: st.sw.bytes, Duration: d, Client: peer.Of(r).String()}
			if u, ok := admitted(); ok {
				e.User, e.HasUser = u.Name, true
			}
			log.Log(r.Context(), e)
		}()
		next.ServeHTTP(&st.sw, r.WithContext(ctx))
	})
}

// observed is what observe keeps for one request.
type observed struct {
	start time.Time
	slot  routeSlot
	sw    statusWriter
	entry accesslog.Entry
}

// statusWriter notes the status and counts the bytes of a response. Like
// trackingWriter it keeps ReadFrom (sendfile for downloads), Flush and
// Unwrap.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 && code >= 200 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) ReadFrom(src io.Reader) (int64, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := s.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(writerOnly{s.ResponseWriter}, src)
	}
	s.bytes += n
	return n, err
}

func (s *statusWriter) Flush() { http.NewResponseController(s.ResponseWriter).Flush() }

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
