package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/auth"
)

const (
	fakeCode        = "the-authorization-code-123"
	fakeAccessToken = "the-access-token-456"
)

// fakeAPI answers as GitHub's and GitLab's OAuth endpoints and REST APIs
// do, with the response shapes their documentation gives: the
// authorization endpoint consents at once, the token endpoint checks the
// client credentials and the PKCE verifier, and the user endpoints answer
// what the test sets.
type fakeAPI struct {
	srv *httptest.Server
	URL string

	mu sync.Mutex
	// Set by tests.
	tokenAnswer func(w http.ResponseWriter, r *http.Request) // default: JSON with fakeAccessToken
	user        string                                       // body of the user endpoint
	emails      string                                       // body of GitHub's emails endpoint
	emailsCode  int                                          // its status; 0 means 200
	// routes answer further GET paths (the groups listings) once the
	// access token is checked; keyed by path.
	routes map[string]http.HandlerFunc
	// Recorded.
	authQuery url.Values
	tokenForm url.Values
	apiAuth   []string
}

func newFakeAPI(t *testing.T, secret string) *fakeAPI {
	f := &fakeAPI{}
	mux := http.NewServeMux()
	authorize := func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		f.authQuery = q
		f.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {fakeCode}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	}
	token := func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f.mu.Lock()
		f.tokenForm = r.PostForm
		challenge := f.authQuery.Get("code_challenge")
		answer := f.tokenAnswer
		f.mu.Unlock()
		switch {
		case r.PostForm.Get("client_secret") != secret || r.PostForm.Get("code") != fakeCode:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
		case oauth2.S256ChallengeFromVerifier(r.PostForm.Get("code_verifier")) != challenge:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"PKCE verification failed"}`)
		case answer != nil:
			answer(w, r)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","scope":"user:email"}`, fakeAccessToken)
		}
	}
	api := func(body func() (string, int)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			f.apiAuth = append(f.apiAuth, r.Header.Get("Authorization"))
			f.mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer "+fakeAccessToken {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"message":"Requires authentication"}`)
				return
			}
			b, code := body()
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			if code != 0 {
				w.WriteHeader(code)
			}
			fmt.Fprint(w, b)
		}
	}
	user := func() (string, int) { f.mu.Lock(); defer f.mu.Unlock(); return f.user, 0 }
	emails := func() (string, int) { f.mu.Lock(); defer f.mu.Unlock(); return f.emails, f.emailsCode }
	// GitHub's paths.
	mux.HandleFunc("GET /login/oauth/authorize", authorize)
	mux.HandleFunc("POST /login/oauth/access_token", token)
	mux.HandleFunc("GET /user", api(user))
	mux.HandleFunc("GET /user/emails", api(emails))
	// A self-hosted GitLab under /gitlab.
	mux.HandleFunc("GET /gitlab/oauth/authorize", authorize)
	mux.HandleFunc("POST /gitlab/oauth/token", token)
	mux.HandleFunc("GET /gitlab/api/v4/user", api(user))
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		h := f.routes[r.URL.Path]
		f.apiAuth = append(f.apiAuth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		switch {
		case h == nil:
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer "+fakeAccessToken:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Requires authentication"}`)
		default:
			h(w, r)
		}
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

func (f *fakeAPI) set(fn func(f *fakeAPI)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeAPI) recorded() (auth, token url.Values) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authQuery, f.tokenForm
}

func githubConfig(f *fakeAPI, rule Rule) Config {
	return Config{Provider: "github", ClientID: "gh-client", ClientSecret: "gh-secret", Rule: rule,
		AuthURL: f.URL + "/login/oauth/authorize", TokenURL: f.URL + "/login/oauth/access_token", UserinfoURL: f.URL + "/user"}
}

const githubUser = `{"login":"octocat","id":1,"name":"The Octocat","email":null,"type":"User"}`

func githubEmails(entries ...string) string { return "[" + strings.Join(entries, ",") + "]" }

func ghEmail(addr string, primary, verified bool) string {
	return fmt.Sprintf(`{"email":%q,"primary":%t,"verified":%t,"visibility":"private"}`, addr, primary, verified)
}

func formToken(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
	fmt.Fprintf(w, "access_token=%s&scope=user%%3Aemail&token_type=bearer", fakeAccessToken)
}

func TestGitHub(t *testing.T) {
	f := newFakeAPI(t, "gh-secret")
	s := newService(t)
	tests := []struct {
		name   string
		setup  func(f *fakeAPI)
		env    auth.Deps
		want   int
		words  string
		logged string
	}{
		{"primary verified, no public e-mail, JSON token", func(f *fakeAPI) {
			f.user, f.emails = githubUser, githubEmails(ghEmail("old@other.org", false, true), ghEmail("octo@example.com", true, true))
		}, auth.Deps{}, http.StatusOK, "", ""},
		{"form-encoded token answer", func(f *fakeAPI) {
			f.tokenAnswer = formToken
			f.user, f.emails = githubUser, githubEmails(ghEmail("octo@example.com", true, true))
		}, auth.Deps{}, http.StatusOK, "", ""},
		{"primary not verified, a secondary verified", func(f *fakeAPI) {
			f.user, f.emails = githubUser, githubEmails(ghEmail("octo@example.com", true, false), ghEmail("second@example.com", false, true))
		}, auth.Deps{}, http.StatusForbidden, "not verified", "e-mail not verified"},
		{"no primary address", func(f *fakeAPI) {
			f.user, f.emails = githubUser, githubEmails(ghEmail("octo@example.com", false, true))
		}, auth.Deps{}, http.StatusForbidden, "No e-mail address", "no e-mail"},
		{"no addresses at all", func(f *fakeAPI) {
			f.user, f.emails = githubUser, "[]"
		}, auth.Deps{}, http.StatusForbidden, "No e-mail address", "no e-mail"},
		{"other domain", func(f *fakeAPI) {
			f.user, f.emails = githubUser, githubEmails(ghEmail("octo@evil-example.com", true, true))
		}, auth.Deps{}, http.StatusForbidden, "Access denied", "e-mail not admitted"},
		{"emails endpoint refused (scope missing)", func(f *fakeAPI) {
			f.user, f.emails, f.emailsCode = githubUser, `{"message":"Not Found"}`, http.StatusNotFound
		}, auth.Deps{}, http.StatusBadGateway, "Identity provider unavailable", "user:email"},
		{"GitHub's error in a 200 form answer", func(f *fakeAPI) {
			f.tokenAnswer = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
				fmt.Fprint(w, "error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.")
			}
		}, auth.Deps{}, http.StatusBadGateway, "Identity provider unavailable", "error=bad_verification_code"},
		{"token endpoint fails", func(f *fakeAPI) {
			f.tokenAnswer = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, "<html>oops access_token=leaked-token-in-error-page</html>")
			}
		}, auth.Deps{}, http.StatusBadGateway, "Identity provider unavailable", "500 Internal Server Error"},
		{"token answer is garbage", func(f *fakeAPI) {
			f.tokenAnswer = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"access_token": [garbage`)
			}
		}, auth.Deps{}, http.StatusBadGateway, "Identity provider unavailable", "cannot parse json"},
		{"user answer is garbage", func(f *fakeAPI) {
			f.user, f.emails = `{"login": 17`, "[]"
		}, auth.Deps{}, http.StatusBadGateway, "Identity provider unavailable", "malformed JSON"},
		{"emails answer has the wrong shape", func(f *fakeAPI) {
			f.user, f.emails = githubUser, `{"email":"octo@example.com"}`
		}, auth.Deps{}, http.StatusBadGateway, "Identity provider unavailable", "malformed JSON"},
		{"token endpoint hangs", func(f *fakeAPI) {
			f.tokenAnswer = func(w http.ResponseWriter, r *http.Request) {
				// Hold the answer until the client gives up.
				<-r.Context().Done()
			}
		}, auth.Deps{HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}}, http.StatusBadGateway, "Identity provider unavailable", "redeeming the authorization code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.set(func(f *fakeAPI) {
				f.tokenAnswer, f.user, f.emails, f.emailsCode, f.routes = nil, "", "", 0, nil
				tt.setup(f)
			})
			s.use(githubConfig(f, Rule{Domains: []string{"example.com"}}), tt.env)
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath+"?next=/api/backups")
			if resp.StatusCode != tt.want || !strings.Contains(body, tt.words) {
				t.Fatalf("got %d at %s, want %d with %q; %.300s", resp.StatusCode, resp.Request.URL, tt.want, tt.words, body)
			}
			authQ, tokenF := f.recorded()
			if authQ.Get("scope") != "user:email" || authQ.Get("code_challenge_method") != "S256" || authQ.Has("nonce") {
				t.Errorf("authorization request: %v", authQ)
			}
			if tokenF.Get("redirect_uri") != s.RedirectURL() || tokenF.Get("grant_type") != "authorization_code" || tokenF.Get("client_id") != "gh-client" {
				t.Errorf("token request: %v", tokenF)
			}
			if tt.want == http.StatusOK {
				rec, _ := s.me(t, c)
				if rec["username"] != "octo@example.com" || rec["name"] != "The Octocat" || rec["provider"] != "github" {
					t.Errorf("/api/me = %v", rec)
				}
				if resp.Request.URL.Path != "/api/backups" {
					t.Errorf("landed on %s", resp.Request.URL)
				}
			} else if tt.want == http.StatusBadGateway {
				s.assertOutage(t, tt.logged)
			} else {
				s.assertLogged(t, tt.logged)
			}
			s.assertNoSecrets(t, "gh-secret", fakeCode, fakeAccessToken, "leaked-token-in-error-page")
		})
	}
}

func TestGitLab(t *testing.T) {
	f := newFakeAPI(t, "gl-secret")
	s := newService(t)
	gitlabUser := func(email, confirmed string) string {
		u := map[string]any{"id": 42, "username": "tanuki", "name": "Tanuki", "state": "active", "email": email}
		if confirmed != "absent" {
			if confirmed == "null" {
				u["confirmed_at"] = nil
			} else {
				u["confirmed_at"] = confirmed
			}
		}
		b, _ := json.Marshal(u)
		return string(b)
	}
	tests := []struct {
		name        string
		user        string
		want        int
		words       string
		tokenAnswer func(http.ResponseWriter, *http.Request)
	}{
		{"confirmed", gitlabUser("tanuki@example.com", "2024-01-02T03:04:05Z"), http.StatusOK, "", nil},
		{"confirmed, form-encoded token", gitlabUser("tanuki@example.com", "2024-01-02T03:04:05Z"), http.StatusOK, "", formToken},
		{"confirmed_at null", gitlabUser("tanuki@example.com", "null"), http.StatusForbidden, "not verified", nil},
		{"confirmed_at absent", gitlabUser("tanuki@example.com", "absent"), http.StatusForbidden, "not verified", nil},
		{"no e-mail", gitlabUser("", "2024-01-02T03:04:05Z"), http.StatusForbidden, "No e-mail address", nil},
		{"look-alike domain", gitlabUser("tanuki@example.com.evil.org", "2024-01-02T03:04:05Z"), http.StatusForbidden, "Access denied", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.set(func(f *fakeAPI) { f.user, f.tokenAnswer = tt.user, tt.tokenAnswer })
			s.use(Config{Provider: "gitlab", ClientID: "gl-client", ClientSecret: "gl-secret",
				BaseURL: f.URL + "/gitlab", Rule: Rule{Domains: []string{"example.com"}}}, auth.Deps{})
			c := browser(t)
			resp, body := get(t, c, s.URL+LoginPath)
			if resp.StatusCode != tt.want || !strings.Contains(body, tt.words) {
				t.Fatalf("got %d at %s, want %d with %q; %.300s", resp.StatusCode, resp.Request.URL, tt.want, tt.words, body)
			}
			authQ, tokenF := f.recorded()
			if authQ.Get("scope") != "read_user email" || authQ.Get("client_id") != "gl-client" || authQ.Get("code_challenge_method") != "S256" {
				t.Errorf("authorization request: %v", authQ)
			}
			if tokenF.Get("code_verifier") == "" {
				t.Errorf("token request without PKCE verifier: %v", tokenF)
			}
			if tt.want == http.StatusOK {
				if rec, _ := s.me(t, c); rec["username"] != "tanuki@example.com" || rec["name"] != "Tanuki" || rec["provider"] != "gitlab" {
					t.Errorf("/api/me = %v", rec)
				}
			}
			s.assertNoSecrets(t, "gl-secret", fakeCode, fakeAccessToken)
		})
	}
}

func TestUnreachableProvider(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	f := newFakeAPI(t, "gh-secret")
	s := newService(t)
	cfg := githubConfig(f, Rule{All: true})
	cfg.TokenURL = deadURL + "/token"
	s.use(cfg, auth.Deps{})
	resp, body := get(t, browser(t), s.URL+LoginPath)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "could not be reached") {
		t.Fatalf("got %d; %.300s", resp.StatusCode, body)
	}
	s.assertOutage(t, "redeeming the authorization code")
}
