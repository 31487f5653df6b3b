package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/ini"
)

// TestParseEmailStrict: every address whose domain could be read two ways
// is refused.
func TestParseEmailStrict(t *testing.T) {
	corp := Rule{Domains: []string{"corp.example"}}
	tests := []struct {
		name  string
		email string
		want  error
	}{
		{"plain", "alice@corp.example", nil},
		{"domain in capitals", "alice@CORP.Example", nil},
		{"plus and dots in the local part", "alice.b+backups@corp.example", nil},
		{"letters beyond ASCII in the local part", "jos\u00e9@corp.example", nil},
		{"second at sign", "a@evil.example@corp.example", ErrBadEmail},
		{"quoted local part holding an at sign", `"a@b"@corp.example`, ErrBadEmail},
		{"quoted local part", `"ab"@corp.example`, ErrBadEmail},
		{"escaped at sign", `a\@evil.example@corp.example`, ErrBadEmail},
		{"comment", "alice(x)@corp.example", ErrBadEmail},
		{"route", "@evil.example:alice@corp.example", ErrBadEmail},
		{"angle brackets", "<alice@corp.example>", ErrBadEmail},
		{"Cyrillic a in the domain", "alice@corp.ex\u0430mple", ErrBadEmail},
		{"full-width letters in the domain", "alice@\uff43\uff4f\uff52\uff50.example", ErrBadEmail},
		{"full-width dot", "alice@corp\uff0eexample", ErrBadEmail},
		{"Unicode form of a listed punycode domain", "alice@b\u00fccher.example", ErrBadEmail},
		{"trailing dot", "alice@corp.example.", ErrBadEmail},
		{"leading dot in the domain", "alice@.corp.example", ErrBadEmail},
		{"double dot in the domain", "alice@corp..example", ErrBadEmail},
		{"trailing dot in the local part", "alice.@corp.example", ErrBadEmail},
		{"leading dot in the local part", ".alice@corp.example", ErrBadEmail},
		{"double dot in the local part", "al..ice@corp.example", ErrBadEmail},
		{"empty local part", "@corp.example", ErrBadEmail},
		{"empty domain", "alice@", ErrBadEmail},
		{"single-label domain", "alice@localhost", ErrBadEmail},
		{"address literal", "alice@[192.0.2.1]", ErrBadEmail},
		{"hyphen at a label's edge", "alice@-corp.example", ErrBadEmail},
		{"underscore in the domain", "alice@corp_x.example", ErrBadEmail},
		{"leading space", " alice@corp.example", ErrBadEmail},
		{"trailing space", "alice@corp.example ", ErrBadEmail},
		{"inner space", "ali ce@corp.example", ErrBadEmail},
		{"no-break space", "alice@corp.example\u00a0", ErrBadEmail},
		{"zero-width space", "alice@corp.exa\u200bmple", ErrBadEmail},
		{"right-to-left override", "alice\u202e@corp.example", ErrBadEmail},
		{"tab", "alice\t@corp.example", ErrBadEmail},
		{"invalid UTF-8", "alice\xff@corp.example", ErrBadEmail},
		{"local part longer than 64 bytes", strings.Repeat("a", 65) + "@corp.example", ErrBadEmail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := corp.Admit(tt.email); !errors.Is(err, tt.want) {
				t.Fatalf("Admit(%q) = %v, want %v", tt.email, err, tt.want)
			}
		})
	}
	if err := (Rule{Domains: []string{"xn--bcher-kva.example"}}).Admit("alice@XN--bcher-kva.example"); err != nil {
		t.Errorf("punycode domain: %v", err)
	}
}

func TestAdmitAccount(t *testing.T) {
	const mail = "octo@personal.example"
	tests := []struct {
		name string
		rule Rule
		acct Account
		want error
	}{
		{"organisation", Rule{Orgs: []string{"acme"}}, Account{Email: mail, Groups: []string{"acme"}}, nil},
		{"organisation ignoring case", Rule{Orgs: []string{"ACME"}}, Account{Email: mail, Groups: []string{"acme"}}, nil},
		{"a team is not its organisation", Rule{Orgs: []string{"acme"}}, Account{Email: mail, Groups: []string{"acme/ops"}}, ErrNotAdmitted},
		{"team", Rule{Teams: []string{"acme/ops"}}, Account{Email: mail, Groups: []string{"acme", "acme/ops"}}, nil},
		{"team ignoring case", Rule{Teams: []string{"Acme/Ops"}}, Account{Email: mail, Groups: []string{"acme/ops"}}, nil},
		{"an organisation is not its teams", Rule{Teams: []string{"acme/ops"}}, Account{Email: mail, Groups: []string{"acme"}}, ErrNotAdmitted},
		{"GitLab path", Rule{Groups: []string{"acme/infra"}}, Account{Email: mail, Groups: []string{"acme/infra"}}, nil},
		{"GitLab path compared exactly", Rule{Groups: []string{"acme/infra"}}, Account{Email: mail, Groups: []string{"Acme/Infra"}}, ErrNotAdmitted},
		{"subgroup is not its parent", Rule{Groups: []string{"acme/infra"}}, Account{Email: mail, Groups: []string{"acme/infra/backups"}}, ErrNotAdmitted},
		{"prefix is not a group", Rule{Groups: []string{"admins"}}, Account{Email: mail, Groups: []string{"admins-old"}}, ErrNotAdmitted},
		{"listed group not returned (CVE-2021-21411)", Rule{Groups: []string{"admins"}}, Account{Email: mail}, ErrNotAdmitted},
		{"listed organisation not returned", Rule{Orgs: []string{"acme"}}, Account{Email: mail, Groups: []string{}}, ErrNotAdmitted},
		{"groups do not excuse a malformed address", Rule{Orgs: []string{"acme"}}, Account{Email: "a@b@c.example", Groups: []string{"acme"}}, ErrBadEmail},
		{"any list admits: user", Rule{Orgs: []string{"acme"}, Users: []string{mail}}, Account{Email: mail}, nil},
		{"any list admits: domain", Rule{Groups: []string{"x"}, Domains: []string{"personal.example"}}, Account{Email: mail}, nil},
		{"hosted domain", Rule{Domains: []string{"corp.example"}, HostedDomain: true}, Account{Email: "a@corp.example", HostedDomain: "corp.example"}, nil},
		{"hosted domain ignoring case", Rule{Domains: []string{"corp.example"}, HostedDomain: true}, Account{Email: "a@corp.example", HostedDomain: "CORP.example"}, nil},
		{"personal account at a listed domain", Rule{Domains: []string{"corp.example"}, HostedDomain: true}, Account{Email: "a@corp.example"}, ErrNotAdmitted},
		{"hosted by another domain", Rule{Domains: []string{"corp.example"}, HostedDomain: true}, Account{Email: "a@corp.example", HostedDomain: "evil.example"}, ErrNotAdmitted},
		{"hosted, address elsewhere", Rule{Domains: []string{"corp.example"}, HostedDomain: true}, Account{Email: "a@evil.example", HostedDomain: "corp.example"}, ErrNotAdmitted},
		{"Google's own consumer domain", Rule{Domains: []string{"gmail.com"}, HostedDomain: true}, Account{Email: "a@GMail.com"}, nil},
		{"googlemail.com", Rule{Domains: []string{"googlemail.com"}, HostedDomain: true}, Account{Email: "a@googlemail.com"}, nil},
		{"consumer domain not listed", Rule{Domains: []string{"corp.example"}, HostedDomain: true}, Account{Email: "a@gmail.com"}, ErrNotAdmitted},
		{"consumer domain with a foreign hd", Rule{Domains: []string{"gmail.com"}, HostedDomain: true}, Account{Email: "a@gmail.com", HostedDomain: "evil.example"}, ErrNotAdmitted},
		{"listed user needs no hosted domain", Rule{Users: []string{"a@corp.example"}, HostedDomain: true}, Account{Email: "a@corp.example"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.rule.AdmitAccount(tt.acct); !errors.Is(err, tt.want) {
				t.Fatalf("AdmitAccount(%+v) = %v, want %v", tt.acct, err, tt.want)
			}
		})
	}
}

func TestClaimGroups(t *testing.T) {
	tests := []struct {
		raw     string
		want    []string
		problem bool
	}{
		{`["a","b"]`, []string{"a", "b"}, false},
		{`"a"`, []string{"a"}, false},
		{``, nil, false},
		{`null`, nil, false},
		{`[]`, []string{}, false},
		{`42`, nil, true},
		{`true`, nil, true},
		{`{"a":true}`, nil, true},
		{`["a",7]`, nil, true},
		{`[["a"]]`, nil, true},
	}
	for _, tt := range tests {
		got, problem := claimGroups(json.RawMessage(tt.raw))
		if !slices.Equal(got, tt.want) || (problem != "") != tt.problem {
			t.Errorf("claimGroups(%s) = %q, %q", tt.raw, got, problem)
		}
	}
}

func TestCleanGroups(t *testing.T) {
	clean, dropped, err := cleanGroups([]string{"b", "A", "a", "b", "", "x,y", " lead", "tab\there", "ok group", "z\u200b", strings.Repeat("g", 257)}, false)
	if err != nil || !slices.Equal(clean, []string{"A", "a", "b", "ok group"}) || len(dropped) != 6 {
		t.Errorf("cleanGroups = %q, dropped %q, %v", clean, dropped, err)
	}
	if clean, _, _ := cleanGroups([]string{"Acme", "acme", "Acme/Ops"}, true); !slices.Equal(clean, []string{"acme", "acme/ops"}) {
		t.Errorf("folded: %q", clean)
	}
	many := make([]string, maxGroups+1)
	for i := range many {
		many[i] = fmt.Sprintf("g%04d", i)
	}
	if _, _, err := cleanGroups(many, false); !errors.Is(err, errGroups) {
		t.Errorf("%d groups: %v", len(many), err)
	}
	if _, _, err := cleanGroups(many[:maxGroups], false); err != nil {
		t.Errorf("%d groups: %v", maxGroups, err)
	}
	long := make([]string, 300)
	for i := range long {
		long[i] = fmt.Sprintf("%0250d", i)
	}
	if _, _, err := cleanGroups(long, false); !errors.Is(err, errGroups) || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("300 groups of 250 bytes: %v", err)
	}
	if g := decodeGroups(encodeGroups([]string{"a b", "c/d"})); !slices.Equal(g, []string{"a b", "c/d"}) {
		t.Errorf("round trip: %q", g)
	}
	if decodeGroups("") != nil {
		t.Error("empty attribute gives groups")
	}
}

func TestNextLink(t *testing.T) {
	origin, _ := url.Parse("https://api.github.com/user/orgs?per_page=100")
	tests := []struct {
		link string
		want string
		bad  bool
	}{
		{`<https://api.github.com/user/orgs?per_page=100&page=2>; rel="next", <https://api.github.com/user/orgs?per_page=100&page=3>; rel="last"`,
			"https://api.github.com/user/orgs?per_page=100&page=2", false},
		{`<https://api.github.com/user/orgs?page=1>; rel="prev", <https://api.github.com/user/orgs?page=1>; rel="first"`, "", false},
		{`</user/orgs?page=2>; rel="next"`, "https://api.github.com/user/orgs?page=2", false},
		{`<https://api.github.com/user/orgs?page=2>; rel="next last"`, "https://api.github.com/user/orgs?page=2", false},
		{`<https://evil.example/user/orgs?page=2>; rel="next"`, "", true},
		{`<http://api.github.com/user/orgs?page=2>; rel="next"`, "", true},
		{``, "", false},
	}
	for _, tt := range tests {
		got, err := nextLink(http.Header{"Link": {tt.link}}, origin)
		if got != tt.want || (err != nil) != tt.bad {
			t.Errorf("nextLink(%s) = %q, %v", tt.link, got, err)
		}
	}
}

func TestLoadGroupKeys(t *testing.T) {
	base := "client_id = c\nclient_secret = s3cr3t-value\nredirect_uri = https://b.example.com/oauth/callback\n"
	tests := []struct {
		name, body string
		check      func(t *testing.T, c Config)
	}{
		{"github organisations and teams", "provider = github\nauthorized_orgs = Acme, initech\nauthorized_teams = Acme/Backup-Ops\n", func(t *testing.T, c Config) {
			if !slices.Equal(c.Rule.Orgs, []string{"acme", "initech"}) || !slices.Equal(c.Rule.Teams, []string{"acme/backup-ops"}) {
				t.Errorf("rule %+v", c.Rule)
			}
			if !slices.Equal(c.Scopes, []string{"user:email", "read:org"}) {
				t.Errorf("scopes %q: read:org not added", c.Scopes)
			}
		}},
		{"github, org scope already there", "provider = github\nauthorized_orgs = acme\nscopes = user:email, admin:org\n", func(t *testing.T, c Config) {
			if !slices.Equal(c.Scopes, []string{"user:email", "admin:org"}) {
				t.Errorf("scopes %q", c.Scopes)
			}
		}},
		{"github without group keys", "provider = github\nauthorized_domains = example.com\n", func(t *testing.T, c Config) {
			if !slices.Equal(c.Scopes, []string{"user:email"}) {
				t.Errorf("scopes %q", c.Scopes)
			}
		}},
		{"gitlab groups", "provider = gitlab\nauthorized_groups = acme/infra, Acme-Labs\n", func(t *testing.T, c Config) {
			if !slices.Equal(c.Rule.Groups, []string{"acme/infra", "Acme-Labs"}) || !slices.Equal(c.Scopes, []string{"read_user", "email", "openid"}) {
				t.Errorf("rule %+v scopes %q", c.Rule, c.Scopes)
			}
		}},
		{"gitlab groups through the API", "provider = gitlab\nauthorized_groups = acme\nscopes = read_user, email, read_api\n", func(t *testing.T, c Config) {
			if !slices.Equal(c.Scopes, []string{"read_user", "email", "read_api"}) {
				t.Errorf("scopes %q", c.Scopes)
			}
		}},
		{"generic claim", "provider = generic\nissuer = https://id.example.com\nauthorized_groups = /Backup Operators\ngroups_claim = https://example.com/roles\n", func(t *testing.T, c Config) {
			if !slices.Equal(c.Rule.Groups, []string{"/Backup Operators"}) || c.GroupsClaim != "https://example.com/roles" {
				t.Errorf("rule %+v claim %q", c.Rule, c.GroupsClaim)
			}
		}},
		{"generic default claim", "provider = generic\nissuer = https://id.example.com\nauthorized_groups = ops\n", func(t *testing.T, c Config) {
			if c.GroupsClaim != DefaultGroupsClaim {
				t.Errorf("claim %q", c.GroupsClaim)
			}
		}},
		{"google hosted domain", "provider = google\nauthorized_domains = example.com\n", func(t *testing.T, c Config) {
			if !c.Rule.HostedDomain {
				t.Error("google's rule does not check hd")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok, problems := loadSection(t, base+tt.body)
			if !ok {
				t.Fatalf("refused: %v", problems)
			}
			tt.check(t, cfg)
		})
	}
}

// TestLoadGroupKeyErrors: a key the provider cannot honour, and a
// malformed entry, are refused with a message naming the key.
func TestLoadGroupKeyErrors(t *testing.T) {
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
			_, ok, problems := loadSection(t, base+tt.body)
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

// TestValidateGroupKeys: New refuses what Load refuses, for a Config built
// by hand.
func TestValidateGroupKeys(t *testing.T) {
	base := Config{ClientID: "c", ClientSecret: "s", RedirectURL: "https://b.example.com/oauth/callback"}
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"orgs with gitlab", func(c *Config) { c.Provider, c.Rule = "gitlab", Rule{Orgs: []string{"acme"}} }, "authorized_orgs: provider gitlab cannot honour it"},
		{"bad team", func(c *Config) { c.Provider, c.Rule = "github", Rule{Teams: []string{"acme"}} }, "authorized_teams: \"acme\" is not org/team"},
		{"claim with google", func(c *Config) {
			c.Provider, c.Rule, c.GroupsClaim = "google", Rule{Domains: []string{"example.com"}}, "roles"
		}, "groups_claim: provider google cannot honour it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	ok := base
	ok.Provider, ok.Rule = "github", Rule{Teams: []string{"acme/ops"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a team alone: %v", err)
	}
}

// TestDocumentedExamples loads every example configuration of
// docs/groups-oauth.md.
func TestDocumentedExamples(t *testing.T) {
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
		cfg, ok := Load(f.Section("authentication"))
		if !ok || rep.ErrorCount() > 0 {
			t.Errorf("example %d refused: %v\n%s", i+1, rep.Problems(), body)
			continue
		}
		if !cfg.Rule.ByGroup() && cfg.Provider != "google" {
			t.Errorf("example %d admits by no group", i+1)
		}
	}
}
