package web

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/catalog"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
)

// sessionish is a fake session type: it admits when the request carries
// the cookie "s=ok", and sends browsers to /login.
type sessionish struct{ fakeProvider }

func (p *sessionish) Identify(r *http.Request) (auth.User, bool, error) {
	if c, err := r.Cookie("s"); err == nil && c.Value == "ok" {
		return auth.User{Name: "carol", Type: "oauth", Attrs: attrs.Of(map[string]string{"email": "carol@example.com"})}, true, nil
	}
	return auth.User{}, false, nil
}

func (p *sessionish) LoginURLFor(next string) string {
	return "/login?next=" + strings.ReplaceAll(next, "/", "%2F")
}

func TestForwardAuth(t *testing.T) {
	trusted := peer.NewResolver([]netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")})
	tests := []struct {
		name     string
		p        auth.Provider
		path     string
		from     string // RemoteAddr
		header   map[string]string
		status   int
		wantHdr  map[string]string
		location string
	}{
		{"basic without credentials, nginx", &fakeProvider{admit: false}, RequestAuthPath, "192.0.2.1:1", nil, 401,
			map[string]string{"WWW-Authenticate": `Basic realm="test"`}, ""},
		{"basic without credentials, traefik", &fakeProvider{admit: false}, ForwardAuthPath, "192.0.2.1:1", map[string]string{"Accept": "text/html"}, 401,
			map[string]string{"WWW-Authenticate": `Basic realm="test"`}, ""},
		{"admitted", &fakeProvider{admit: true, user: auth.User{Name: "api", Type: "basic"}}, RequestAuthPath, "192.0.2.1:1", nil, 200,
			map[string]string{userHeader: "api", emailHeader: ""}, ""},
		{"admitted with e-mail", &sessionish{}, ForwardAuthPath, "192.0.2.1:1", map[string]string{"Cookie": "s=ok"}, 200,
			map[string]string{userHeader: "carol", emailHeader: "carol@example.com"}, ""},
		{"throttled, nginx", &fakeProvider{err: &refusal.RetryError{After: time.Minute}}, RequestAuthPath, "192.0.2.1:1", nil, 403, nil, ""},
		{"throttled, traefik", &fakeProvider{err: &refusal.RetryError{After: time.Minute}}, ForwardAuthPath, "192.0.2.1:1", nil, 429,
			map[string]string{"Retry-After": "60"}, ""},
		{"session, nginx", &sessionish{}, RequestAuthPath, "192.0.2.1:1", map[string]string{"Accept": "text/html"}, 401, nil, ""},
		{"session, browser via traefik", &sessionish{}, ForwardAuthPath, "192.0.2.1:1",
			map[string]string{"Accept": "text/html", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "example.com", "X-Forwarded-Uri": "/app/page?x=1", "X-Forwarded-Method": "GET"},
			302, nil, "/login?next=%2Fapp%2Fpage?x=1"},
		{"session, forged headers from an untrusted peer", &sessionish{}, ForwardAuthPath, "203.0.113.9:1",
			map[string]string{"Accept": "text/html", "X-Forwarded-Host": "example.com", "X-Forwarded-Uri": "/app"}, 302, nil, "/login?next=%2F"},
		{"session, absolute uri", &sessionish{}, ForwardAuthPath, "192.0.2.1:1",
			map[string]string{"Accept": "text/html", "X-Forwarded-Host": "example.com", "X-Forwarded-Uri": "//evil.example/x"}, 302, nil, "/login?next=%2F"},
		{"session, another host", &sessionish{}, ForwardAuthPath, "192.0.2.1:1",
			map[string]string{"Accept": "text/html", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "backups.example.com", "X-Forwarded-Uri": "/x"}, 302, nil,
			"/login?next=https:%2F%2Fbackups.example.com%2Fx"},
		{"session, a POST being forwarded", &sessionish{}, ForwardAuthPath, "192.0.2.1:1",
			map[string]string{"Accept": "text/html", "X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/app"}, 401, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandler(Options{Provider: tt.p, Catalog: catalog.New(t.TempDir()), Resolver: trusted})
			req := httptest.NewRequest("GET", tt.path, nil)
			req.Host = "example.com"
			req.RemoteAddr = tt.from
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body.String())
			}
			for k, v := range tt.wantHdr {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if got := rec.Header().Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			if rec.Body.Len() > 200 {
				t.Errorf("body of %d bytes: forward-auth answers carry no more than the error message", rec.Body.Len())
			}
			// A 200 carries no-store and the identity headers only; every
			// refusal keeps the security headers.
			if tt.status == 200 {
				for _, k := range append(pageOnlyHeaders, "X-Content-Type-Options") {
					if got := rec.Header().Get(k); got != "" {
						t.Errorf("200 with %s = %q, want none", k, got)
					}
				}
				if got := rec.Header().Get("Cache-Control"); got != "no-store" {
					t.Errorf("200 with Cache-Control %q, want no-store", got)
				}
			} else {
				checkSecurityHeaders(t, rec.Header())
			}
		})
	}
}

// TestIdentityHeadersCanonical: the identity headers are assigned to the
// header map without canonicalisation, so their names must already be
// canonical.
func TestIdentityHeadersCanonical(t *testing.T) {
	for _, h := range []string{userHeader, emailHeader} {
		if c := http.CanonicalHeaderKey(h); c != h {
			t.Errorf("%q is not canonical (%q)", h, c)
		}
	}
}
