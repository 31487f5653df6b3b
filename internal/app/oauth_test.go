package app

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/oauth"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadOAuthSection parses an [authentication] section of type oauth and
// runs loadOAuth on it.
func loadOAuthSection(t *testing.T, body string) (oauth.Config, bool, []ini.Problem) {
	t.Helper()
	return loadTypeSection(t, "oauth", body, loadOAuth)
}

const oauthBase = `client_id = the-client
client_secret = s3cr3t-value
redirect_uri = https://backups.example.com/oauth/callback
authorized_domains = example.com
`

func TestLoadOAuthDefaultsPerProvider(t *testing.T) {
	tests := []struct {
		provider string
		extra    string
		want     oauth.Config
	}{
		{"google", "", oauth.Config{
			Issuer: "https://accounts.google.com",
			Scopes: []string{"openid", "email", "profile"},
		}},
		{"github", "", oauth.Config{
			AuthURL:     "https://github.com/login/oauth/authorize",
			TokenURL:    "https://github.com/login/oauth/access_token",
			UserinfoURL: "https://api.github.com/user",
			Scopes:      []string{"user:email"},
		}},
		{"gitlab", "", oauth.Config{
			BaseURL:     "https://gitlab.com",
			AuthURL:     "https://gitlab.com/oauth/authorize",
			TokenURL:    "https://gitlab.com/oauth/token",
			UserinfoURL: "https://gitlab.com/api/v4/user",
			Scopes:      []string{"read_user", "email"},
		}},
		{"GitLab", "base_url = https://git.example.com/\n", oauth.Config{
			BaseURL:     "https://git.example.com",
			AuthURL:     "https://git.example.com/oauth/authorize",
			TokenURL:    "https://git.example.com/oauth/token",
			UserinfoURL: "https://git.example.com/api/v4/user",
			Scopes:      []string{"read_user", "email"},
		}},
		{"gitlab", "base_url = https://git.example.com\ntoken_endpoint = https://proxy.example.com/token\n", oauth.Config{
			BaseURL:     "https://git.example.com",
			AuthURL:     "https://git.example.com/oauth/authorize",
			TokenURL:    "https://proxy.example.com/token",
			UserinfoURL: "https://git.example.com/api/v4/user",
			Scopes:      []string{"read_user", "email"},
		}},
		{"generic", "authorization_endpoint = https://id.example.com/authorize\ntoken_endpoint = https://id.example.com/token\nuserinfo_endpoint = https://id.example.com/userinfo\n", oauth.Config{
			AuthURL:     "https://id.example.com/authorize",
			TokenURL:    "https://id.example.com/token",
			UserinfoURL: "https://id.example.com/userinfo",
			Scopes:      []string{"openid", "email", "profile"},
		}},
		{"generic", "issuer = https://id.example.com\nscopes = openid, email\n", oauth.Config{
			Issuer: "https://id.example.com",
			Scopes: []string{"openid", "email"},
		}},
		{"google", "issuer = https://accounts.example.test\nuserinfo_endpoint = https://accounts.example.test/me\n", oauth.Config{
			Issuer:      "https://accounts.example.test",
			UserinfoURL: "https://accounts.example.test/me",
			Scopes:      []string{"openid", "email", "profile"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			cfg, ok, problems := loadOAuthSection(t, "provider = "+tt.provider+"\n"+oauthBase+tt.extra)
			if !ok || len(problems) > 0 {
				t.Fatalf("loadOAuth refused or warned: %v", problems)
			}
			want := tt.want
			want.Provider = strings.ToLower(tt.provider)
			want.ClientID, want.ClientSecret = "the-client", "s3cr3t-value"
			want.RedirectURL = "https://backups.example.com/oauth/callback"
			want.Rule = oauth.Rule{Domains: []string{"example.com"}}
			want.IdleTimeout, want.Lifetime = 30*time.Minute, 12*time.Hour
			if cfg.String() != want.String() || !equalConfig(cfg, want) {
				t.Errorf("loadOAuth =\n%#v\nwant\n%#v", cfg, want)
			}
		})
	}
}

func equalConfig(a, b oauth.Config) bool {
	return a.Provider == b.Provider && a.ClientID == b.ClientID && a.ClientSecret == b.ClientSecret &&
		a.RedirectURL == b.RedirectURL && a.Issuer == b.Issuer && a.BaseURL == b.BaseURL &&
		a.AuthURL == b.AuthURL && a.TokenURL == b.TokenURL && a.UserinfoURL == b.UserinfoURL &&
		slices.Equal(a.Scopes, b.Scopes) && a.Rule.All == b.Rule.All &&
		slices.Equal(a.Rule.Domains, b.Rule.Domains) && slices.Equal(a.Rule.Users, b.Rule.Users) &&
		a.IdleTimeout == b.IdleTimeout && a.Lifetime == b.Lifetime
}

func TestLoadOAuthRule(t *testing.T) {
	base := "provider = github\nclient_id = c\nclient_secret = s\nredirect_uri = https://b.example.com/oauth/callback\n"
	tests := []struct {
		name string
		keys string
		want oauth.Rule
	}{
		{"domains", "authorized_domains = Example.COM, other.org\n", oauth.Rule{Domains: []string{"example.com", "other.org"}}},
		{"users", "authorized_users = Alice@Example.com\n", oauth.Rule{Users: []string{"Alice@Example.com"}}},
		{"both", "authorized_domains = example.com\nauthorized_users = bob@gmail.com\n",
			oauth.Rule{Domains: []string{"example.com"}, Users: []string{"bob@gmail.com"}}},
		{"star", "authorized_domains = *\n", oauth.Rule{All: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok, problems := loadOAuthSection(t, base+tt.keys)
			if !ok {
				t.Fatalf("refused: %v", problems)
			}
			if cfg.Rule.All != tt.want.All || !slices.Equal(cfg.Rule.Domains, tt.want.Domains) || !slices.Equal(cfg.Rule.Users, tt.want.Users) {
				t.Errorf("Rule = %+v, want %+v", cfg.Rule, tt.want)
			}
		})
	}
}

// TestLoadOAuthErrors checks that every configuration mistake is refused
// with a message naming the key, and that the client secret is never
// quoted.
func TestLoadOAuthErrors(t *testing.T) {
	tests := []struct {
		name, body string
		key, want  string
	}{
		{"missing provider", "client_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"provider", "google, github, gitlab, generic"},
		{"unknown provider", "provider = okta\n" + oauthBase, "provider", `unknown provider "okta"; valid providers are google, github, gitlab, generic`},
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
		{"generic without endpoints", "provider = generic\n" + oauthBase,
			"authorization_endpoint", "provider generic needs authorization_endpoint, token_endpoint and userinfo_endpoint, or an issuer"},
		{"generic without token endpoint", "provider = generic\n" + oauthBase + "authorization_endpoint = https://id.example.com/a\nuserinfo_endpoint = https://id.example.com/u\n",
			"token_endpoint", "provider generic needs"},
		{"bad endpoint", "provider = github\n" + oauthBase + "token_endpoint = github.com/token\n",
			"token_endpoint", "absolute http:// or https:// URL"},
		{"bad issuer", "provider = google\n" + oauthBase + "issuer = accounts.google.com\n",
			"issuer", "absolute http:// or https:// URL"},
		{"oidc without openid scope", "provider = generic\n" + oauthBase + "issuer = https://id.example.com\nscopes = email, profile\n",
			"scopes", "must include openid"},
		{"bad session duration", "provider = google\n" + oauthBase + "session_lifetime = forever\n",
			"session_lifetime", "must be a duration"},
		{"bad end_session_endpoint", "provider = generic\n" + oauthBase + "issuer = https://id.example.com\nend_session_endpoint = javascript:alert(1)\n",
			"end_session_endpoint", "absolute http:// or https:// URL"},
		{"bad post_logout_redirect_uri", "provider = google\n" + oauthBase + "post_logout_redirect_uri = /signed-out\n",
			"post_logout_redirect_uri", "absolute http:// or https:// URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadOAuthSection(t, tt.body)
			if ok {
				t.Fatalf("loadOAuth accepted the configuration; problems: %v", problems)
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

func TestLoadOAuthWarnings(t *testing.T) {
	tests := []struct {
		name, body string
		key, want  string
	}{
		{"http redirect", "provider = google\nclient_id = c\nclient_secret = s\nredirect_uri = http://backups.example.com/oauth/callback\nauthorized_domains = example.com\n",
			"redirect_uri", "behind a TLS proxy write https://"},
		{"issuer ignored", "provider = github\n" + oauthBase + "issuer = https://github.com\n", "issuer", "not used by provider github"},
		{"base_url ignored", "provider = google\n" + oauthBase + "base_url = https://gitlab.example.com\n", "base_url", "only by provider gitlab"},
		{"end_session_endpoint ignored", "provider = google\n" + oauthBase + "end_session_endpoint = https://accounts.google.com/logout\n", "end_session_endpoint", "only by provider generic"},
		{"github without user:email", "provider = github\n" + oauthBase + "scopes = read:user\n", "scopes", "user:email"},
		{"http endpoint", "provider = github\n" + oauthBase + "token_endpoint = http://github.example.com/token\n", "token_endpoint", "unencrypted"},
		{"idle longer than lifetime", "provider = google\n" + oauthBase + "session_idle_timeout = 2h\nsession_lifetime = 1h\n", "session_idle_timeout", "longer than session_lifetime"},
		{"idle longer than default lifetime", "provider = google\n" + oauthBase + "session_idle_timeout = 13h\n", "session_idle_timeout", "longer than session_lifetime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadOAuthSection(t, tt.body)
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
	_, ok, problems := loadOAuthSection(t, "provider = google\nclient_id = c\nclient_secret = s\nredirect_uri = http://127.0.0.1:8080/oauth/callback\nauthorized_domains = *\n")
	if !ok || len(problems) != 0 {
		t.Errorf("loopback http: ok=%v problems=%v", ok, problems)
	}
}

func TestLoadOAuthGroupKeys(t *testing.T) {
	base := "client_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\n"
	tests := []struct {
		name, body string
		check      func(t *testing.T, c oauth.Config)
	}{
		{"github organisations and teams", "provider = github\nauthorized_orgs = Acme, initech\nauthorized_teams = Acme/Backup-Ops\n", func(t *testing.T, c oauth.Config) {
			if !slices.Equal(c.Rule.Orgs, []string{"acme", "initech"}) || !slices.Equal(c.Rule.Teams, []string{"acme/backup-ops"}) {
				t.Errorf("rule %+v", c.Rule)
			}
			if !slices.Equal(c.Scopes, []string{"user:email", "read:org"}) {
				t.Errorf("scopes %q: read:org not added", c.Scopes)
			}
		}},
		{"github, org scope already there", "provider = github\nauthorized_orgs = acme\nscopes = user:email, admin:org\n", func(t *testing.T, c oauth.Config) {
			if !slices.Equal(c.Scopes, []string{"user:email", "admin:org"}) {
				t.Errorf("scopes %q", c.Scopes)
			}
		}},
		{"github without group keys", "provider = github\nauthorized_domains = example.com\n", func(t *testing.T, c oauth.Config) {
			if !slices.Equal(c.Scopes, []string{"user:email"}) {
				t.Errorf("scopes %q", c.Scopes)
			}
		}},
		{"gitlab groups", "provider = gitlab\nauthorized_groups = acme/infra, Acme-Labs\n", func(t *testing.T, c oauth.Config) {
			if !slices.Equal(c.Rule.Groups, []string{"acme/infra", "Acme-Labs"}) || !slices.Equal(c.Scopes, []string{"read_user", "email", "openid"}) {
				t.Errorf("rule %+v scopes %q", c.Rule, c.Scopes)
			}
		}},
		{"gitlab groups through the API", "provider = gitlab\nauthorized_groups = acme\nscopes = read_user, email, read_api\n", func(t *testing.T, c oauth.Config) {
			if !slices.Equal(c.Scopes, []string{"read_user", "email", "read_api"}) {
				t.Errorf("scopes %q", c.Scopes)
			}
		}},
		{"generic claim", "provider = generic\nissuer = https://id.example.com\nauthorized_groups = /Backup Operators\ngroups_claim = https://example.com/roles\n", func(t *testing.T, c oauth.Config) {
			if !slices.Equal(c.Rule.Groups, []string{"/Backup Operators"}) || c.GroupsClaim != "https://example.com/roles" {
				t.Errorf("rule %+v claim %q", c.Rule, c.GroupsClaim)
			}
		}},
		{"generic default claim", "provider = generic\nissuer = https://id.example.com\nauthorized_groups = ops\n", func(t *testing.T, c oauth.Config) {
			if c.GroupsClaim != oauth.DefaultGroupsClaim {
				t.Errorf("claim %q", c.GroupsClaim)
			}
		}},
		{"google hosted domain", "provider = google\nauthorized_domains = example.com\n", func(t *testing.T, c oauth.Config) {
			if !c.Rule.HostedDomain {
				t.Error("google's rule does not check hd")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok, problems := loadOAuthSection(t, base+tt.body)
			if !ok {
				t.Fatalf("refused: %v", problems)
			}
			tt.check(t, cfg)
		})
	}
}

// TestLoadOAuthGroupKeyErrors: a key the provider cannot honour, and a
// malformed entry, are refused with a message naming the key.
func TestLoadOAuthGroupKeyErrors(t *testing.T) {
	base := "client_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\n"
	tests := []struct {
		name, body string
		key, want  string
	}{
		{"orgs with gitlab", "provider = gitlab\nauthorized_orgs = acme\n", "authorized_orgs", "provider gitlab cannot honour it"},
		{"teams with generic", "provider = generic\nissuer = https://id.example.com\nauthorized_teams = acme/ops\n", "authorized_teams", "provider generic cannot honour it"},
		{"groups with github", "provider = github\nauthorized_groups = acme\n", "authorized_groups", "with github use authorized_orgs or authorized_teams"},
		{"groups with google", "provider = google\nauthorized_groups = staff\n", "authorized_groups", "provider google cannot honour it"},
		{"orgs with google", "provider = google\nauthorized_orgs = acme\n", "authorized_orgs", "with google authorized_domains"},
		{"groups_claim with gitlab", "provider = gitlab\nauthorized_groups = acme\ngroups_claim = roles\n", "groups_claim", "provider gitlab cannot honour it"},
		{"groups_claim with github", "provider = github\nauthorized_orgs = acme\ngroups_claim = roles\n", "groups_claim", "for provider generic only"},
		{"team without a slash", "provider = github\nauthorized_teams = acme\n", "authorized_teams", "is not org/team"},
		{"team with two slashes", "provider = github\nauthorized_teams = acme/ops/x\n", "authorized_teams", "is not org/team"},
		{"team without a slug", "provider = github\nauthorized_teams = acme/\n", "authorized_teams", "is not org/team"},
		{"team without an organisation", "provider = github\nauthorized_teams = /ops\n", "authorized_teams", "is not org/team"},
		{"organisation with a slash", "provider = github\nauthorized_orgs = acme/ops\n", "authorized_orgs", "is not a GitHub organisation login"},
		{"organisation with a leading hyphen", "provider = github\nauthorized_orgs = -acme\n", "authorized_orgs", "is not a GitHub organisation login"},
		{"organisation too long", "provider = github\nauthorized_orgs = " + strings.Repeat("a", 40) + "\n", "authorized_orgs", "is not a GitHub organisation login"},
		{"gitlab path with a leading slash", "provider = gitlab\nauthorized_groups = /acme\n", "authorized_groups", "is not a GitLab group's full path"},
		{"gitlab path with a space", "provider = gitlab\nauthorized_groups = acme/my group\n", "authorized_groups", "is not a GitLab group's full path"},
		{"empty groups_claim", "provider = generic\nissuer = https://id.example.com\nauthorized_groups = ops\ngroups_claim =\n", "groups_claim", "is not a claim name"},
		{"Unicode domain", "provider = github\nauthorized_domains = b\u00fccher.example\n", "authorized_domains", "xn--"},
		{"nothing admits", "provider = github\nauthorized_orgs = ,\n", "authorized_domains", "authorized_orgs, authorized_teams, authorized_groups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadOAuthSection(t, base+tt.body)
			if ok {
				t.Fatalf("accepted; problems: %v", problems)
			}
			found := false
			for _, p := range problems {
				if p.Severity == ini.Error && p.Key == tt.key && strings.Contains(p.Msg, tt.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error on %s containing %q; problems: %v", tt.key, tt.want, problems)
			}
		})
	}
}

// TestOAuthDocumentedExamples loads every example configuration of
// docs/groups-oauth.md.
func TestOAuthDocumentedExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/groups-oauth.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"GITHUB_CLIENT_SECRET", "GITLAB_CLIENT_SECRET", "OIDC_CLIENT_SECRET", "GOOGLE_CLIENT_SECRET"} {
		t.Setenv(name, "documented-secret")
	}
	blocks := strings.Split(string(doc), "```ini\n")[1:]
	if len(blocks) < 5 {
		t.Fatalf("%d examples in the documentation", len(blocks))
	}
	for i, b := range blocks {
		body, _, _ := strings.Cut(b, "```")
		rep := &ini.Report{}
		f := ini.Parse("groups-oauth.md", strings.NewReader(body), rep)
		cfg, ok := loadOAuth(f.Section("authentication"))
		if !ok || rep.ErrorCount() > 0 {
			t.Errorf("example %d refused: %v\n%s", i+1, rep.Problems(), body)
			continue
		}
		if !cfg.Rule.ByGroup() && cfg.Provider != "google" {
			t.Errorf("example %d admits by no group", i+1)
		}
	}
}
