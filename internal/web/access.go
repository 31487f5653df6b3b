package web

import (
	"io"
	"net/http"
	"strings"
	"time"
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

// setRoute records the pattern the mux matched for r, if r carries a slot,
// as a route label (see routeLabel).
func setRoute(r *http.Request) {
	if s, ok := r.Context().Value(routeKey{}).(*routeSlot); ok {
		s.pattern = routeLabel(r.Pattern)
	}
}

// routeLabel is the label of a mux pattern: the pattern without the
// mux's end-of-path marker, so the catalog root reads "GET /" rather
// than "GET /{$}".
func routeLabel(pattern string) string {
	return strings.TrimSuffix(pattern, "{$}")
}

// setRouteLabel records label as r's route, if r carries a slot.
func setRouteLabel(r *http.Request, label string) {
	if s, ok := r.Context().Value(routeKey{}).(*routeSlot); ok {
		s.pattern = label
	}
}

// statusWriter notes the status and counts the bytes of a response, and
// whether it has begun. It keeps the abilities handlers rely on: ReadFrom
// (so downloads still use sendfile), Flush, and Unwrap (so
// http.ResponseController reaches the connection).
type statusWriter struct {
	http.ResponseWriter
	status   int
	bytes    int64
	flushed  bool // Flush was called: headers may have gone out
	reported bool // front has logged the request
	// routing, while the mux serves it, is the request the mux routes:
	// a 404 or 405 written while its Pattern is empty is the mux's own
	// (no route matched) and is held back in unrouted, its body
	// dropped, for the caller to answer with the styled refusal (see
	// serveRouted). A route's own 404 has a Pattern.
	routing  *http.Request
	unrouted int
}

// intercepts reports whether a status code is the mux's own refusal of a
// request no route matched, to hold back.
func (s *statusWriter) intercepts(code int) bool {
	return s.routing != nil && s.routing.Pattern == "" && s.status == 0 &&
		(code == http.StatusNotFound || code == http.StatusMethodNotAllowed)
}

// started reports whether the response has begun: after that, no other
// status can be sent.
func (s *statusWriter) started() bool { return s.status != 0 || s.flushed }

func (s *statusWriter) WriteHeader(code int) {
	if s.unrouted != 0 {
		return
	}
	if s.intercepts(code) {
		s.unrouted = code
		return
	}
	if s.status == 0 && code >= 200 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if s.unrouted != 0 {
		return len(p), nil
	}
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) ReadFrom(src io.Reader) (int64, error) {
	if s.unrouted != 0 {
		return io.Copy(io.Discard, src)
	}
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

func (s *statusWriter) Flush() {
	s.flushed = true
	http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
