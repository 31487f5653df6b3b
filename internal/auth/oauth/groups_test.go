package oauth

import (
	"errors"
	"fmt"
	"github.com/go-json-experiment/json/jsontext"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
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
		got, problem := claimGroups(jsontext.Value(tt.raw))
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
