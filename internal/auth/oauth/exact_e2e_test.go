package oauth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// claimsUsers are accounts of the real test provider with claims of their
// own whose names differ from the standard ones only in letter case, as a
// user profile attribute or a property mapping can add them.
var claimsUsers = []oidctest.User{
	{Username: "eve", Email: "eve@evil.example", EmailVerified: true, Claims: map[string]any{"Email": "alice@example.com", "hd": "example.com"}},
	{Username: "shouty", Claims: map[string]any{"EMAIL": "alice@example.com", "hd": "example.com"}},
	{Username: "ulla", Email: "ulla@example.com", EmailVerified: false, Claims: map[string]any{"Email_verified": true, "hd": "example.com"}},
	{Username: "gus", Email: "gus@example.com", EmailVerified: true, Claims: map[string]any{"HD": "example.com"}},
	{Username: "eva", Email: "eva@example.com", EmailVerified: true, Claims: map[string]any{
		"Email": "alice@example.com", "EMAIL": "alice@example.com", "Email_verified": true, "hd": "example.com", "HD": "evil.example"}},
}

// TestClaimsReadExactly signs in, through the real OpenID provider in
// each mode (Google's, claims in the ID token; generic with discovery,
// claims from the user-information endpoint; generic plain OAuth 2.0),
// accounts whose claims include Email, EMAIL, Email_verified and HD.
// None of them is read: no one becomes alice@example.com, an unverified
// address stays unverified, HD is no hosted domain; the account whose
// standard claims are right is admitted as itself.
func TestClaimsReadExactly(t *testing.T) {
	w := newWorldOf(t, claimsUsers)
	for _, m := range oidcModes {
		s := w.serve(t, m.name, Rule{Domains: []string{"example.com"}}, auth.Deps{})
		tests := []struct {
			user   string
			status int
			words  string
			logged string
		}{
			{"eve", http.StatusForbidden, "Access denied", "e-mail not admitted"},
			{"shouty", http.StatusForbidden, "No e-mail address", "no e-mail"},
			{"ulla", http.StatusForbidden, "not verified", "e-mail not verified"},
			{"eva", http.StatusOK, "", ""},
			{"gus", http.StatusOK, "", ""},
		}
		for _, tt := range tests {
			if m.name == "google" && tt.user == "gus" {
				// Google's hosted-domain rule: HD is not hd, so gus has
				// no hosted domain and example.com does not admit him.
				tt.status, tt.words, tt.logged = http.StatusForbidden, "Access denied", "hosted domain (hd) none"
			}
			t.Run(m.name+"/"+tt.user, func(t *testing.T) {
				c := browser(t)
				resp, body := w.signIn(t, s, c, "/", tt.user)
				rec, st := s.me(t, c)
				if tt.status != http.StatusOK {
					expectRefusal(t, resp, body, tt.status, tt.words)
					if st != http.StatusUnauthorized {
						t.Errorf("signed in as %q", rec["username"])
					}
					s.assertLogged(t, tt.logged, "provider="+s.p.cfg.Provider)
					return
				}
				if resp.StatusCode != http.StatusOK || rec["username"] != tt.user+"@example.com" {
					t.Errorf("got %d, signed in as %q (/api/me %d), want %s@example.com", resp.StatusCode, rec["username"], st, tt.user)
				}
			})
		}
	}
}

// genericAnswer configures a generic plain OAuth 2.0 provider on f whose
// user-information endpoint answers body.
func genericAnswer(f *fakeAPI, body string) Config {
	f.set(func(f *fakeAPI) {
		f.tokenAnswer = nil
		f.routes = map[string]http.HandlerFunc{"/userinfo": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}}
	})
	return Config{Provider: "generic", ClientID: "g-client", ClientSecret: "g-secret", Rule: Rule{Domains: []string{"example.com"}},
		AuthURL: f.URL + "/login/oauth/authorize", TokenURL: f.URL + "/login/oauth/access_token", UserinfoURL: f.URL + "/userinfo"}
}

// answerCase is one answer of a provider's API and what the sign-in
// must come to: a status, and the member named by the refusal line of an
// ambiguous answer.
type answerCase struct {
	name   string
	setup  func(f *fakeAPI) Config
	status int
	member string // the member an ambiguous answer's line names
	logged string // a refusal's reason otherwise
}

// TestAnswersReadExactly: the plain OAuth 2.0 user-information answer,
// GitHub's user, e-mails and organisations and GitLab's user, each with a
// letter-case variant (which changes nothing read) and with a member
// given twice (502, a refusal line naming the provider and the member),
// and the right answer, admitted.
func TestAnswersReadExactly(t *testing.T) {
	f := newFakeAPI(t, "g-secret")
	gh := func(user, emails string) func(f *fakeAPI) Config {
		return func(f *fakeAPI) Config {
			f.set(func(f *fakeAPI) { f.tokenAnswer, f.user, f.emails, f.routes = nil, user, emails, nil })
			cfg := githubConfig(f, Rule{Domains: []string{"example.com"}})
			cfg.ClientSecret = "g-secret"
			return cfg
		}
	}
	orgs := func(list string) func(f *fakeAPI) Config {
		return func(f *fakeAPI) Config {
			cfg := gh(githubUser, githubEmails(ghEmail("alice@example.com", true, true)))(f)
			f.set(func(f *fakeAPI) {
				json := func(body string) http.HandlerFunc {
					return func(w http.ResponseWriter, r *http.Request) {
						w.Header().Set("X-OAuth-Scopes", "read:org, user:email")
						fmt.Fprint(w, body)
					}
				}
				f.routes = map[string]http.HandlerFunc{"/user/orgs": json(list), "/user/teams": json("[]")}
			})
			cfg.Rule, cfg.Scopes = Rule{Orgs: []string{"acme"}}, []string{"user:email", "read:org"}
			return cfg
		}
	}
	gl := func(user string) func(f *fakeAPI) Config {
		return func(f *fakeAPI) Config {
			f.set(func(f *fakeAPI) { f.tokenAnswer, f.user, f.routes = nil, user, nil })
			return Config{Provider: "gitlab", ClientID: "gl-client", ClientSecret: "g-secret",
				BaseURL: f.URL + "/gitlab", Rule: Rule{Domains: []string{"example.com"}}}
		}
	}
	generic := func(body string) func(f *fakeAPI) Config {
		return func(f *fakeAPI) Config { return genericAnswer(f, body) }
	}
	const confirmed = `"confirmed_at":"2024-01-02T03:04:05Z"`
	tests := []answerCase{
		// Provider generic, plain OAuth 2.0: the answers.
		{"generic/right answer", generic(`{"sub":"1","email":"alice@example.com","email_verified":true}`), http.StatusOK, "", ""},
		{"generic/email_verified as the string true", generic(`{"sub":"1","email":"alice@example.com","email_verified":"true"}`), http.StatusOK, "", ""},
		{"generic/Email beside email", generic(`{"email":"eve@evil.com","email_verified":true,"Email":"alice@example.com"}`), http.StatusForbidden, "", "e-mail not admitted"},
		{"generic/EMAIL alone", generic(`{"EMAIL":"alice@example.com","email_verified":true}`), http.StatusForbidden, "", "no e-mail"},
		{"generic/Email_Verified beside email_verified", generic(`{"email":"alice@example.com","email_verified":false,"Email_Verified":true}`), http.StatusForbidden, "", "e-mail not verified"},
		{"generic/EMAIL_VERIFIED alone", generic(`{"email":"alice@example.com","EMAIL_VERIFIED":"true"}`), http.StatusOK, "", ""},
		{"generic/email twice", generic(`{"email":"eve@evil.com","email_verified":true,"email":"alice@example.com"}`), http.StatusBadGateway, "email", ""},
		{"generic/email_verified twice", generic(`{"email":"alice@example.com","email_verified":false,"email_verified":true}`), http.StatusBadGateway, "email_verified", ""},
		{"generic/a nested member twice", generic(`{"email":"alice@example.com","email_verified":true,"address":{"country":"x","country":"y"}}`), http.StatusBadGateway, "country", ""},
		{"generic/email twice, the second escaped", generic(`{"email":"alice@example.com","email_verified":true,"\u0065mail":"eve@evil.com"}`), http.StatusBadGateway, "email", ""},
		// GitHub: the user, the e-mail addresses, the organisations.
		{"github/right answer", gh(githubUser, githubEmails(ghEmail("alice@example.com", true, true))), http.StatusOK, "", ""},
		{"github/Primary beside primary", gh(githubUser, `[{"email":"alice@example.com","primary":false,"Primary":true,"verified":true}]`), http.StatusForbidden, "", "no e-mail"},
		{"github/Verified beside verified", gh(githubUser, `[{"email":"alice@example.com","primary":true,"verified":false,"Verified":true}]`), http.StatusForbidden, "", "e-mail not verified"},
		{"github/EMAIL beside email", gh(githubUser, `[{"email":"eve@evil.com","EMAIL":"alice@example.com","primary":true,"verified":true}]`), http.StatusForbidden, "", "e-mail not admitted"},
		{"github/email twice in an address", gh(githubUser, `[{"email":"eve@evil.com","primary":true,"verified":true,"email":"alice@example.com"}]`), http.StatusBadGateway, "email", ""},
		{"github/primary twice", gh(githubUser, `[{"email":"alice@example.com","primary":false,"verified":true,"primary":true}]`), http.StatusBadGateway, "primary", ""},
		{"github/login twice in the user", gh(`{"login":"octocat","id":1,"login":"other"}`, githubEmails(ghEmail("alice@example.com", true, true))), http.StatusBadGateway, "login", ""},
		{"github/organisations, right answer", orgs(`[{"login":"acme"}]`), http.StatusOK, "", ""},
		{"github/organisation Login beside login", orgs(`[{"login":"other","Login":"acme"}]`), http.StatusForbidden, "", "e-mail not admitted"},
		{"github/organisation login twice", orgs(`[{"login":"other","login":"acme"}]`), http.StatusBadGateway, "login", ""},
		// GitLab: the user.
		{"gitlab/right answer", gl(`{"id":42,"username":"tanuki","email":"alice@example.com",` + confirmed + `}`), http.StatusOK, "", ""},
		{"gitlab/Confirmed_At beside confirmed_at", gl(`{"id":42,"email":"alice@example.com","confirmed_at":null,"Confirmed_At":"2024-01-02T03:04:05Z"}`), http.StatusForbidden, "", "e-mail not verified"},
		{"gitlab/Email beside email", gl(`{"id":42,"email":"eve@evil.com","Email":"alice@example.com",` + confirmed + `}`), http.StatusForbidden, "", "e-mail not admitted"},
		{"gitlab/email twice", gl(`{"id":42,"email":"eve@evil.com",` + confirmed + `,"email":"alice@example.com"}`), http.StatusBadGateway, "email", ""},
		{"gitlab/confirmed_at twice", gl(`{"id":42,"email":"alice@example.com","confirmed_at":null,"confirmed_at":"2024-01-02T03:04:05Z"}`), http.StatusBadGateway, "confirmed_at", ""},
	}
	s := newService(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.use(tt.setup(f), auth.Deps{})
			logged := len(s.logs.String())
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath+"?next=/api/backups")
			rec, st := s.me(t, c)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d at %s, want %d; %.300s", resp.StatusCode, resp.Request.URL, tt.status, body)
			}
			if tt.status == http.StatusOK {
				if rec["username"] != "alice@example.com" {
					t.Errorf("signed in as %q, want alice@example.com", rec["username"])
				}
				return
			}
			if st != http.StatusUnauthorized {
				t.Errorf("signed in as %q despite the refusal", rec["username"])
			}
			lines := s.logs.String()[logged:]
			if tt.member != "" {
				s.assertLogged(t, "auth refused", "provider="+s.p.cfg.Provider, `reason="ambiguous identity provider answer"`, "member="+tt.member)
				if !strings.Contains(body, "Identity provider unavailable") || strings.Contains(lines, "identity provider could not be used") {
					t.Errorf("page %.200s; log:\n%s", body, lines)
				}
				return
			}
			s.assertLogged(t, tt.logged, "provider="+s.p.cfg.Provider)
		})
	}
	s.assertNoSecrets(t, "g-secret", fakeCode, fakeAccessToken)
}

// signedOP is an OpenID provider written by hand: its discovery document,
// key set and ID token claims are bytes a test chooses, the tokens signed
// with its own RSA key, so that a document can name a member twice, which
// no JSON encoder writes (the test kit's provider cannot).
type signedOP struct {
	URL string
	key *rsa.PrivateKey

	mu        sync.Mutex
	discovery string                         // the document; "%[1]s" is the URL
	keys      string                         // the key set; "%[1]s" is n, "%[2]s" e
	claims    func(iss, nonce string) string // the ID token's payload
	userinfo  string
	nonce     string
}

// Documents of signedOP as a provider writes them.
const (
	opDiscovery = `{"issuer":"%[1]s","authorization_endpoint":"%[1]s/authorize","token_endpoint":"%[1]s/token",` +
		`"userinfo_endpoint":"%[1]s/userinfo","jwks_uri":"%[1]s/keys","id_token_signing_alg_values_supported":["RS256"]}`
	opKeys = `{"keys":[{"kty":"RSA","kid":"k1","alg":"RS256","use":"sig","n":"%[1]s","e":"%[2]s"}]}`
)

// opClaims are an ID token's claims with extra members appended.
func opClaims(extra string) func(iss, nonce string) string {
	return func(iss, nonce string) string {
		now := time.Now().Unix()
		return fmt.Sprintf(`{"iss":%q,"sub":"s-1","aud":"op-client","exp":%d,"iat":%d,"nonce":%q,"email_verified":true%s}`, iss, now+3600, now, nonce, extra)
	}
}

func newSignedOP(t *testing.T) *signedOP {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	op := &signedOP{key: key, discovery: opDiscovery, keys: opKeys, claims: opClaims(`,"email":"alice@example.com"`)}
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		op.mu.Lock()
		defer op.mu.Unlock()
		answer(w, fmt.Sprintf(op.discovery, op.URL))
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		op.mu.Lock()
		defer op.mu.Unlock()
		b64 := base64.RawURLEncoding.EncodeToString
		answer(w, fmt.Sprintf(op.keys, b64(key.N.Bytes()), b64(big.NewInt(int64(key.E)).Bytes())))
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		op.mu.Lock()
		op.nonce = q.Get("nonce")
		op.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"op-code"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		op.mu.Lock()
		defer op.mu.Unlock()
		answer(w, fmt.Sprintf(`{"access_token":"op-access","token_type":"Bearer","expires_in":60,"id_token":%q}`, op.sign(op.claims(op.URL, op.nonce))))
	})
	mux.HandleFunc("GET /userinfo", func(w http.ResponseWriter, r *http.Request) {
		op.mu.Lock()
		defer op.mu.Unlock()
		answer(w, op.userinfo)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	op.URL = srv.URL
	return op
}

// sign returns a JWS of payload signed with RS256 by the provider's key.
func (op *signedOP) sign(payload string) string {
	b64 := base64.RawURLEncoding.EncodeToString
	input := b64([]byte(`{"alg":"RS256","kid":"k1","typ":"JWT"}`)) + "." + b64([]byte(payload))
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, op.key, crypto.SHA256, sum[:])
	if err != nil {
		panic(err)
	}
	return input + "." + b64(sig)
}

// TestOpenIDDocumentsReadExactly: ID token claims, the user-information
// answer, the discovery document and the key set of an OpenID provider,
// signed as the provider's own, each with a member given twice or a
// letter-case variant of a member go-oidc reads: 502 and a refusal line
// naming the provider and the member; a variant of a claim only
// backupweb reads changes nothing; the right documents admit.
func TestOpenIDDocumentsReadExactly(t *testing.T) {
	op := newSignedOP(t)
	s := newService(t)
	tests := []struct {
		name      string
		discovery string
		keys      string
		claims    string // members after email_verified
		userinfo  string
		status    int
		member    string
		logged    string
	}{
		{"right documents", "", "", `,"email":"alice@example.com"`, "", http.StatusOK, "", ""},
		{"email twice in the ID token", "", "", `,"email":"eve@evil.example","email":"alice@example.com"`, "", http.StatusBadGateway, "email", ""},
		{"a nested claim twice", "", "", `,"email":"alice@example.com","address":{"country":"x","country":"y"}`, "", http.StatusBadGateway, "country", ""},
		{"Sub beside sub", "", "", `,"email":"alice@example.com","Sub":"s-2"`, "", http.StatusBadGateway, "Sub", ""},
		{"NONCE beside nonce", "", "", `,"email":"alice@example.com","NONCE":"x"`, "", http.StatusBadGateway, "NONCE", ""},
		{"long-s variant of sub", "", "", `,"email":"alice@example.com","\u017fub":"s-2"`, "", http.StatusBadGateway, "\u017fub", ""},
		{"Email beside email", "", "", `,"email":"eve@evil.example","Email":"alice@example.com"`, "", http.StatusForbidden, "", "e-mail not admitted"},
		{"HD and Email_verified are not read", "", "", `,"email":"alice@example.com","Email_verified":false,"HD":"evil.example"`, "", http.StatusOK, "", ""},
		{"email twice in the user information", "", "", "", `{"sub":"s-1","email":"eve@evil.example","email":"alice@example.com"}`, http.StatusBadGateway, "email", ""},
		{"EMAIL in the user information", "", "", "", `{"sub":"s-1","EMAIL":"alice@example.com"}`, http.StatusForbidden, "", "no e-mail"},
		{"issuer twice in discovery", strings.Replace(opDiscovery, `{"issuer":"%[1]s"`, `{"issuer":"%[1]s","issuer":"https://evil.example"`, 1), "", "", "", http.StatusBadGateway, "issuer", ""},
		{"kid twice in the key set", "", strings.Replace(opKeys, `"kid":"k1"`, `"kid":"k1","kid":"k2"`, 1), `,"email":"alice@example.com"`, "", http.StatusBadGateway, "kid", ""},
		{"N beside n in the key set", "", strings.Replace(opKeys, `"n":"%[1]s"`, `"n":"%[1]s","N":"AQAB"`, 1), `,"email":"alice@example.com"`, "", http.StatusBadGateway, "N", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op.mu.Lock()
			op.discovery, op.keys, op.claims, op.userinfo = cmpOr(tt.discovery, opDiscovery), cmpOr(tt.keys, opKeys), opClaims(tt.claims), cmpOr(tt.userinfo, `{"sub":"s-1"}`)
			op.mu.Unlock()
			s.use(Config{Provider: "generic", Issuer: op.URL, ClientID: "op-client", ClientSecret: "op-secret", Rule: Rule{Domains: []string{"example.com"}}}, auth.Deps{})
			logged := len(s.logs.String())
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath+"?next=/api/backups")
			rec, st := s.me(t, c)
			if resp.StatusCode != tt.status {
				t.Fatalf("got %d at %s, want %d; %.300s\n%s", resp.StatusCode, resp.Request.URL, tt.status, body, s.logs.String()[logged:])
			}
			switch {
			case tt.status == http.StatusOK:
				if rec["username"] != "alice@example.com" {
					t.Errorf("signed in as %q, want alice@example.com", rec["username"])
				}
			case st != http.StatusUnauthorized:
				t.Errorf("signed in as %q despite the refusal", rec["username"])
			case tt.member != "":
				s.assertLogged(t, "auth refused", "provider=generic", `reason="ambiguous identity provider answer"`, "member="+tt.member)
			default:
				s.assertLogged(t, tt.logged, "provider=generic")
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
