package session

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestStartCookieFlags(t *testing.T) {
	fromProxy := func(r *http.Request) bool { return r.Header.Get("X-Forwarded-Proto") == "https" }
	tests := []struct {
		name       string
		secure     func(*http.Request) bool
		tls        bool
		proto      string
		cookieName string
		wantSecure bool
	}{
		{name: "plain http, default rule", wantSecure: false},
		{name: "tls, default rule", tls: true, wantSecure: true},
		{name: "https by trusted proxy", secure: fromProxy, proto: "https", wantSecure: true},
		{name: "http by trusted proxy", secure: fromProxy, proto: "http", wantSecure: false},
		{name: "injected rule overrides tls", secure: fromProxy, tls: true, wantSecure: false},
		{name: "custom name", cookieName: "sid", wantSecure: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestManager(t, newClock(), nil, Options{Secure: tt.secure, CookieName: tt.cookieName})
			r := get()
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			w := httptest.NewRecorder()
			if _, err := m.Start(w, r, Data{Username: "alice"}); err != nil {
				t.Fatal(err)
			}
			want := tt.cookieName
			if want == "" {
				want = DefaultCookieName
			}
			if tt.wantSecure {
				// Over https the name carries the __Host- prefix, so that
				// a sibling subdomain cannot set or overwrite it.
				want = HostPrefix + want
			}
			c := cookieNamed(t, w, want)
			if c.Domain != "" {
				t.Errorf("cookie has a Domain %q; __Host- cookies must not", c.Domain)
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != tt.wantSecure {
				t.Errorf("cookie flags: HttpOnly=%v SameSite=%v Path=%q Secure=%v; want true, Lax, /, %v",
					c.HttpOnly, c.SameSite, c.Path, c.Secure, tt.wantSecure)
			}
			if c.MaxAge != 0 || !c.Expires.IsZero() {
				t.Errorf("session cookie is persistent: Max-Age %d Expires %v", c.MaxAge, c.Expires)
			}
			if len(c.Value) != encodedIDLen {
				t.Errorf("cookie value has %d characters, want %d (32 bytes base64url)", len(c.Value), encodedIDLen)
			}
			raw := w.Header().Get("Set-Cookie")
			for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
				if !strings.Contains(raw, attr) {
					t.Errorf("Set-Cookie %q lacks %s", raw, attr)
				}
			}
		})
	}
}

func TestSetAndClearCookie(t *testing.T) {
	m := newTestManager(t, newClock(), nil, Options{})
	tests := []struct {
		name       string
		maxAge     time.Duration
		clear      bool
		wantMaxAge int
	}{
		{name: "browser session", maxAge: 0, wantMaxAge: 0},
		{name: "ten minutes", maxAge: 10 * time.Minute, wantMaxAge: 600},
		{name: "under a second rounds up", maxAge: 300 * time.Millisecond, wantMaxAge: 1},
		{name: "clear", clear: true, wantMaxAge: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get()
			r.TLS = &tls.ConnectionState{}
			w := httptest.NewRecorder()
			if tt.clear {
				m.ClearCookie(w, r, "oauth_flow")
			} else {
				m.SetCookie(w, r, "oauth_flow", "v", tt.maxAge)
			}
			c := cookieNamed(t, w, HostPrefix+"oauth_flow")
			if c.MaxAge != tt.wantMaxAge {
				t.Errorf("Max-Age %d, want %d (Set-Cookie %q)", c.MaxAge, tt.wantMaxAge, w.Header().Get("Set-Cookie"))
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || !c.Secure {
				t.Errorf("flags: %+v", c)
			}
			if tt.clear && (c.Value != "" || !strings.Contains(w.Header().Get("Set-Cookie"), "Max-Age=0")) {
				t.Errorf("clearing cookie: %q", w.Header().Get("Set-Cookie"))
			}
		})
	}
}

func TestLoadIgnoresMalformedCookies(t *testing.T) {
	clock := newClock()
	cs := &countingStore{Store: NewMemoryStore(clock.Now)}
	m := newTestManager(t, clock, cs, Options{})
	_, good := start(t, m, "alice")
	unknown := b64.EncodeToString(make([]byte, idLen))
	tests := []struct {
		name      string
		value     string
		wantFinds int // store lookups: malformed values never reach the store
	}{
		{"empty", "", 0},
		{"short", "abc", 0},
		{"one char too long", good.Value + "A", 0},
		{"padded", good.Value[:42] + "=", 0},
		{"not base64url", strings.Repeat("*", encodedIDLen), 0},
		{"standard alphabet", strings.Repeat("+", encodedIDLen), 0},
		{"well-formed but unknown", unknown, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f0, _, _ := cs.counts()
			c := &http.Cookie{Name: DefaultCookieName, Value: tt.value}
			s, ok, err := m.Load(get(c))
			if ok || s != nil || err != nil {
				t.Errorf("Load = %v, %v, %v; want nil, false, nil", s, ok, err)
			}
			if f1, _, _ := cs.counts(); f1-f0 != tt.wantFinds {
				t.Errorf("store lookups: %d, want %d", f1-f0, tt.wantFinds)
			}
		})
	}
	if _, ok, err := m.Load(get()); ok || err != nil {
		t.Errorf("Load without cookie = %v, %v", ok, err)
	}
}

// TestHostPrefixRead: over https only the prefixed cookie is read (one a
// sibling subdomain set without the prefix is ignored); over http only the
// plain one.
func TestHostPrefixRead(t *testing.T) {
	m := newTestManager(t, newClock(), nil, Options{})
	secure := get()
	secure.TLS = &tls.ConnectionState{}
	secure.AddCookie(&http.Cookie{Name: "x", Value: "planted"})
	if _, err := m.Cookie(secure, "x"); err == nil {
		t.Fatal("over https a cookie without the __Host- prefix was read")
	}
	secure.AddCookie(&http.Cookie{Name: HostPrefix + "x", Value: "ours"})
	if c, err := m.Cookie(secure, "x"); err != nil || c.Value != "ours" {
		t.Fatalf("over https the prefixed cookie: %v %v", c, err)
	}
	plain := get()
	plain.AddCookie(&http.Cookie{Name: "x", Value: "ours"})
	if c, err := m.Cookie(plain, "x"); err != nil || c.Value != "ours" {
		t.Fatalf("over http the plain cookie: %v %v", c, err)
	}
}

func TestCookieDomain(t *testing.T) {
	m := newTestManager(t, newClock(), nil, Options{CookieDomain: "example.com"})
	r := get()
	r.TLS = &tls.ConnectionState{}
	w := httptest.NewRecorder()
	if _, err := m.Start(w, r, Data{Username: "alice"}); err != nil {
		t.Fatal(err)
	}
	c := cookieNamed(t, w, SecurePrefix+DefaultCookieName)
	if c.Domain != "example.com" || !c.Secure {
		t.Errorf("cookie %+v: want Domain example.com and Secure", c)
	}
	plain := httptest.NewRecorder()
	m.Start(plain, get(), Data{Username: "alice"})
	if c := cookieNamed(t, plain, DefaultCookieName); c.Domain != "" {
		t.Errorf("over http the cookie names a domain: %+v", c)
	}
}
