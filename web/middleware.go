package web

import (
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/backupweb/backupweb/auth"
)

// contentSecurityPolicy is sent with every response. The pages use no
// scripts, no inline styles and nothing from other sites, so the policy
// allows only our own stylesheet and images, forms posting to ourselves, no
// framing and no <base>.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SecurityHeaders is the middleware that sets the headers every response
// of the program carries, whatever writes it; a host application that
// mounts a session type's pages wraps them with it too: the Content-Security-Policy, X-Content-Type-Options: nosniff,
// Referrer-Policy: no-referrer (download links hold backup names) and
// X-Frame-Options: DENY for browsers without frame-ancestors. It does not
// set Strict-Transport-Security: the service speaks plain HTTP behind a TLS
// proxy, which is where HSTS belongs.
func SecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// CrossOrigin is the middleware that refuses, through errs (403, the
// error page or JSON), a state-changing request (any method but GET, HEAD,
// OPTIONS) that a browser marks as coming from another site
// (Sec-Fetch-Site, or an Origin that does not match Host): Go's
// http.CrossOriginProtection. Requests without those headers, from scripts
// and curl, pass. It stands beside the CSRF tokens of every form.
func CrossOrigin(errs *auth.Errors) func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs.Refuse(w, r, auth.CrossOrigin)
	}))
	return cop.Handler
}

// recoverer turns a panic in any handler into a logged error and a 500
// page, so one bad request never takes the service down. When the response
// had already begun, a 500 can no longer be sent: the connection is cut
// instead (http.ErrAbortHandler), so the client sees a broken transfer
// rather than a complete-looking one.
func recoverer(log *slog.Logger, s *site, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.ErrorContext(r.Context(), "web: handler panicked",
				"method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if tw.started {
				panic(http.ErrAbortHandler)
			}
			h := w.Header()
			clear(h)
			setSecurityHeaders(h)
			s.fail(w, r, auth.Panicked)
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackingWriter notes whether the response has begun. It keeps the
// abilities handlers rely on: ReadFrom (so downloads still use sendfile)
// and Unwrap (so http.ResponseController reaches the connection).
type trackingWriter struct {
	http.ResponseWriter
	started bool
}

func (t *trackingWriter) WriteHeader(code int) {
	if code >= 200 {
		t.started = true
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	t.started = true
	return t.ResponseWriter.Write(p)
}

func (t *trackingWriter) ReadFrom(src io.Reader) (int64, error) {
	t.started = true
	if rf, ok := t.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{t.ResponseWriter}, src)
}

// Flush serves handlers that still assert http.Flusher rather than use
// http.ResponseController.
func (t *trackingWriter) Flush() {
	t.started = true
	http.NewResponseController(t.ResponseWriter).Flush()
}

func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// writerOnly hides every method but Write, so io.Copy does not call back
// into a ReadFrom that delegates to it.
type writerOnly struct{ io.Writer }
