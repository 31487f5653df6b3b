package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/accesslog"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// TestAccessLogOfPanics: a request whose handler panicked is logged once,
// with the 500 it was answered, or, when the answer had begun, with the
// status already sent; the panic itself is logged as an error.
func TestAccessLogOfPanics(t *testing.T) {
	var logs logtest.Buffer
	p := mountingProvider{&fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "fake"}}}
	p.mount = func(mux *http.ServeMux) {
		mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("kaboom") })
		mux.HandleFunc("GET /boom-late", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte("partial"))
			panic("kaboom late")
		})
		mux.HandleFunc("GET /abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	}
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(t.TempDir()), Logger: log, AccessLog: true})
	srv := httptest.NewServer(h)
	defer srv.Close()
	srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	for _, path := range []string{"/boom", "/boom-late", "/abort"} {
		if resp, err := http.Get(srv.URL + path); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	tests := []struct{ path, status string }{
		{"/boom", "status=500"},
		{"/boom-late", "status=202"},
		{"/abort", "status=200"},
	}
	out := logs.String()
	for _, tt := range tests {
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "msg=request") && strings.Contains(l, "path="+tt.path+" ") {
				lines = append(lines, l)
			}
		}
		// The client may retry a GET whose connection was cut: one line
		// per request it made, each with the status.
		if len(lines) == 0 {
			t.Errorf("%s: no access line", tt.path)
		}
		for _, l := range lines {
			if !strings.Contains(l, tt.status) {
				t.Errorf("%s: want %s, got %q", tt.path, tt.status, l)
			}
		}
	}
	if !strings.Contains(out, `msg="web: handler panicked" method=GET path=/boom `) {
		t.Errorf("the panic is not logged:\n%s", out)
	}
	if strings.Contains(out, `msg="web: handler panicked" method=GET path=/abort`) {
		t.Errorf("the deliberate abort is logged as a panic:\n%s", out)
	}
}

// TestFrontAllocations counts what a request of type none to /api/backups
// allocates in backupweb's own code, the access log on: front's state (its
// context, writer and witness inside) and front's copy of the request.
// Nothing else: RequireAuth leaves the user in the witness (no context
// value, no copy of the request), the watched catalog reuses its listing
// without a stat, and the security headers, the ETag, Cache-Control and
// the access line cost no allocation. A change that adds work to every
// request shows here.
func TestFrontAllocations(t *testing.T) {
	if benchtest.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	dir := fixture(t)
	p := &fakeProvider{admit: true, user: auth.User{Name: "alice", Type: "fake"}}
	h := NewHandler(Options{Provider: p, Catalog: catalog.New(dir), Logger: slog.New(slog.DiscardHandler),
		AccessLog: true, AccessLogger: accesslog.NewWriter(io.Discard, accesslog.Text)})
	req := httptest.NewRequest("GET", "/api/backups", nil)
	w := &discardWriter{h: http.Header{}}
	serve := func() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
	serve()
	if w.code != 0 && w.code != http.StatusOK {
		t.Fatalf("status %d", w.code)
	}
	const limit = 2
	if n := testing.AllocsPerRun(200, serve); n > limit {
		t.Errorf("%v allocations per request, want at most %d", n, limit)
	}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
