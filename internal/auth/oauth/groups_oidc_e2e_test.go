package oauth

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/testkit/oidctest"
)

// claimUsers are accounts of the test provider with groups claims of
// every shape; every password is opPassword.
var claimUsers = []oidctest.User{
	{Username: "gina", Email: "gina@corp.example", EmailVerified: true, Claims: map[string]any{"groups": []string{"staff", "backup-operators", "staff"}}},
	{Username: "sam", Email: "sam@corp.example", EmailVerified: true, Claims: map[string]any{"groups": "backup-operators"}},
	{Username: "nora", Email: "nora@corp.example", EmailVerified: true, Claims: map[string]any{"groups": 42}},
	{Username: "mixed", Email: "mixed@corp.example", EmailVerified: true, Claims: map[string]any{"groups": []any{"backup-operators", 7}}},
	{Username: "commas", Email: "commas@corp.example", EmailVerified: true, Claims: map[string]any{"groups": []string{"admins,backup-operators", " padded", "tab\there", "backup-operators"}}},
	{Username: "hans", Email: "hans@corp.example", EmailVerified: true, Claims: map[string]any{"https://example.com/roles": []string{"backup-operators"}}},
	{Username: "gwen", Email: "gwen@example.com", EmailVerified: true, Claims: map[string]any{"hd": "example.com"}},
	{Username: "perry", Email: "perry@example.com", EmailVerified: true},
	{Username: "hedy", Email: "hedy@example.com", EmailVerified: true, Claims: map[string]any{"hd": "other.example"}},
	{Username: "hank", Email: "hank@example.com", EmailVerified: true, Claims: map[string]any{"hd": "ex\u0430mple.com"}},
}

// claimModes are the ways a generic provider hands the groups claim: in
// the ID token, from the user-information endpoint when the ID token has
// the e-mail but not the groups, and with plain OAuth 2.0.
var claimModes = []struct {
	name   string
	client oidctest.Client
	config func(op *oidctest.Provider) Config
}{
	{"id-token", oidctest.Client{ClaimsInIDToken: true}, func(op *oidctest.Provider) Config {
		return Config{Provider: "generic", Issuer: op.Issuer}
	}},
	{"userinfo-after-id-token", oidctest.Client{ClaimsInIDToken: true, UserClaimsFromUserinfo: true}, func(op *oidctest.Provider) Config {
		return Config{Provider: "generic", Issuer: op.Issuer}
	}},
	{"oauth2-userinfo", oidctest.Client{}, func(op *oidctest.Provider) Config {
		return Config{Provider: "generic", AuthURL: op.AuthorizationEndpoint(), TokenURL: op.TokenEndpoint(), UserinfoURL: op.UserinfoEndpoint()}
	}},
	{"google", oidctest.Client{ClaimsInIDToken: true}, func(op *oidctest.Provider) Config {
		return Config{Provider: "google", Issuer: op.Issuer}
	}},
}

// claimWorld is a provider with claimUsers and one service per claim mode.
func claimWorld(t *testing.T) (*world, map[string]func(*oidctest.Provider) Config) {
	w := &world{services: map[string]*service{}}
	configs := map[string]func(*oidctest.Provider) Config{}
	var clients []oidctest.Client
	for _, m := range claimModes {
		s := newService(t)
		w.services[m.name] = s
		c := m.client
		c.ID, c.Secret, c.RedirectURIs = "client-"+m.name, "secret-"+m.name, []string{s.RedirectURL()}
		clients = append(clients, c)
		configs[m.name] = m.config
	}
	users := slices.Clone(claimUsers)
	for i := range users {
		users[i].Password = opPassword
	}
	w.op = oidctest.Start(t, oidctest.Options{Users: users, Clients: clients})
	return w, configs
}

func TestGroupsClaim(t *testing.T) {
	w, configs := claimWorld(t)
	operators := Rule{Groups: []string{"backup-operators"}}
	tests := []struct {
		name   string
		rule   Rule
		claim  string
		user   string
		groups []string // nil: refused
		logged string
	}{
		{"array", operators, "", "gina", []string{"backup-operators", "staff"}, ""},
		{"a string is one group", operators, "", "sam", []string{"backup-operators"}, ""},
		{"a number is no group", operators, "", "nora", nil, "neither a string nor an array of strings"},
		{"an array with a number is no group", operators, "", "mixed", nil, "an array holding something other than strings"},
		{"values with a comma or control character are left out", operators, "", "commas", []string{"backup-operators"}, "groups left out"},
		{"a comma cannot forge a group", Rule{Groups: []string{"admins"}}, "", "commas", nil, "none listed"},
		{"listed group not returned", Rule{Groups: []string{"backup-admins"}}, "", "gina", nil, "none listed"},
		{"values compared exactly", Rule{Groups: []string{"Backup-Operators"}}, "", "gina", nil, "none listed"},
		{"another claim is not read", operators, "", "hans", nil, "none listed"},
		{"groups_claim names the claim", operators, "https://example.com/roles", "hans", []string{"backup-operators"}, ""},
		{"groups_claim: the groups claim is not read", operators, "https://example.com/roles", "gina", nil, "none listed"},
		{"a domain admits without groups", Rule{Domains: []string{"corp.example"}, Groups: []string{"backup-admins"}}, "", "nora", []string{}, ""},
	}
	for _, m := range claimModes[:3] {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				s := w.services[m.name]
				cfg := configs[m.name](w.op)
				cfg.ClientID, cfg.ClientSecret, cfg.Rule, cfg.GroupsClaim = "client-"+m.name, "secret-"+m.name, tt.rule, tt.claim
				s.logs = &logtest.Buffer{}
				s.use(cfg, auth.Deps{})
				c := browser(t)
				resp, body := w.signIn(t, s, c, "/", tt.user)
				u, ok := s.signedInUser(t, c)
				if tt.groups == nil {
					expectRefusal(t, resp, body, http.StatusForbidden, "Access denied")
					if ok {
						t.Error("signed in")
					}
				} else {
					if resp.StatusCode != http.StatusOK || !ok {
						t.Fatalf("sign-in ended with %d at %s; log:\n%s", resp.StatusCode, resp.Request.URL, s.logs.String())
					}
					if !slices.Equal(u.Groups, tt.groups) && !(len(tt.groups) == 0 && u.Groups == nil) {
						t.Errorf("groups %q, want %q", u.Groups, tt.groups)
					}
				}
				if tt.logged != "" && !strings.Contains(s.logs.String(), tt.logged) {
					t.Errorf("the log does not say %q:\n%s", tt.logged, s.logs.String())
				}
				s.assertNoSecrets(t, "secret-"+m.name)
			})
		}
	}
}

// TestGoogleHostedDomain: with provider google, authorized_domains admits
// Workspace accounts of the domain (hd), not personal Google accounts that
// use an address there; authorized_users still admits an address.
func TestGoogleHostedDomain(t *testing.T) {
	w, configs := claimWorld(t)
	tests := []struct {
		rule   Rule
		user   string
		ok     bool
		logged string
	}{
		{Rule{Domains: []string{"example.com"}}, "gwen", true, ""},
		{Rule{Domains: []string{"EXAMPLE.com"}}, "gwen", true, ""},
		{Rule{Domains: []string{"example.com"}}, "perry", false, "hosted domain (hd) none"},
		{Rule{Domains: []string{"example.com"}}, "hedy", false, "hosted domain (hd) other.example"},
		{Rule{Domains: []string{"example.com", "other.example"}}, "hedy", true, ""},
		{Rule{Users: []string{"perry@example.com"}}, "perry", true, ""},
		{Rule{Domains: []string{"example.com"}}, "hank", false, "hosted domain (hd) none"},
	}
	for _, tt := range tests {
		t.Run(tt.user+" "+strings.Join(append(tt.rule.Domains, tt.rule.Users...), ","), func(t *testing.T) {
			s := w.services["google"]
			cfg := configs["google"](w.op)
			cfg.ClientID, cfg.ClientSecret, cfg.Rule = "client-google", "secret-google", tt.rule
			s.logs = &logtest.Buffer{}
			s.use(cfg, auth.Deps{})
			c := browser(t)
			resp, body := w.signIn(t, s, c, "/", tt.user)
			u, ok := s.signedInUser(t, c)
			if ok != tt.ok {
				t.Fatalf("signed in: %v, want %v (%d); log:\n%s", ok, tt.ok, resp.StatusCode, s.logs.String())
			}
			if !tt.ok {
				expectRefusal(t, resp, body, http.StatusForbidden, "Access denied")
				s.assertLogged(t, "e-mail not admitted", tt.logged)
				return
			}
			if want := map[string]string{"gwen": "example.com", "hedy": "other.example"}[tt.user]; u.Attrs.Get(hostedDomainAttr) != want {
				t.Errorf("hd attribute %q, want %q", u.Attrs.Get(hostedDomainAttr), want)
			}
		})
	}
}
