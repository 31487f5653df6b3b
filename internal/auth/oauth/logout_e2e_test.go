package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// logoutWorld is the identity provider with one service registered as
// client "client-logout", its post-logout address the service's top page.
type logoutWorld struct {
	op *oidctest.Provider
	s  *service
}

const logoutClient, logoutSecret = "client-logout", "secret-logout"

func newLogoutWorld(t *testing.T, claimsInIDToken bool) *logoutWorld {
	t.Helper()
	s := newService(t)
	users := make([]oidctest.User, len(opUsers))
	for i, u := range opUsers {
		u.Password = opPassword
		users[i] = u
	}
	op := oidctest.Start(t, oidctest.Options{Users: users, Clients: []oidctest.Client{{
		ID: logoutClient, Secret: logoutSecret, RedirectURIs: []string{s.RedirectURL()},
		ClaimsInIDToken: claimsInIDToken, PostLogoutRedirectURIs: []string{s.URL + "/", s.URL + "/elsewhere"},
	}}})
	return &logoutWorld{op: op, s: s}
}

// serve configures the service with cfg (provider generic and the issuer
// when cfg.Provider is empty).
func (w *logoutWorld) serve(t *testing.T, cfg Config, env auth.Deps) {
	t.Helper()
	if cfg.Provider == "" {
		cfg.Provider, cfg.Issuer = "generic", w.op.Issuer
	}
	cfg.ClientID, cfg.ClientSecret, cfg.Rule = logoutClient, logoutSecret, Rule{All: true}
	w.s.use(cfg, env)
}

// signIn signs c in as username and returns the provider's session of
// that sign-in.
func (w *logoutWorld) signIn(t *testing.T, c *http.Client, username string) oidctest.Session {
	t.Helper()
	ww := &world{op: w.op}
	if resp, body := ww.signIn(t, w.s, c, "/", username); resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in as %s: %d %.300s", username, resp.StatusCode, body)
	}
	return w.op.LastSession()
}

// csrf returns the CSRF token of c's session.
func (w *logoutWorld) csrf(t *testing.T, c *http.Client) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.s.URL+"/", nil)
	u, _ := url.Parse(w.s.URL)
	for _, ck := range c.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	user, ok, err := w.s.p.Identify(req)
	if err != nil || !ok {
		t.Fatalf("Identify: %v %v", ok, err)
	}
	return user.CSRFToken()
}

// signOut posts the sign-out form of c's session and returns the answer,
// unfollowed.
func (w *logoutWorld) signOut(t *testing.T, c *http.Client) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.s.URL+sessionauth.LogoutPath, nil)
	req.Header.Set(sessionauth.CSRFHeader, w.csrf(t, c))
	resp, err := noFollow(c).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	return resp
}

// backchannel posts token to the back-channel logout and returns the
// status and body.
func (w *logoutWorld) backchannel(t *testing.T, token string) (int, string) {
	t.Helper()
	resp, err := http.PostForm(w.s.URL+BackchannelLogoutPath, url.Values{"logout_token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readBody(t, resp)
}

func TestRPInitiatedLogout(t *testing.T) {
	tests := []struct {
		name            string
		claimsInIDToken bool
		cfg             func(op *oidctest.Provider) Config
		post            string // post_logout_redirect_uri; "" the default
		toProvider      bool
		hint            bool
	}{
		{"google-shape", true, func(op *oidctest.Provider) Config { return Config{Provider: "google", Issuer: op.Issuer} }, "", true, true},
		{"generic-oidc", false, func(*oidctest.Provider) Config { return Config{} }, "", true, true},
		{"generic-oidc-post-logout-key", false, func(*oidctest.Provider) Config { return Config{} }, "/elsewhere", true, true},
		{"generic-oauth2", false, func(op *oidctest.Provider) Config {
			return Config{Provider: "generic", AuthURL: op.AuthorizationEndpoint(), TokenURL: op.TokenEndpoint(), UserinfoURL: op.UserinfoEndpoint()}
		}, "", false, false},
		{"generic-oauth2-end-session-key", false, func(op *oidctest.Provider) Config {
			return Config{Provider: "generic", AuthURL: op.AuthorizationEndpoint(), TokenURL: op.TokenEndpoint(), UserinfoURL: op.UserinfoEndpoint(), EndSessionURL: op.EndSessionEndpoint()}
		}, "", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLogoutWorld(t, tt.claimsInIDToken)
			cfg := tt.cfg(w.op)
			wantPost := w.s.URL + "/"
			if tt.post != "" {
				cfg.PostLogoutURL = w.s.URL + tt.post
				wantPost = cfg.PostLogoutURL
			}
			w.serve(t, cfg, auth.Deps{})
			c := browser(t)
			op := w.signIn(t, c, "alice")
			me, status := w.s.me(t, c)
			if status != http.StatusOK {
				t.Fatalf("/api/me after sign-in: %d", status)
			}
			for k, v := range me {
				if strings.HasPrefix(k, "oidc_") || strings.Count(v, ".") == 2 && len(v) > 100 {
					t.Errorf("/api/me shows %s = %.40s: what logout keeps must stay on the server", k, v)
				}
			}
			resp := w.signOut(t, c)
			loc := resp.Header.Get("Location")
			if _, status := w.s.me(t, c); status != http.StatusUnauthorized {
				t.Errorf("/api/me after sign-out: %d, want 401", status)
			}
			if !tt.toProvider {
				if resp.StatusCode != http.StatusSeeOther || loc != SignedOutPath {
					t.Fatalf("sign-out: %d to %q, want 303 to %s", resp.StatusCode, loc, SignedOutPath)
				}
				return
			}
			u, err := url.Parse(loc)
			if resp.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc, w.op.EndSessionEndpoint()+"?") {
				t.Fatalf("sign-out: %d to %q, want 303 to %s", resp.StatusCode, loc, w.op.EndSessionEndpoint())
			}
			q := u.Query()
			if q.Get("client_id") != logoutClient || q.Get("post_logout_redirect_uri") != wantPost {
				t.Errorf("end-session parameters: %v", q)
			}
			hint := q.Get("id_token_hint")
			if tt.hint != (hint != "") {
				t.Fatalf("id_token_hint %.20q, want one: %v", hint, tt.hint)
			}
			if tt.hint {
				parts := strings.Split(hint, ".")
				payload, _ := base64.RawURLEncoding.DecodeString(parts[min(1, len(parts)-1)])
				var cl struct{ Sub, Sid string }
				if err := json.Unmarshal(payload, &cl); err != nil || cl.Sub != op.Subject || cl.Sid != op.SID {
					t.Errorf("id_token_hint is not the session's ID token: %s (%v)", payload, err)
				}
				for _, ck := range c.Jar.Cookies(&url.URL{Scheme: "http", Host: strings.TrimPrefix(w.s.URL, "http://")}) {
					if strings.Contains(ck.Value, parts[min(1, len(parts)-1)]) {
						t.Errorf("cookie %s holds the ID token", ck.Name)
					}
				}
			}
			// The real provider takes these parameters: it ends its
			// session and sends the browser to post_logout_redirect_uri.
			back, err := noFollow(c).Get(loc)
			if err != nil {
				t.Fatal(err)
			}
			readBody(t, back)
			if back.StatusCode != http.StatusFound || back.Header.Get("Location") != wantPost {
				t.Errorf("the provider's end-session answered %d to %q, want 302 to %s", back.StatusCode, back.Header.Get("Location"), wantPost)
			}
		})
	}
}

func TestBackchannelLogoutEndsMatchingSessions(t *testing.T) {
	w := newLogoutWorld(t, false)
	w.serve(t, Config{}, auth.Deps{})
	alice1, alice2, bob := browser(t), browser(t), browser(t)
	s1 := w.signIn(t, alice1, "alice")
	w.signIn(t, alice2, "alice")
	w.signIn(t, bob, "bob")
	alive := func(c *http.Client) bool { _, st := w.s.me(t, c); return st == http.StatusOK }

	// A sid ends that session of the provider's only.
	tok, err := w.op.SignLogoutToken(w.op.LogoutClaims(logoutClient, s1, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if st, body := w.backchannel(t, tok); st != http.StatusOK {
		t.Fatalf("logout token with sid: %d %s", st, body)
	}
	if alive(alice1) || !alive(alice2) || !alive(bob) {
		t.Errorf("after the sid's logout: alice1 %v alice2 %v bob %v, want false true true", alive(alice1), alive(alice2), alive(bob))
	}
	// A sub alone ends every session of the account.
	cl := w.op.LogoutClaims(logoutClient, s1, time.Now())
	delete(cl, "sid")
	tok, err = w.op.SignLogoutToken(cl)
	if err != nil {
		t.Fatal(err)
	}
	if st, body := w.backchannel(t, tok); st != http.StatusOK {
		t.Fatalf("logout token with sub: %d %s", st, body)
	}
	if alive(alice2) || !alive(bob) {
		t.Errorf("after the sub's logout: alice2 %v bob %v, want false true", alive(alice2), alive(bob))
	}
	if !strings.Contains(w.s.logs.String(), "auth signed out by the identity provider") {
		t.Errorf("no line for the provider's logout:\n%s", w.s.logs.String())
	}
}

// hs256 signs claims with HMAC-SHA256 under key (the client secret): a
// token anyone holding the secret could make, which must not pass for the
// provider's.
func hs256(t *testing.T, claims map[string]any, key string) string {
	t.Helper()
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"logout+jwt"}`))
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	in := h + "." + base64.RawURLEncoding.EncodeToString(p)
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// unsigned makes an alg none token of claims.
func unsigned(t *testing.T, claims map[string]any) string {
	t.Helper()
	p, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString(p) + "."
}

func TestBackchannelLogoutRefusals(t *testing.T) {
	w := newLogoutWorld(t, false)
	w.serve(t, Config{}, auth.Deps{})
	victim := browser(t)
	s := w.signIn(t, victim, "alice")
	now := time.Now()
	good := func() map[string]any { return w.op.LogoutClaims(logoutClient, s, now) }
	with := func(k string, v any) map[string]any { c := good(); c[k] = v; return c }
	without := func(keys ...string) map[string]any {
		c := good()
		for _, k := range keys {
			delete(c, k)
		}
		return c
	}
	sign := func(c map[string]any) string {
		tok, err := w.op.SignLogoutToken(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	forged, err := w.op.ForgeLogoutToken(good())
	if err != nil {
		t.Fatal(err)
	}
	dupPayload := `{"iss":"` + w.op.Issuer + `","aud":"` + logoutClient + `","iat":` + jsonNum(now.Unix()) + `,"jti":"dup-1","events":{"` + oidctest.BackchannelEvent + `":{}},"sub":"someone-else","sub":"` + s.Subject + `"}`
	dup, err := w.op.SignLogoutPayload([]byte(dupPayload))
	if err != nil {
		t.Fatal(err)
	}
	replayed := sign(good())
	if st, body := w.backchannel(t, replayed); st != http.StatusOK {
		t.Fatalf("first use of a good token: %d %s", st, body)
	}
	s = w.signIn(t, victim, "alice") // the good token ended it: a new session for the cases below
	tests := []struct {
		name, token, why string
	}{
		{"forged", forged, "verify"},
		{"unsigned", unsigned(t, good()), `"none"`},
		{"hs256 with the client secret", hs256(t, good(), logoutSecret), `"HS256"`},
		{"wrong audience", sign(with("aud", "another-client")), "audience"},
		{"wrong issuer", sign(with("iss", "https://evil.example")), "different provider"},
		{"expired", sign(with("exp", now.Add(-time.Hour).Unix())), "expired"},
		{"issued long ago", sign(with("iat", now.Add(-time.Hour).Unix())), "too old"},
		{"issued in the future", sign(with("iat", now.Add(time.Hour).Unix())), "future"},
		{"no iat", sign(without("iat")), "iat"},
		{"nonce", sign(with("nonce", "n-1")), "nonce"},
		{"no events", sign(without("events")), "events"},
		{"other event", sign(with("events", map[string]any{"http://schemas.openid.net/event/other": map[string]any{}})), "events"},
		{"event not an object", sign(with("events", map[string]any{oidctest.BackchannelEvent: "yes"})), "events"},
		{"neither sub nor sid", sign(without("sub", "sid")), "neither"},
		{"no jti", sign(without("jti")), "jti"},
		{"replayed", replayed, "used already"},
		{"member named twice", dup, "twice"},
		{"not a JWT", "not-a-token", "three parts"},
		{"empty", "", "exactly one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(w.s.logs.String())
			st, body := w.backchannel(t, tt.token)
			logs := w.s.logs.String()[before:]
			var answer struct{ Error string }
			if st != http.StatusBadRequest || json.Unmarshal([]byte(body), &answer) != nil || answer.Error == "" {
				t.Fatalf("answer %d %s, want 400 with a JSON error", st, body)
			}
			if !strings.Contains(answer.Error+logs, tt.why) {
				t.Errorf("neither the answer %q nor the log says %q:\n%s", answer.Error, tt.why, logs)
			}
			if !strings.Contains(logs, "level=WARN msg=\"auth refused\"") || !strings.Contains(logs, "logout token rejected") {
				t.Errorf("no auth refused line for the logout token:\n%s", logs)
			}
			if _, status := w.s.me(t, victim); status != http.StatusOK {
				t.Errorf("the session ended after a refused token: %d", status)
			}
			if tt.token != "" {
				w.s.assertNoSecrets(t, tt.token)
			}
		})
	}
	// Without OpenID Connect there is no logout token to trust.
	w.serve(t, Config{Provider: "generic", AuthURL: w.op.AuthorizationEndpoint(), TokenURL: w.op.TokenEndpoint(), UserinfoURL: w.op.UserinfoEndpoint()}, auth.Deps{})
	if st, body := w.backchannel(t, sign(good())); st != http.StatusBadRequest || !strings.Contains(body, "OpenID Connect") {
		t.Errorf("plain OAuth 2.0: %d %s, want 400", st, body)
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestEndSessionURLIsSafe: sign-out leads on only to an absolute http(s)
// end_session_endpoint on a site the pages' form-action names (the
// issuer's, or the configured endpoint's); anything else, or none, leaves
// the sign-out local.
func TestEndSessionURLIsSafe(t *testing.T) {
	tests := []struct {
		name       string
		discovered string // "ISSUER" stands for the issuer's address
		configured string
		want       string // prefix; "" for a local sign-out
		warning    string
	}{
		{"none", "", "", "", ""},
		{"on the issuer's site", "ISSUER/logout?from=doc", "", "ISSUER/logout?", ""},
		{"script", "javascript:alert(1)", "", "", "not an absolute http(s) URL"},
		{"relative", "/logout", "", "", "not an absolute http(s) URL"},
		{"another site", "https://elsewhere.example/logout", "", "", "on another site than its issuer"},
		{"configured on another site", "https://elsewhere.example/logout", "https://sso.example.com/end", "https://sso.example.com/end?", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFakeDiscovery(t)
			d.endSession = strings.ReplaceAll(tt.discovered, "ISSUER", d.URL)
			s := newService(t)
			s.use(Config{Provider: "generic", Issuer: d.URL, ClientID: "c", ClientSecret: "s", Rule: Rule{All: true}, EndSessionURL: tt.configured}, auth.Deps{})
			data := session.Data{Attrs: attrs.Of(map[string]string{idTokenAttr: "h.p.s"})}
			got := s.p.endSessionURL(httptest.NewRequest(http.MethodPost, "/logout", nil), data)
			want := strings.ReplaceAll(tt.want, "ISSUER", d.URL)
			if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
				t.Fatalf("endSessionURL = %q, want %q", got, want)
			}
			if got != "" {
				u, _ := url.Parse(got)
				q := u.Query()
				if q.Get("id_token_hint") != "h.p.s" || q.Get("client_id") != "c" || q.Get("post_logout_redirect_uri") != s.URL+"/" {
					t.Errorf("parameters %v", q)
				}
				if tt.name == "on the issuer's site" && q.Get("from") != "doc" {
					t.Errorf("the endpoint's own query was lost: %v", q)
				}
			}
			if tt.warning != "" && !strings.Contains(s.logs.String(), tt.warning) {
				t.Errorf("no warning %q:\n%s", tt.warning, s.logs.String())
			}
		})
	}
}

// TestForgedLogoutTokensDoNotFloodTheProvider: a signature that does not
// verify makes go-oidc fetch the key set again; a flood of forged logout
// tokens, which anyone may post, fetches it at most once per
// keysRefetchInterval.
func TestForgedLogoutTokensDoNotFloodTheProvider(t *testing.T) {
	w := newLogoutWorld(t, false)
	w.serve(t, Config{}, auth.Deps{})
	s := w.signIn(t, browser(t), "alice") // the key set is fetched
	before := w.op.KeySetRequests()
	if before == 0 {
		t.Fatal("the sign-in did not fetch the key set")
	}
	forged, err := w.op.ForgeLogoutToken(w.op.LogoutClaims(logoutClient, s, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if st, body := w.backchannel(t, forged); st != http.StatusBadRequest {
			t.Fatalf("forged token: %d %s", st, body)
		}
	}
	if n := w.op.KeySetRequests() - before; n > 1 {
		t.Errorf("20 forged tokens fetched the key set %d times, want at most once", n)
	}
}
