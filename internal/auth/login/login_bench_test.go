package login_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
	"github.com/backupweb/backupweb/internal/testkit/logintest"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/web"
)

// The benchmarks call the program's handler directly, without a network,
// so that their ratio measures our code: compare BenchmarkProtectedWithSession
// with BenchmarkUnprotected (the cheapest route) and with
// BenchmarkProtectedTypeNone (the same route without authentication), whose
// difference is the cost of identifying a session.

// serveBench runs req through handler b.N times and expects want:
// in-process and sequential (one request at a time, no network), to
// weigh our own code; throughput is measured by the loopback benchmarks.
func serveBench(b *testing.B, handler http.Handler, req *http.Request, want int) {
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("status %d, want %d", rec.Code, want)
		}
	}
}

func BenchmarkProtectedWithSession(b *testing.B) { benchWithSession(b, "/api/backups") }

// BenchmarkProtectedMeWithSession is a protected route that does no file
// system work, so nearly all it adds to BenchmarkUnprotected is the
// session check.
func BenchmarkProtectedMeWithSession(b *testing.B) { benchWithSession(b, "/api/me") }

// benchWithSession serves GET path to alice, signed in.
func benchWithSession(b *testing.B, path string) {
	h := logintest.New(b, nil)
	br := h.Browser()
	br.MustLogin("alice")
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.AddCookie(&http.Cookie{Name: h.P.Manager().CookieName(), Value: br.SessionCookie()})
	serveBench(b, h.Handler, req, http.StatusOK)
}

func BenchmarkUnprotected(b *testing.B) {
	h := logintest.New(b, nil)
	serveBench(b, h.Handler, httptest.NewRequest(http.MethodGet, "/healthz", nil), http.StatusOK)
}

// BenchmarkProtectedTypeNone serves the same routes with type none: the
// difference from the WithSession benchmarks is what a session costs.
func BenchmarkProtectedTypeNone(b *testing.B) {
	h := logintest.New(b, nil)
	handler := web.NewHandler(web.Options{Provider: none.Provider{}, Catalog: catalog.New(h.Backups)})
	for name, path := range map[string]string{"backups": "/api/backups", "me": "/api/me"} {
		b.Run(name, func(b *testing.B) {
			serveBench(b, handler, httptest.NewRequest(http.MethodGet, path, nil), http.StatusOK)
		})
	}
}

func BenchmarkRejectedWithoutSession(b *testing.B) {
	h := logintest.New(b, nil)
	serveBench(b, h.Handler, httptest.NewRequest(http.MethodGet, "/api/backups", nil), http.StatusUnauthorized)
}

// The loopback benchmarks (see package benchtest) measure what a client
// sees. Compare BenchmarkLoopbackMeWithSession with
// BenchmarkLoopbackUnprotected.
func BenchmarkLoopbackUnprotected(b *testing.B) {
	h := logintest.New(b, nil)
	benchtest.Loopback(b, h.Handler, "/healthz", nil)
}

func BenchmarkLoopbackMeWithSession(b *testing.B) {
	h := logintest.New(b, nil)
	br := h.Browser()
	br.MustLogin("alice")
	cookie := &http.Cookie{Name: h.P.Manager().CookieName(), Value: br.SessionCookie()}
	benchtest.Loopback(b, h.Handler, "/api/me", func(r *http.Request) { r.AddCookie(cookie) })
}

// BenchmarkProtectedMeWithToken is BenchmarkProtectedMeWithSession with a
// machine token instead of a session cookie: the difference is what a
// token lookup costs against a session lookup (no bcrypt either way).
func BenchmarkProtectedMeWithToken(b *testing.B) {
	h := logintest.New(b, nil)
	req := httptest.NewRequest(http.MethodGet, "/api/me", nil)
	req.Header.Set("Authorization", "Bearer "+benchToken(b, h))
	serveBench(b, h.Handler, req, http.StatusOK)
}

// BenchmarkLoopbackMeWithToken is BenchmarkLoopbackMeWithSession with a
// machine token: token requests run at session speed.
func BenchmarkLoopbackMeWithToken(b *testing.B) {
	h := logintest.New(b, nil)
	value := "Bearer " + benchToken(b, h)
	benchtest.Loopback(b, h.Handler, "/api/me", func(r *http.Request) { r.Header.Set("Authorization", value) })
}

// benchToken makes a machine token for alice.
func benchToken(b *testing.B, h *logintest.Harness) string {
	secret, _, err := h.P.CreateToken("alice", "bench", 0, tokens.Scope{}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return secret
}
