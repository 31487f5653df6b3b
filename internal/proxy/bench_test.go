package proxy_test

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/testkit/benchtest"
)

// Loopback benchmarks of the built-in proxy (see package benchtest), each
// against a small, fixed upstream answer (/small: the upstream's work does
// not depend on the headers it is sent): compare a valid session or a right Basic
// password with type none through the same proxy, and with the upstream
// reached directly; and /auth/request with a valid session with /healthz.

func BenchmarkProxyUpstreamDirect(b *testing.B) {
	up := startUpstream(b)
	benchtest.URL(b, up.Client(), up.URL, "/small", nil)
}

func BenchmarkProxyNone(b *testing.B) {
	up := startUpstream(b)
	g := guard(b, up.URL, func(string, *slog.Logger) auth.Provider { return none.Provider{} })
	benchtest.URL(b, plainClient(), g.url, "/small", nil)
}

func BenchmarkProxyBasic(b *testing.B) {
	s := setups(b, startUpstream(b))["basic"]()
	benchtest.URL(b, plainClient(), s.g.url, "/small", s.mod)
}

func BenchmarkProxySession(b *testing.B) {
	s := setups(b, startUpstream(b))["flask-login"]()
	benchtest.URL(b, plainClient(), s.g.url, "/small", sessionCookie(b, s))
}

func BenchmarkAuthRequestSession(b *testing.B) {
	s := setups(b, startUpstream(b))["flask-login"]()
	benchtest.URL(b, plainClient(), s.g.url, "/auth/request", sessionCookie(b, s))
}

// plainClient is a client without a cookie jar: the session cookie is
// added by hand, so the cases differ only in what the server does.
func plainClient() *http.Client { return &http.Client{} }

// sessionCookie returns a request modifier adding s's session cookie.
func sessionCookie(b testing.TB, s signedIn) func(*http.Request) {
	u, _ := url.Parse(s.g.url)
	cookies := s.client.Jar.Cookies(u)
	if len(cookies) == 0 {
		b.Fatal("no session cookie")
	}
	var parts []string
	for _, c := range cookies {
		parts = append(parts, c.Name+"="+c.Value)
	}
	header := strings.Join(parts, "; ")
	return func(r *http.Request) { r.Header.Set("Cookie", header) }
}

func BenchmarkHealthz(b *testing.B) {
	s := setups(b, startUpstream(b))["flask-login"]()
	benchtest.URL(b, plainClient(), s.g.url, "/healthz", nil)
}
