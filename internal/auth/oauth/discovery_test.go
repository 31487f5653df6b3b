package oauth

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
)

// fakeDiscovery serves an OpenID Connect discovery document that can be
// made to fail, and counts how often it is asked.
type fakeDiscovery struct {
	URL string

	mu     sync.Mutex
	fail   bool
	issuer string // the issuer the document claims; default URL
	// endSession is the document's end_session_endpoint; "" leaves it out.
	endSession string
	asked      int
}

func newFakeDiscovery(t *testing.T) *fakeDiscovery {
	d := &fakeDiscovery{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		d.mu.Lock()
		d.asked++
		fail, issuer, endSession := d.fail, cmp.Or(d.issuer, d.URL), d.endSession
		d.mu.Unlock()
		if fail {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		doc := map[string]any{
			"issuer":                                issuer,
			"authorization_endpoint":                d.URL + "/authorize",
			"token_endpoint":                        d.URL + "/token",
			"userinfo_endpoint":                     d.URL + "/userinfo",
			"jwks_uri":                              d.URL + "/keys",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		}
		if endSession != "" {
			doc["end_session_endpoint"] = endSession
		}
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

func (d *fakeDiscovery) set(fail bool, issuer string) {
	d.mu.Lock()
	d.fail, d.issuer = fail, issuer
	d.mu.Unlock()
}

func (d *fakeDiscovery) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked
}

// TestLazyDiscovery checks that discovery waits for the first sign-in, that
// a failure gives a 502 page rather than a hang, and that a later sign-in
// tries again (after a short pause, so a down provider is not hammered).
func TestLazyDiscovery(t *testing.T) {
	d := newFakeDiscovery(t)
	d.set(true, "")
	s := newService(t)
	s.use(Config{Provider: "generic", Issuer: d.URL, ClientID: "c", ClientSecret: "s", Rule: Rule{All: true}}, auth.Deps{})
	if d.count() != 0 {
		t.Fatal("New contacted the provider")
	}
	c := noFollow(browser(t))
	login := func() *http.Response {
		resp, _ := get(t, c, s.URL+LoginPath)
		return resp
	}
	if resp := login(); resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("sign-in while the provider is down: %d, want 502", resp.StatusCode)
	}
	s.assertOutage(t, "discovery", "503")
	d.set(false, "")
	if resp := login(); resp.StatusCode != http.StatusBadGateway || d.count() != 1 {
		t.Fatalf("retry within the pause: %d after %d requests", resp.StatusCode, d.count())
	}
	s.clock.Advance(discoveryRetry)
	resp := login()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), d.URL+"/authorize?") {
		t.Fatalf("after the provider came back: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	login()
	if d.count() != 2 {
		t.Errorf("discovery asked %d times, want 2 (once failed, once done)", d.count())
	}
}

func TestDiscoveryIssuerMismatch(t *testing.T) {
	d := newFakeDiscovery(t)
	d.set(false, "https://elsewhere.example")
	s := newService(t)
	s.use(Config{Provider: "google", Issuer: d.URL, ClientID: "c", ClientSecret: "s", Rule: Rule{All: true}}, auth.Deps{})
	resp, body := get(t, noFollow(browser(t)), s.URL+LoginPath)
	if resp.StatusCode != http.StatusBadGateway || strings.Contains(body, "elsewhere") {
		t.Fatalf("got %d; %.300s", resp.StatusCode, body)
	}
	s.assertOutage(t, `calls itself \"https://elsewhere.example\"; set issuer to exactly that`)
}

func TestDiscoveredEndpointsCanBeOverridden(t *testing.T) {
	d := newFakeDiscovery(t)
	s := newService(t)
	s.use(Config{Provider: "google", Issuer: d.URL, AuthURL: "https://login.example.com/auth",
		ClientID: "c", ClientSecret: "s", Rule: Rule{All: true}}, auth.Deps{})
	resp, _ := get(t, noFollow(browser(t)), s.URL+LoginPath)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "https://login.example.com/auth?") {
		t.Fatalf("got %d to %q", resp.StatusCode, loc)
	}
	ep, err := s.p.endpoints()
	if err != nil || ep.oauth2.TokenURL != d.URL+"/token" || ep.userinfo != d.URL+"/userinfo" {
		t.Errorf("endpoints = %+v, %v", ep, err)
	}
}
