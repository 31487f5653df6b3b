package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// tokenProxy stands between the service and the provider's token
// endpoint and rewrites the id_token of its answers, as a compromised or
// misconfigured path would. It records what it saw, so tests can check
// that none of it reaches the logs.
type tokenProxy struct {
	URL  string
	swap func(idToken string) string // "" removes the id_token

	mu   sync.Mutex
	seen []string
}

func newTokenProxy(t *testing.T, target string) *tokenProxy {
	p := &tokenProxy{swap: func(s string) string { return s }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var answer map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		for _, k := range []string{"access_token", "id_token", "refresh_token"} {
			if v, ok := answer[k].(string); ok {
				p.seen = append(p.seen, v)
			}
		}
		if v, _ := url.ParseQuery(string(body)); v.Get("code") != "" {
			p.seen = append(p.seen, v.Get("code"))
		}
		swap := p.swap
		p.mu.Unlock()
		if id, ok := answer["id_token"].(string); ok {
			if s := swap(id); s != "" {
				answer["id_token"] = s
			} else {
				delete(answer, "id_token")
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *tokenProxy) setSwap(f func(string) string) {
	p.mu.Lock()
	p.swap = f
	p.mu.Unlock()
}

func (p *tokenProxy) secrets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// obtainIDToken signs username in at op as another client, outside the
// service, and returns the ID token the client gets.
func obtainIDToken(t *testing.T, op *oidctest.Provider, clientID, secret, redirect, username string) string {
	t.Helper()
	conf := &oauth2.Config{
		ClientID: clientID, ClientSecret: secret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: op.AuthorizationEndpoint(), TokenURL: op.TokenEndpoint()},
		Scopes:   []string{"openid", "email", "profile"},
	}
	c := browser(t)
	page, _ := get(t, c, conf.AuthCodeURL("some-state", oauth2.SetAuthURLParam("nonce", "some-nonce")))
	resp, err := op.SubmitLogin(stopAtCallback(c), page, username, opPassword)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	tok, err := conf.Exchange(context.Background(), loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := tok.Extra("id_token").(string)
	if id == "" {
		t.Fatal("no id_token")
	}
	return id
}

// alterClaim changes a claim of a signed token, keeping its signature. It
// runs in the proxy's handler, so it reports nothing: a token it cannot
// alter comes back empty, which fails the test's expectations differently.
func alterClaim(jwt, from, to string) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !bytes.Contains(payload, []byte(from)) {
		return ""
	}
	parts[1] = base64.RawURLEncoding.EncodeToString(bytes.ReplaceAll(payload, []byte(from), []byte(to)))
	return strings.Join(parts, ".")
}

func TestIDTokenVerification(t *testing.T) {
	const otherRedirect = "http://127.0.0.1:9/oauth/callback"
	w := newWorld(t, oidctest.Client{ID: "client-other", Secret: "secret-other", RedirectURIs: []string{otherRedirect}, ClaimsInIDToken: true})
	other := oidctest.Start(t, oidctest.Options{
		Users:   []oidctest.User{{Username: "alice", Password: opPassword, Email: "alice@example.com", EmailVerified: true}},
		Clients: []oidctest.Client{{ID: "client-google", Secret: "secret-google", RedirectURIs: []string{otherRedirect}, ClaimsInIDToken: true}},
	})
	proxy := newTokenProxy(t, w.op.TokenEndpoint())
	s := w.services["google"]
	s.use(Config{Provider: "google", Issuer: w.op.Issuer, TokenURL: proxy.URL,
		ClientID: "client-google", ClientSecret: "secret-google", Rule: Rule{Domains: []string{"example.com"}}}, auth.Deps{})

	// A genuine token for this client from an earlier sign-in, whose nonce
	// belongs to that sign-in.
	c := browser(t)
	cb := w.reachCallback(t, s, c, "alice")
	f := openFlow(t, s.p, s.flowCookie(t, c).Value)
	conf := s.p.oauth2Config(endpoints{oauth2: oauth2.Endpoint{TokenURL: w.op.TokenEndpoint()}})
	earlier, err := conf.Exchange(context.Background(), cb.Query().Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		t.Fatal(err)
	}
	replayed, _ := earlier.Extra("id_token").(string)

	forOther := obtainIDToken(t, w.op, "client-other", "secret-other", otherRedirect, "eve")
	fromOther := obtainIDToken(t, other, "client-google", "secret-google", otherRedirect, "alice")

	tests := []struct {
		name   string
		swap   func(string) string
		want   int
		reason string
	}{
		{"genuine", func(s string) string { return s }, http.StatusOK, ""},
		{"claims altered after signing", func(s string) string {
			return alterClaim(s, "alice@example.com", "zelda@example.com")
		}, http.StatusBadGateway, "signature"},
		{"audience: token for another client", func(string) string { return forOther }, http.StatusBadGateway, "expected audience"},
		{"token signed by another provider", func(string) string { return fromOther }, http.StatusBadGateway, "signature"},
		{"token of an earlier sign-in (nonce)", func(string) string { return replayed }, http.StatusBadGateway, "nonce"},
		{"no id_token", func(string) string { return "" }, http.StatusBadGateway, "no id_token"},
		{"garbage id_token", func(string) string { return "not.a.jwt" }, http.StatusBadGateway, "malformed jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy.setSwap(tt.swap)
			logged := len(s.logs.String())
			c := browser(t)
			resp, body := w.signIn(t, s, c, "/", "alice")
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d at %s, want %d; %.300s", resp.StatusCode, resp.Request.URL, tt.want, body)
			}
			_, st := s.me(t, c)
			if tt.want != http.StatusOK {
				if st != http.StatusUnauthorized {
					t.Errorf("signed in despite the bad ID token (/api/me %d)", st)
				}
				if !strings.Contains(body, "could not be verified") {
					t.Errorf("page: %.300s", body)
				}
				if line := s.logs.String()[logged:]; !strings.Contains(line, tt.reason) {
					t.Errorf("log does not give the reason %q:\n%s", tt.reason, line)
				}
			}
		})
	}
	s.assertLogged(t, "id token rejected")
	s.assertNoSecrets(t, append(proxy.secrets(), "secret-google")...)
}
