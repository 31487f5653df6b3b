package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
)

// reachCallback signs username in with c up to the point where the
// provider sends the browser back, and returns that callback URL without
// visiting it.
func (w *world) reachCallback(t *testing.T, s *service, c *http.Client, username string) *url.URL {
	t.Helper()
	page, _ := get(t, c, s.URL+LoginPath)
	resp, err := w.op.SubmitLogin(stopAtCallback(c), page, username, opPassword)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Path != CallbackPath {
		t.Fatalf("the provider did not send the browser to the callback: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc
}

// callbackOf is reachCallback for alice in a new browser: the callback URL
// and the sign-in cookie that browser holds.
func (w *world) callbackOf(t *testing.T, s *service) (*url.URL, *http.Cookie) {
	t.Helper()
	c := browser(t)
	cb := w.reachCallback(t, s, c, "alice")
	return cb, s.flowCookie(t, c)
}

// callWith requests u with exactly the cookies given, as a replaying
// attacker or another browser would.
func callWith(t *testing.T, u string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/html")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readBody(t, resp)
}

func TestCallbackState(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{All: true}, auth.Deps{})

	tamper := func(state string, i int) string {
		b := []byte(state)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	tests := []struct {
		name string
		// change returns the callback URL and the cookies to send.
		change func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie)
		want   int
	}{
		{"untouched", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			return u.String(), []*http.Cookie{ck}
		}, http.StatusSeeOther},
		{"missing state", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			q := u.Query()
			q.Del("state")
			u.RawQuery = q.Encode()
			return u.String(), []*http.Cookie{ck}
		}, http.StatusBadRequest},
		{"tampered state, same cookie name", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			q := u.Query()
			q.Set("state", tamper(q.Get("state"), len(q.Get("state"))-1))
			u.RawQuery = q.Encode()
			return u.String(), []*http.Cookie{ck}
		}, http.StatusBadRequest},
		{"tampered state, other cookie name", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			q := u.Query()
			q.Set("state", tamper(q.Get("state"), 0))
			u.RawQuery = q.Encode()
			return u.String(), []*http.Cookie{ck}
		}, http.StatusBadRequest},
		{"another browser (no cookie)", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			return u.String(), nil
		}, http.StatusBadRequest},
		{"tampered cookie", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			v := []byte(ck.Value)
			v[len(v)/2] ^= 1
			return u.String(), []*http.Cookie{{Name: ck.Name, Value: string(v)}}
		}, http.StatusBadRequest},
		{"cookie of another sign-in", func(u *url.URL, ck *http.Cookie) (string, []*http.Cookie) {
			other := browser(t)
			get(t, noFollow(other), s.URL+LoginPath)
			o := s.flowCookie(t, other)
			return u.String(), []*http.Cookie{{Name: ck.Name, Value: o.Value}}
		}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, ck := w.callbackOf(t, s)
			before := w.op.TokenRequests()
			u, cookies := tt.change(cb, ck)
			resp, body := callWith(t, u, cookies...)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d; body %.300s", resp.StatusCode, tt.want, body)
			}
			redeemed := w.op.TokenRequests() - before
			if tt.want == http.StatusBadRequest {
				if redeemed != 0 {
					t.Error("the code was redeemed although the state was refused")
				}
				if !strings.Contains(body, "Sign-in expired") {
					t.Errorf("page: %.300s", body)
				}
			}
		})
	}
	s.assertLogged(t, "missing or wrong oauth state")
}

func TestCallbackReplay(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "generic-oidc", Rule{All: true}, auth.Deps{})
	cb, ck := w.callbackOf(t, s)

	resp, _ := callWith(t, cb.String(), ck)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: %d", resp.StatusCode)
	}
	cleared := false
	for _, set := range resp.Cookies() {
		if set.Name == ck.Name && set.MaxAge < 0 {
			cleared = true
		}
	}
	if !cleared {
		t.Error("the sign-in cookie was not cleared by the callback")
	}
	before := w.op.TokenRequests()
	resp, body := callWith(t, cb.String(), ck)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("replay: %d, want 400; %.300s", resp.StatusCode, body)
	}
	if w.op.TokenRequests() != before {
		t.Error("the replayed code was sent to the token endpoint")
	}
}

func TestCallbackStateExpires(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{All: true}, auth.Deps{})
	cb, ck := w.callbackOf(t, s)
	s.clock.Advance(FlowTTL + time.Second)
	if resp, _ := callWith(t, cb.String(), ck); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("expired sign-in: %d, want 400", resp.StatusCode)
	}
}

func TestProviderReturnsError(t *testing.T) {
	w := newWorld(t)
	for _, mode := range []string{"google", "generic-oauth2"} {
		t.Run(mode, func(t *testing.T) {
			s := w.serve(t, mode, Rule{All: true}, auth.Deps{})
			before := w.op.TokenRequests()
			w.op.RejectNextAuthorization()
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath)
			if resp.StatusCode != http.StatusUnauthorized || resp.Request.URL.Path != CallbackPath {
				t.Fatalf("got %d at %s, want 401 at the callback", resp.StatusCode, resp.Request.URL)
			}
			if !strings.Contains(body, "did not sign you in") {
				t.Errorf("page: %.300s", body)
			}
			if w.op.TokenRequests() != before {
				t.Error("a token was requested after the provider's error")
			}
			s.assertLogged(t, "identity provider refused", "error=login_required")
			if rec, st := s.me(t, c); st != http.StatusUnauthorized {
				t.Errorf("/api/me after the error: %d %v", st, rec)
			}
		})
	}
}

// TestParallelSignIns checks that two tabs signing in at once both finish.
func TestParallelSignIns(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{All: true}, auth.Deps{})
	c := browser(t)
	first := w.reachCallback(t, s, c, "alice")
	second := w.reachCallback(t, s, c, "alice")
	for _, cb := range []*url.URL{first, second} {
		resp, _ := get(t, c, cb.String())
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" {
			t.Errorf("callback ended with %d at %s", resp.StatusCode, resp.Request.URL)
		}
	}
}

// TestAbandonedSignInsAreDropped checks that a browser never holds more
// than a few sign-in cookies.
func TestAbandonedSignInsAreDropped(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{All: true}, auth.Deps{})
	c := noFollow(browser(t))
	u, _ := url.Parse(s.URL)
	for range 3 * maxFlows {
		get(t, c, s.URL+LoginPath)
		n := 0
		for _, ck := range c.Jar.Cookies(u) {
			if strings.HasPrefix(ck.Name, flowCookiePrefix) {
				n++
			}
		}
		if n > maxFlows {
			t.Fatalf("the browser holds %d sign-in cookies", n)
		}
	}
}

// TestCallbackPages checks what every page of the callback sends: no
// referrer (its URL holds the code), no caching, and nothing loaded from
// another site.
func TestCallbackPages(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{Domains: []string{"example.com"}}, auth.Deps{})
	refused, _ := w.signIn(t, s, browser(t), "/", "eve")
	badState, _ := get(t, browser(t), s.URL+CallbackPath+"?code=x&state=y")
	for _, resp := range []*http.Response{refused, badState} {
		if resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%d page headers: %v", resp.StatusCode, resp.Header)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
	}
	_, body := get(t, browser(t), s.URL+CallbackPath+"?code=x&state=y")
	for _, attr := range []string{`src="`, `href="`, `action="`} {
		for rest := body; ; {
			i := strings.Index(rest, attr)
			if i < 0 {
				break
			}
			rest = rest[i+len(attr):]
			local := strings.HasPrefix(rest, "#") || strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "//")
			if !local {
				t.Errorf("the page refers to another site: %s%.40s", attr, rest)
			}
		}
	}
}
