package web

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestRedirectHTTPS(t *testing.T) {
	origin := &url.URL{Scheme: "https", Host: "backups.example.lan:8443"}
	tests := []struct {
		name     string
		origin   *url.URL
		port     string
		host     string
		target   string
		code     int
		location string
	}{
		{"public_url", origin, "8443", "evil.example", "/a/b?c=d", 308, "https://backups.example.lan:8443/a/b?c=d"},
		{"request host, port kept", nil, "8443", "nas.lan:80", "/x", 308, "https://nas.lan:8443/x"},
		{"request host on 443", nil, "443", "nas.lan", "/", 308, "https://nas.lan/"},
		{"IPv6 on 443", nil, "443", "[fd00::1]:80", "/", 308, "https://[fd00::1]/"},
		{"an escaped path stays", nil, "443", "nas.lan", "/a%2Fb", 308, "https://nas.lan/a%2Fb"},
		{"no host", nil, "443", "", "/", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://x"+tt.target, nil)
			r.Host = tt.host
			w := httptest.NewRecorder()
			RedirectHTTPS(tt.origin, tt.port).ServeHTTP(w, r)
			if w.Code != tt.code || w.Header().Get("Location") != tt.location {
				t.Errorf("%d %q, want %d %q", w.Code, w.Header().Get("Location"), tt.code, tt.location)
			}
		})
	}
}

func TestStrictTransport(t *testing.T) {
	h := StrictTransport(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), "max-age=31536000")
	for _, overTLS := range []bool{true, false} {
		r := httptest.NewRequest("GET", "/", nil)
		if overTLS {
			r.TLS = &tls.ConnectionState{}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("Strict-Transport-Security"); (got == "max-age=31536000") != overTLS {
			t.Errorf("over TLS %v: %q", overTLS, got)
		}
	}
}
