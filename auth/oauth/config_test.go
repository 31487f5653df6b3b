package oauth

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadSection parses an [authentication] section of type oauth and runs
// Load on it.
func loadSection(t *testing.T, body string) (Config, bool, []ini.Problem) {
	t.Helper()
	rep := &ini.Report{}
	f := ini.Parse("backupweb.ini", strings.NewReader("[authentication]\ntype = oauth\n"+body), rep)
	cfg, ok := Load(f.Section("authentication"))
	return cfg, ok, rep.Problems()
}

const validBase = `client_id = the-client
client_secret = s3cr3t-value
redirect_uri = https://backups.example.com/oauth/callback
authorized_domains = example.com
`

func TestLoadDefaultsPerProvider(t *testing.T) {
	tests := []struct {
		provider string
		extra    string
		want     Config
	}{
		{"google", "", Config{
			Issuer: "https://accounts.google.com",
			Scopes: []string{"openid", "email", "profile"},
		}},
		{"github", "", Config{
			AuthURL:     "https://github.com/login/oauth/authorize",
			TokenURL:    "https://github.com/login/oauth/access_token",
			UserinfoURL: "https://api.github.com/user",
			Scopes:      []string{"user:email"},
		}},
		{"gitlab", "", Config{
			BaseURL:     "https://gitlab.com",
			AuthURL:     "https://gitlab.com/oauth/authorize",
			TokenURL:    "https://gitlab.com/oauth/token",
			UserinfoURL: "https://gitlab.com/api/v4/user",
			Scopes:      []string{"read_user", "email"},
		}},
		{"GitLab", "base_url = https://git.example.com/\n", Config{
			BaseURL:     "https://git.example.com",
			AuthURL:     "https://git.example.com/oauth/authorize",
			TokenURL:    "https://git.example.com/oauth/token",
			UserinfoURL: "https://git.example.com/api/v4/user",
			Scopes:      []string{"read_user", "email"},
		}},
		{"gitlab", "base_url = https://git.example.com\ntoken_endpoint = https://proxy.example.com/token\n", Config{
			BaseURL:     "https://git.example.com",
			AuthURL:     "https://git.example.com/oauth/authorize",
			TokenURL:    "https://proxy.example.com/token",
			UserinfoURL: "https://git.example.com/api/v4/user",
			Scopes:      []string{"read_user", "email"},
		}},
		{"generic", "authorization_endpoint = https://id.example.com/authorize\ntoken_endpoint = https://id.example.com/token\nuserinfo_endpoint = https://id.example.com/userinfo\n", Config{
			AuthURL:     "https://id.example.com/authorize",
			TokenURL:    "https://id.example.com/token",
			UserinfoURL: "https://id.example.com/userinfo",
			Scopes:      []string{"openid", "email", "profile"},
		}},
		{"generic", "issuer = https://id.example.com\nscopes = openid, email\n", Config{
			Issuer: "https://id.example.com",
			Scopes: []string{"openid", "email"},
		}},
		{"google", "issuer = https://accounts.example.test\nuserinfo_endpoint = https://accounts.example.test/me\n", Config{
			Issuer:      "https://accounts.example.test",
			UserinfoURL: "https://accounts.example.test/me",
			Scopes:      []string{"openid", "email", "profile"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			cfg, ok, problems := loadSection(t, "provider = "+tt.provider+"\n"+validBase+tt.extra)
			if !ok || len(problems) > 0 {
				t.Fatalf("Load refused or warned: %v", problems)
			}
			want := tt.want
			want.Provider = strings.ToLower(tt.provider)
			want.ClientID, want.ClientSecret = "the-client", "s3cr3t-value"
			want.RedirectURL = "https://backups.example.com/oauth/callback"
			want.Rule = Rule{Domains: []string{"example.com"}}
			want.IdleTimeout, want.Lifetime = 30*time.Minute, 12*time.Hour
			if cfg.String() != want.String() || !equalConfig(cfg, want) {
				t.Errorf("Load =\n%#v\nwant\n%#v", cfg, want)
			}
		})
	}
}

func equalConfig(a, b Config) bool {
	return a.Provider == b.Provider && a.ClientID == b.ClientID && a.ClientSecret == b.ClientSecret &&
		a.RedirectURL == b.RedirectURL && a.Issuer == b.Issuer && a.BaseURL == b.BaseURL &&
		a.AuthURL == b.AuthURL && a.TokenURL == b.TokenURL && a.UserinfoURL == b.UserinfoURL &&
		slices.Equal(a.Scopes, b.Scopes) && a.Rule.All == b.Rule.All &&
		slices.Equal(a.Rule.Domains, b.Rule.Domains) && slices.Equal(a.Rule.Users, b.Rule.Users) &&
		a.IdleTimeout == b.IdleTimeout && a.Lifetime == b.Lifetime
}

func TestLoadRule(t *testing.T) {
	base := "provider = github\nclient_id = c\nclient_secret = s\nredirect_uri = https://b.example.com/oauth/callback\n"
	tests := []struct {
		name string
		keys string
		want Rule
	}{
		{"domains", "authorized_domains = Example.COM, other.org\n", Rule{Domains: []string{"example.com", "other.org"}}},
		{"users", "authorized_users = Alice@Example.com\n", Rule{Users: []string{"Alice@Example.com"}}},
		{"both", "authorized_domains = example.com\nauthorized_users = bob@gmail.com\n",
			Rule{Domains: []string{"example.com"}, Users: []string{"bob@gmail.com"}}},
		{"star", "authorized_domains = *\n", Rule{All: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok, problems := loadSection(t, base+tt.keys)
			if !ok {
				t.Fatalf("refused: %v", problems)
			}
			if cfg.Rule.All != tt.want.All || !slices.Equal(cfg.Rule.Domains, tt.want.Domains) || !slices.Equal(cfg.Rule.Users, tt.want.Users) {
				t.Errorf("Rule = %+v, want %+v", cfg.Rule, tt.want)
			}
		})
	}
}

// TestLoadErrors checks that every configuration mistake is refused with a
// message naming the key, and that the client secret is never quoted.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, body string
		key, want  string
	}{
		{"missing provider", "client_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"provider", "google, github, gitlab, generic"},
		{"unknown provider", "provider = okta\n" + validBase, "provider", `unknown provider "okta"; valid providers are google, github, gitlab, generic`},
		{"missing client_id", "provider = google\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"client_id", "missing required key"},
		{"missing client_secret", "provider = google\nclient_id = c\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"client_secret", "missing required key"},
		{"empty client_secret", "provider = google\nclient_id = c\nclient_secret =\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"client_secret", "missing required key"},
		{"missing redirect_uri", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nauthorized_domains = example.com\n",
			"redirect_uri", "missing required key"},
		{"relative redirect_uri", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = /oauth/callback\nauthorized_domains = example.com\n",
			"redirect_uri", "absolute http:// or https:// URL"},
		{"ftp redirect_uri", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = ftp://b.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"redirect_uri", "absolute http:// or https:// URL"},
		{"wrong path", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/auth/callback\nauthorized_domains = example.com\n",
			"redirect_uri", "its path must be /oauth/callback"},
		{"trailing slash", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback/\nauthorized_domains = example.com\n",
			"redirect_uri", "its path must be /oauth/callback"},
		{"encoded slash", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth%2Fcallback\nauthorized_domains = example.com\n",
			"redirect_uri", "its path must be /oauth/callback"},
		{"query", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback?x=1\nauthorized_domains = example.com\n",
			"redirect_uri", "must not have a query"},
		{"neither list", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\n",
			"authorized_domains", "set authorized_domains or authorized_users"},
		{"empty lists", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains =\nauthorized_users = ,\n",
			"authorized_domains", "set authorized_domains or authorized_users"},
		{"star with others", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = *, example.com\n",
			"authorized_domains", "must be the only entry"},
		{"wildcard domain", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = *.example.com\n",
			"authorized_domains", "wildcards are not supported"},
		{"domain with at", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = @example.com\n",
			"authorized_domains", "without \"@\""},
		{"bad user", "provider = google\nclient_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_users = x@evil.com@example.com\n",
			"authorized_users", "is not an e-mail address"},
		{"generic without endpoints", "provider = generic\n" + validBase,
			"authorization_endpoint", "provider generic needs authorization_endpoint, token_endpoint and userinfo_endpoint, or an issuer"},
		{"generic without token endpoint", "provider = generic\n" + validBase + "authorization_endpoint = https://id.example.com/a\nuserinfo_endpoint = https://id.example.com/u\n",
			"token_endpoint", "provider generic needs"},
		{"bad endpoint", "provider = github\n" + validBase + "token_endpoint = github.com/token\n",
			"token_endpoint", "absolute http:// or https:// URL"},
		{"bad issuer", "provider = google\n" + validBase + "issuer = accounts.google.com\n",
			"issuer", "absolute http:// or https:// URL"},
		{"oidc without openid scope", "provider = generic\n" + validBase + "issuer = https://id.example.com\nscopes = email, profile\n",
			"scopes", "must include openid"},
		{"bad session duration", "provider = google\n" + validBase + "session_lifetime = forever\n",
			"session_lifetime", "must be a duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadSection(t, tt.body)
			if ok {
				t.Fatalf("Load accepted the configuration; problems: %v", problems)
			}
			found := false
			for _, p := range problems {
				if strings.Contains(p.String(), "s3cr3t-value") {
					t.Errorf("problem quotes the client secret: %s", p)
				}
				if p.Severity == ini.Error && p.Key == tt.key && strings.Contains(p.Msg, tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error on key %s containing %q; problems: %v", tt.key, tt.want, problems)
			}
		})
	}
}

func TestLoadWarnings(t *testing.T) {
	tests := []struct {
		name, body string
		key, want  string
	}{
		{"http redirect", "provider = google\nclient_id = c\nclient_secret = s\nredirect_uri = http://backups.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"redirect_uri", "behind a TLS proxy write https://"},
		{"issuer ignored", "provider = github\n" + validBase + "issuer = https://github.com\n", "issuer", "not used by provider github"},
		{"base_url ignored", "provider = google\n" + validBase + "base_url = https://gitlab.example.com\n", "base_url", "only by provider gitlab"},
		{"github without user:email", "provider = github\n" + validBase + "scopes = read:user\n", "scopes", "user:email"},
		{"http endpoint", "provider = github\n" + validBase + "token_endpoint = http://github.example.com/token\n", "token_endpoint", "unencrypted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadSection(t, tt.body)
			if !ok {
				t.Fatalf("refused: %v", problems)
			}
			found := false
			for _, p := range problems {
				if p.Severity == ini.Warning && p.Key == tt.key && strings.Contains(p.Msg, tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no warning on key %s containing %q; problems: %v", tt.key, tt.want, problems)
			}
		})
	}
	// Loopback http is how a developer runs it: no warning.
	_, ok, problems := loadSection(t, "provider = google\nclient_id = c\nclient_secret = s\nredirect_uri = http://127.0.0.1:8080/oauth/callback\nauthorized_domains = *\n")
	if !ok || len(problems) != 0 {
		t.Errorf("loopback http: ok=%v problems=%v", ok, problems)
	}
}

// TestValidate: the rules of a Config are one method, which New applies
// to a Config made in code; each problem names its key and none shows the
// client secret.
func TestValidate(t *testing.T) {
	good := Config{Provider: "github", ClientID: "id", ClientSecret: "the-secret", RedirectURL: "https://b.example.com" + CallbackPath,
		Rule: Rule{Domains: []string{"example.com"}}}
	tests := []struct {
		name string
		edit func(*Config)
		want string // "" when valid
	}{
		{"valid", func(*Config) {}, ""},
		{"unknown provider", func(c *Config) { c.Provider = "myspace" }, "provider: unknown provider"},
		{"no client id", func(c *Config) { c.ClientID = "" }, "client_id: missing required key"},
		{"no secret", func(c *Config) { c.ClientSecret = "" }, "client_secret: missing required key"},
		{"redirect elsewhere", func(c *Config) { c.RedirectURL = "https://b.example.com/callback" }, "redirect_uri: its path must be " + CallbackPath},
		{"relative endpoint", func(c *Config) { c.TokenURL = "/token" }, "token_endpoint: must be an absolute"},
		{"nobody admitted", func(c *Config) { c.Rule = Rule{} }, "authorized_domains: set authorized_domains or authorized_users"},
		{"malformed user", func(c *Config) { c.Rule = Rule{Users: []string{"not-an-address"}} }, "authorized_users:"},
		{"generic without endpoints", func(c *Config) { c.Provider = "generic" }, "authorization_endpoint: missing required key"},
		{"OpenID Connect without openid", func(c *Config) { c.Provider, c.Scopes = "google", []string{"email"} }, "scopes: must include openid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "the-secret") {
				t.Errorf("error %q shows the client secret", err)
			}
			if _, nerr := New(c, auth.Deps{StateDir: t.TempDir(), SecretKey: []byte(strings.Repeat("k", 32))}); nerr == nil || !strings.Contains(nerr.Error(), tt.want) {
				t.Errorf("New = %v, want the same refusal", nerr)
			}
		})
	}
}

// TestSignInRefusalsFollowTheOneRule: a refused callback is the styled
// page for a browser and {"error": ...} for a client asking for JSON.
func TestSignInRefusalsFollowTheOneRule(t *testing.T) {
	p, err := New(Config{Provider: "github", ClientID: "id", ClientSecret: "s", RedirectURL: "https://b.example.com" + CallbackPath,
		Rule: Rule{All: true}}, auth.Deps{StateDir: t.TempDir(), SecretKey: []byte(strings.Repeat("k", 32))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	for accept, want := range map[string]string{"text/html": "<html", "application/json": `{"error":`} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", CallbackPath+"?state=nope&code=x", nil)
		req.Header.Set("Accept", accept)
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("Accept %s: %d %.100q, want 400 with %q", accept, rec.Code, rec.Body.String(), want)
		}
	}
}
