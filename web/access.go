package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/peer"
)

// Observer is told about every request once it has been answered: the
// route pattern that served it ("GET /api/backups"; "" when no route
// matched), the status and the time it took. Before the request is served,
// Attach may add hooks of its own to the request's context (auth.Events,
// password.Observer, session.Observer). Metrics implement it; it must be
// cheap and safe for concurrent use.
type Observer interface {
	Attach(ctx context.Context) context.Context
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

// observe wraps next with the access log (one info line "request" per
// request, when log is not nil) and the observer (when not nil). The line
// holds method, path (never the query string, which can carry OAuth codes
// and states), status, bytes, duration, client and, when a protected route
// admitted someone, user. Headers and cookies are never logged.
func observe(log *slog.Logger, obs Observer, next http.Handler) http.Handler {
	if log == nil && obs == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		slot := &routeSlot{}
		ctx, admitted := auth.WithWitness(context.WithValue(r.Context(), routeKey{}, slot))
		if obs != nil {
			ctx = obs.Attach(ctx)
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			d := time.Since(start)
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			if obs != nil {
				obs.Served(slot.pattern, status, d)
			}
			if log == nil {
				return
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Int64("bytes", sw.bytes),
				slog.Duration("duration", d),
				slog.String("client", peer.Of(r).String()),
			}
			if u, ok := admitted(); ok {
				attrs = append(attrs, slog.String("user", u.Name))
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
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
