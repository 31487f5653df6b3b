package peer

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	res := NewResolver([]netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("192.0.2.7/32"),
	})
	tests := []struct {
		name      string
		remote    string
		tls       bool
		headers   map[string][]string
		wantAddr  string
		wantHTTPS bool
	}{
		{"no headers", "203.0.113.9:4000", false, nil, "203.0.113.9", false},
		{"direct tls", "203.0.113.9:4000", true, nil, "203.0.113.9", true},
		{"untrusted peer headers ignored", "203.0.113.9:4000", false, map[string][]string{
			"X-Forwarded-For": {"198.51.100.1"}, "X-Real-IP": {"198.51.100.2"}, "X-Forwarded-Proto": {"https"},
		}, "203.0.113.9", false},
		{"trusted peer xff", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-For": {"198.51.100.1"}, "X-Forwarded-Proto": {"https"},
		}, "198.51.100.1", true},
		{"forged left entries ignored", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-For": {"1.1.1.1, 198.51.100.1"},
		}, "198.51.100.1", false},
		{"chain of trusted proxies skipped", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-For": {"6.6.6.6, 198.51.100.1, 192.0.2.7", "10.9.9.9"},
		}, "198.51.100.1", false},
		{"all entries trusted: left-most", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-For": {"10.0.0.5, 10.0.0.6"},
		}, "10.0.0.5", false},
		{"garbage entry: peer address", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-For": {"198.51.100.1, not-an-ip"},
		}, "10.1.2.3", false},
		{"xff entry with port", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-For": {"198.51.100.1:5555"},
		}, "198.51.100.1", false},
		{"x-real-ip from trusted peer", "[::1]:80", false, map[string][]string{
			"X-Real-IP": {"2001:db8::1"},
		}, "2001:db8::1", false},
		{"xff wins over x-real-ip", "[::1]:80", false, map[string][]string{
			"X-Real-IP": {"2001:db8::1"}, "X-Forwarded-For": {"2001:db8::2"},
		}, "2001:db8::2", false},
		{"proto http from trusted peer over tls", "10.1.2.3:80", true, map[string][]string{
			"X-Forwarded-Proto": {"http"},
		}, "10.1.2.3", false},
		{"proto right-most value", "10.1.2.3:80", false, map[string][]string{
			"X-Forwarded-Proto": {"http, https"},
		}, "10.1.2.3", true},
		{"ipv4-mapped peer is trusted", "[::ffff:10.1.2.3]:80", false, map[string][]string{
			"X-Forwarded-For": {"198.51.100.1"},
		}, "198.51.100.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, vs := range tt.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			got := res.Resolve(r)
			if got.Addr.String() != tt.wantAddr || got.HTTPS != tt.wantHTTPS {
				t.Errorf("Resolve = %v https=%v, want %s https=%v", got.Addr, got.HTTPS, tt.wantAddr, tt.wantHTTPS)
			}
		})
	}
}

func TestMiddlewareAndOf(t *testing.T) {
	res := NewResolver([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	var got Info
	h := res.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = Of(r) }))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1234"
	r.Header.Set("X-Forwarded-For", "198.51.100.4")
	r.Header.Set("X-Forwarded-Proto", "https")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.String() != "198.51.100.4" || !got.HTTPS {
		t.Fatalf("Of inside middleware = %+v", got)
	}
	// Without the middleware nothing forwarded is believed.
	if o := Of(r); o.String() != "127.0.0.1" || o.HTTPS || Secure(r) {
		t.Fatalf("Of without middleware = %+v", o)
	}
	if (Info{}).String() != "unknown" {
		t.Fatal("zero Info must print as unknown")
	}
}

func TestUntrustedProxyNotice(t *testing.T) {
	var logs strings.Builder
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := NewResolver([]netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}).
		WithNotice(slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	h := res.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	send := func(remote string, forwarded bool) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote + ":1234"
		if forwarded {
			r.Header.Set("X-Forwarded-For", "203.0.113.7")
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	send("10.0.0.1", true)   // trusted: nothing to say
	send("127.0.0.1", false) // no forwarding headers
	if logs.Len() != 0 {
		t.Fatalf("unexpected notice:\n%s", logs.String())
	}
	for range 100 {
		send("127.0.0.1", true)
	}
	if n := strings.Count(logs.String(), "trusted_proxies"); n != 1 {
		t.Fatalf("want one warning for the peer, got %d:\n%s", n, logs.String())
	}
	send("127.0.0.2", true) // another peer, within the minute: held back
	now = now.Add(2 * time.Minute)
	send("127.0.0.2", true)
	if n := strings.Count(logs.String(), "peer=127.0.0.2"); n != 1 {
		t.Fatalf("want the second peer named once, after the interval:\n%s", logs.String())
	}
}
