package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// The accounts of the test identity provider; every password is "password".
// The example.com accounts are hosted by example.com (Google's hd claim),
// as Workspace accounts are.
var opUsers = []oidctest.User{
	{Username: "alice", Email: "alice@example.com", EmailVerified: true, FirstName: "Alice", LastName: "Liddell", Claims: exampleHosted},
	{Username: "carol", Email: "Carol@EXAMPLE.com", EmailVerified: true, FirstName: "Carol", Claims: exampleHosted},
	{Username: "bob", Email: "bob@gmail.com", EmailVerified: true, FirstName: "Bob"},
	{Username: "eve", Email: "eve@evil-example.com", EmailVerified: true, FirstName: "Eve"},
	{Username: "mallory", Email: "mallory@example.com.evil.org", EmailVerified: true, FirstName: "Mallory"},
	{Username: "ursula", Email: "ursula@example.com", EmailVerified: false, FirstName: "Ursula", Claims: exampleHosted},
	{Username: "nomail", FirstName: "Nobody"},
}

// exampleHosted are the claims of a Workspace account of example.com.
var exampleHosted = map[string]any{"hd": "example.com"}

const opPassword = "password"

// oidcModes are the configurations tested against the provider: Google's
// shape (OpenID Connect, e-mail in the ID token), generic with an issuer
// (OpenID Connect, e-mail from the user-information endpoint) and generic
// without one (plain OAuth 2.0 and the user-information endpoint).
var oidcModes = []struct {
	name            string
	claimsInIDToken bool
	config          func(op *oidctest.Provider) Config
}{
	{"google", true, func(op *oidctest.Provider) Config {
		return Config{Provider: "google", Issuer: op.Issuer}
	}},
	{"generic-oidc", false, func(op *oidctest.Provider) Config {
		return Config{Provider: "generic", Issuer: op.Issuer}
	}},
	{"generic-oauth2", false, func(op *oidctest.Provider) Config {
		return Config{Provider: "generic", AuthURL: op.AuthorizationEndpoint(),
			TokenURL: op.TokenEndpoint(), UserinfoURL: op.UserinfoEndpoint()}
	}},
}

// world is the identity provider with one service per mode registered as
// a client ("client-<mode>", secret "secret-<mode>").
type world struct {
	op       *oidctest.Provider
	services map[string]*service
}

func newWorld(t *testing.T, extra ...oidctest.Client) *world {
	t.Helper()
	return newWorldOf(t, opUsers, extra...)
}

// newWorldOf is newWorld with the provider's accounts given.
func newWorldOf(t *testing.T, accounts []oidctest.User, extra ...oidctest.Client) *world {
	t.Helper()
	w := &world{services: map[string]*service{}}
	var clients []oidctest.Client
	for _, m := range oidcModes {
		s := newService(t)
		w.services[m.name] = s
		clients = append(clients, oidctest.Client{
			ID: "client-" + m.name, Secret: "secret-" + m.name,
			RedirectURIs: []string{s.RedirectURL()}, ClaimsInIDToken: m.claimsInIDToken,
			PostLogoutRedirectURIs: []string{s.URL + "/", s.URL + SignedOutPath},
		})
	}
	users := make([]oidctest.User, len(accounts))
	for i, u := range accounts {
		u.Password = opPassword
		users[i] = u
	}
	w.op = oidctest.Start(t, oidctest.Options{Users: users, Clients: append(clients, extra...)})
	return w
}

// serve configures mode's service with rule and returns it.
func (w *world) serve(t *testing.T, mode string, rule Rule, env auth.Deps) *service {
	t.Helper()
	s := w.services[mode]
	for _, m := range oidcModes {
		if m.name == mode {
			cfg := m.config(w.op)
			cfg.ClientID, cfg.ClientSecret, cfg.Rule = "client-"+mode, "secret-"+mode, rule
			s.use(cfg, env)
		}
	}
	return s
}

// signIn goes through the whole dance with c: the service's login, the
// provider's login form, the callback, and the redirect to next. It
// returns the last response and its body.
func (w *world) signIn(t *testing.T, s *service, c *http.Client, next, username string) (*http.Response, string) {
	t.Helper()
	page, _ := get(t, c, s.URL+LoginPath+"?next="+url.QueryEscape(next))
	if page.StatusCode != http.StatusOK || !strings.HasPrefix(page.Request.URL.String(), w.op.Issuer+"/login/") {
		t.Fatalf("sign-in did not reach the provider's login page: %d at %s", page.StatusCode, page.Request.URL)
	}
	resp, err := w.op.SubmitLogin(c, page, username, opPassword)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readBody(t, resp)
}

func TestSignInAdmission(t *testing.T) {
	w := newWorld(t)
	rules := []struct {
		name string
		rule Rule
		// admitted are the users the rule admits among the verified ones.
		admitted []string
	}{
		{"domain", Rule{Domains: []string{"example.com"}}, []string{"alice", "carol"}},
		{"user", Rule{Users: []string{"BOB@gmail.com"}}, []string{"bob"}},
		{"both", Rule{Domains: []string{"example.com"}, Users: []string{"bob@gmail.com"}}, []string{"alice", "carol", "bob"}},
		{"star", Rule{All: true}, []string{"alice", "carol", "bob", "eve", "mallory"}},
	}
	for _, m := range oidcModes {
		for _, rl := range rules {
			t.Run(m.name+"/"+rl.name, func(t *testing.T) {
				s := w.serve(t, m.name, rl.rule, auth.Deps{})
				for _, u := range opUsers {
					c := browser(t)
					resp, body := w.signIn(t, s, c, "/?from=test", u.Username)
					rec, meStatus := s.me(t, c)
					switch {
					case u.Email == "":
						expectRefusal(t, resp, body, http.StatusForbidden, "No e-mail address")
					case !u.EmailVerified:
						expectRefusal(t, resp, body, http.StatusForbidden, "not verified")
					case !contains(rl.admitted, u.Username):
						expectRefusal(t, resp, body, http.StatusForbidden, "Access denied")
					default:
						if resp.StatusCode != http.StatusOK || resp.Request.URL.RequestURI() != "/?from=test" {
							t.Errorf("%s: sign-in ended with %d at %s, want 200 at /?from=test", u.Username, resp.StatusCode, resp.Request.URL)
						}
						if rec["username"] != u.Email || rec["auth_type"] != Name || rec["email"] != u.Email || rec["provider"] != s.p.cfg.Provider {
							t.Errorf("%s: /api/me = %v", u.Username, rec)
						}
						if u.Username == "alice" && rec["name"] != "Alice Liddell" {
							t.Errorf("name = %q", rec["name"])
						}
						continue
					}
					if meStatus != http.StatusUnauthorized {
						t.Errorf("%s: refused, yet /api/me answers %d", u.Username, meStatus)
					}
				}
				s.assertLogged(t, "e-mail not admitted")
				s.assertNoSecrets(t, "secret-"+m.name)
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// expectRefusal checks a refused sign-in: the status, a page with the
// words, and that it happened at the callback.
func expectRefusal(t *testing.T, resp *http.Response, body string, status int, words string) {
	t.Helper()
	if resp.StatusCode != status || !strings.Contains(body, words) {
		t.Errorf("got %d at %s, want %d with %q; body:\n%.400s", resp.StatusCode, resp.Request.URL, status, words, body)
	}
	if resp.Request.URL.Path != CallbackPath {
		t.Errorf("refusal at %s, want %s", resp.Request.URL.Path, CallbackPath)
	}
}

func TestAuthorizationRedirect(t *testing.T) {
	w := newWorld(t)
	for _, m := range oidcModes {
		t.Run(m.name, func(t *testing.T) {
			s := w.serve(t, m.name, Rule{All: true}, auth.Deps{})
			c := noFollow(browser(t))
			resp, _ := get(t, c, s.URL+LoginPath+"?next=/api/backups%3Fx%3D1")
			if resp.StatusCode != http.StatusFound {
				t.Fatalf("status %d, want 302", resp.StatusCode)
			}
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			if got := loc.Scheme + "://" + loc.Host + loc.Path; got != w.op.AuthorizationEndpoint() {
				t.Errorf("redirect to %s, want the authorization endpoint %s", got, w.op.AuthorizationEndpoint())
			}
			q := loc.Query()
			want := map[string]string{
				"response_type":         "code",
				"client_id":             "client-" + m.name,
				"redirect_uri":          s.RedirectURL(),
				"scope":                 "openid email profile",
				"code_challenge_method": "S256",
			}
			for k, v := range want {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			if q.Get("client_secret") != "" || strings.Contains(loc.String(), "secret-") {
				t.Error("the client secret is in the authorization URL")
			}
			// The sealed cookie holds what the callback needs: the state,
			// the verifier whose S256 challenge was sent, the nonce for
			// OpenID Connect, and next.
			var ck *http.Cookie
			for _, c := range resp.Cookies() {
				if strings.HasPrefix(c.Name, flowCookiePrefix) {
					ck = c
				}
			}
			if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.MaxAge != 600 {
				t.Fatalf("sign-in cookie = %+v", ck)
			}
			f := openFlow(t, s.p, ck.Value)
			if f.State != q.Get("state") || len(f.State) < 43 {
				t.Errorf("state %q in the URL, %q in the cookie", q.Get("state"), f.State)
			}
			if got := oauth2.S256ChallengeFromVerifier(f.Verifier); q.Get("code_challenge") != got {
				t.Errorf("code_challenge %q is not S256 of the verifier (%q)", q.Get("code_challenge"), got)
			}
			if f.Next != "/api/backups?x=1" {
				t.Errorf("next = %q", f.Next)
			}
			oidc := m.name != "generic-oauth2"
			if oidc && (q.Get("nonce") == "" || q.Get("nonce") != f.Nonce) {
				t.Errorf("nonce %q in the URL, %q in the cookie", q.Get("nonce"), f.Nonce)
			}
			if !oidc && q.Has("nonce") {
				t.Error("nonce sent without OpenID Connect")
			}
			if strings.Contains(ck.Value, f.State) || strings.Contains(ck.Value, f.Verifier) {
				t.Error("the cookie shows its content")
			}
		})
	}
}

// openFlow opens a sealed sign-in cookie as the provider would.
func openFlow(t *testing.T, p *Provider, sealed string) flow {
	t.Helper()
	f, err := p.openSealed(sealed)
	if err != nil {
		t.Fatalf("opening the sign-in cookie: %v", err)
	}
	return f
}

func TestUnsafeNextStaysLocal(t *testing.T) {
	w := newWorld(t)
	s := w.serve(t, "google", Rule{All: true}, auth.Deps{})
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "/" + strings.Repeat("<", 2000)} {
		c := browser(t)
		resp, _ := w.signIn(t, s, c, next, "alice")
		if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != s.URL+"/" {
			t.Errorf("next=%q: landed on %d %s, want the catalog at /", next, resp.StatusCode, resp.Request.URL)
		}
	}
}

func TestSignOut(t *testing.T) {
	// Plain OAuth 2.0: no end_session_endpoint, so the local sign-out
	// leads to the signed-out page (the identity provider's own sign-out
	// is TestRPInitiatedLogout's).
	w := newWorld(t)
	s := w.serve(t, "generic-oauth2", Rule{Domains: []string{"example.com"}}, auth.Deps{})
	c := browser(t)
	if resp, _ := w.signIn(t, s, c, "/", "alice"); resp.StatusCode != http.StatusOK {
		t.Fatalf("sign-in: %d", resp.StatusCode)
	}
	// Signed in, the login route goes straight to next.
	again, _ := get(t, noFollow(c), s.URL+LoginPath+"?next=/api/me")
	if again.StatusCode != http.StatusSeeOther || again.Header.Get("Location") != "/api/me" {
		t.Errorf("login while signed in: %d to %q", again.StatusCode, again.Header.Get("Location"))
	}
	u, _ := url.Parse(s.URL)
	session := c.Jar.Cookies(u)
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/", nil)
	for _, ck := range session {
		req.AddCookie(ck)
	}
	user, ok, err := s.p.Identify(req)
	if err != nil || !ok || !user.HasSession() {
		t.Fatalf("Identify after sign-in: %+v %v %v", user, ok, err)
	}
	logout, _ := http.NewRequest(http.MethodPost, s.URL+"/logout", nil)
	logout.Header.Set(sessionauth.CSRFHeader, user.CSRFToken())
	resp, err := noFollow(c).Do(logout)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != SignedOutPath {
		t.Fatalf("logout: %d to %q, want 303 to %s", resp.StatusCode, resp.Header.Get("Location"), SignedOutPath)
	}
	page, body := get(t, c, s.URL+SignedOutPath)
	if page.StatusCode != http.StatusOK || !strings.Contains(body, "Signed out") {
		t.Errorf("signed-out page: %d %.300s", page.StatusCode, body)
	}
	// The old cookie no longer opens a session.
	if _, ok, _ := s.p.Identify(req); ok {
		t.Error("the session survived logout")
	}
}
