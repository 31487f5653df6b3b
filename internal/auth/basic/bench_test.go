package basic

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
	"github.com/backupweb/backupweb/internal/web"
)

// The benchmarks serve requests through the whole handler (routing,
// security headers, peer resolution, RequireAuth) with a cost-12 hash, the
// recommended work factor (password.Cost, 12). Compare:
//
//	BenchmarkUnprotected         GET /healthz, no authentication at all
//	BenchmarkProtectedNone       GET /api/me with type none: the route's own cost
//	BenchmarkProtectedBasic      GET /api/me with a correct Basic credential (cached)
//	BenchmarkProtectedBasicNoCache  the same with the cache disabled: bcrypt every time
//
// go test -run '^$' -bench . ./auth/basic
func benchHandler(b *testing.B, p auth.Provider) http.Handler {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar"), []byte("x"), 0o600)
	return web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(dir)})
}

func benchProvider(b *testing.B, cache bool) *Provider {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "internal", "password", "testdata", "python-2b.txt"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{Username: "api", Password: strings.TrimSpace(string(raw)), UseBcrypt: true}, auth.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	if !cache {
		p.verifier = password.NewVerifier(password.VerifierOptions{CacheSize: -1})
	}
	return p
}

// runBench is sequential and in-process (one request at a time, no
// network): our own code's cost per request. The Loopback benchmarks
// measure throughput from parallel clients.
func runBench(b *testing.B, h http.Handler, path string, mod func(*http.Request)) {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = "192.0.2.1:5000"
	if mod != nil {
		mod(req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d", rec.Code)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}

func BenchmarkUnprotected(b *testing.B) {
	runBench(b, benchHandler(b, none.Provider{}), "/healthz", nil)
}

func BenchmarkProtectedNone(b *testing.B) {
	runBench(b, benchHandler(b, none.Provider{}), "/api/me", nil)
}

func BenchmarkProtectedBasic(b *testing.B) {
	runBench(b, benchHandler(b, benchProvider(b, true)), "/api/me", func(r *http.Request) { r.SetBasicAuth("api", "s3cret-Backup!") })
}

func BenchmarkProtectedBasicNoCache(b *testing.B) {
	runBench(b, benchHandler(b, benchProvider(b, false)), "/api/me", func(r *http.Request) { r.SetBasicAuth("api", "s3cret-Backup!") })
}

// The loopback benchmarks (see package benchtest) measure what a client
// sees:
//
//	BenchmarkLoopbackUnprotected     GET /healthz
//	BenchmarkLoopbackProtectedBasic  GET /api/me with a correct Basic credential
func BenchmarkLoopbackUnprotected(b *testing.B) {
	benchtest.Loopback(b, benchHandler(b, none.Provider{}), "/healthz", nil)
}

func BenchmarkLoopbackProtectedBasic(b *testing.B) {
	benchtest.Loopback(b, benchHandler(b, benchProvider(b, true)), "/api/me", func(r *http.Request) { r.SetBasicAuth("api", "s3cret-Backup!") })
}

// BenchmarkLoopbackProtectedBasicMetrics is BenchmarkLoopbackProtectedBasic
// with every request recorded in the metrics: what recording costs.
func BenchmarkLoopbackProtectedBasicMetrics(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar"), []byte("x"), 0o600)
	h := web.NewHandler(web.Options{Provider: benchProvider(b, true), Catalog: catalog.New(dir),
		Observer: metrics.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	benchtest.Loopback(b, h, "/api/me", func(r *http.Request) { r.SetBasicAuth("api", "s3cret-Backup!") })
}

// BenchmarkLoopbackRightPassword32 is 32 parallel clients over loopback
// sending the right Basic password to a fresh provider (cost-12 hash,
// max_failures 10), the way a dashboard or a browser loading a page's
// assets does: it reports the throughput and, as "refused/op", the share
// of answers that were not 200, which must be zero.
//
// go test -run '^$' -bench LoopbackRightPassword32 -benchtime 10s ./auth/basic
func BenchmarkLoopbackRightPassword32(b *testing.B) {
	srv := httptest.NewServer(benchHandler(b, benchProvider(b, true)))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32, MaxConnsPerHost: 32}}
	defer client.CloseIdleConnections()
	var refused atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", srv.URL+"/api/me", nil)
			req.SetBasicAuth("api", "s3cret-Backup!")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				refused.Add(1)
			}
		}
	})
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
}
