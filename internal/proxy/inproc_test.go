package proxy_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/proxy"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/web"
)

// The in-process benchmarks call the handler directly, with an upstream
// that answers from memory: they magnify backupweb's own cost of a proxied
// request (compare BenchmarkProxyInProcessSession with ...None), which the
// loopback benchmarks measure among the network's.

// stubRT is an upstream that answers 200 "ok" from memory.
type stubRT struct{}

func (stubRT) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

// inproc is sequential and in-process (one request at a time, no
// network): our own code's cost per request, not a throughput.
func inproc(b *testing.B, p auth.Provider, cookie *http.Cookie) {
	u, _ := url.Parse("http://upstream.invalid")
	// As the program wires it: redirects rewritten, live requests
	// tracked for the types whose sign-in can end.
	o := proxy.Options{Upstream: u, UserHeader: "X-Forwarded-User", Transport: stubRT{}, RewriteRedirects: true}
	if rc, ok := p.(auth.Rechecker); ok {
		o.Rechecker = rc
	}
	h := web.NewHandler(web.Options{Provider: p, Catalog: catalog.New(b.TempDir()), Logger: slog.New(slog.DiscardHandler),
		Proxy: proxy.New(o)})
	req := httptest.NewRequest("GET", "/page", nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkProxyInProcessNone(b *testing.B) { inproc(b, none.Provider{}, nil) }

func BenchmarkProxyInProcessSession(b *testing.B) {
	dir := b.TempDir()
	hash := testkit.Hash(b, "pw")
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+hash+"\n"), 0o600)
	p, err := login.New(login.Config{UsersFile: users, UseBcrypt: true, PollInterval: -1}, auth.Deps{SecretKey: []byte(strings.Repeat("k", 32)), StateDir: dir, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	rec := httptest.NewRecorder()
	if _, err := p.Manager().Start(rec, httptest.NewRequest("GET", "/", nil), session.Data{Username: "alice", Cred: p.Manager().Fingerprint(hash)}); err != nil {
		b.Fatal(err)
	}
	inproc(b, p, rec.Result().Cookies()[0])
}
