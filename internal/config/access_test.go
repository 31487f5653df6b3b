package config

import (
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/ini"
)

func TestLoadAccess(t *testing.T) {
	for _, tt := range []struct {
		name    string
		ini     string
		explain []string // the effective rules, when no error is wanted
		errs    []string // substrings of the errors, in order
	}{
		{name: "no section", ini: "", explain: []string{"default: allow any signed-in user (no rule named the request)"}},
		{name: "rules sorted by number", ini: "[access]\nrule10 = * ^/b deny\nrule9 = * ^/a deny\nrule010x = x\n",
			errs: []string{"[access] rule010x: unknown key"}},
		{name: "numeric order and hosts", ini: "[access]\ndefault = deny\nrule10 = GET ^/b allow\nrule9 = * ^/a allow group:ops\nrule9.hosts = a.example.com\n",
			explain: []string{"rule9: * ^/a allow group:ops (hosts a.example.com)", "rule10: GET ^/b allow", "default: deny (no rule named the request)"}},
		{name: "proxy shorthand first", ini: "[proxy]\nupstream = http://127.0.0.1:9\nskip_auth_routes = GET=^/health$\nallow_users = alice, bob\n[access]\nrule1 = * ^/admin deny group:ops\n",
			explain: []string{"skip_auth_routes: GET ^/health$ anonymous", "allow_users: * ^/ deny (every signed-in user but alice, bob)", "rule1: * ^/admin deny group:ops", "default: allow any signed-in user (no rule named the request)"}},
		{name: "allow_users applies to forward auth", ini: "[server]\nmode = forward-auth\n[proxy]\nallow_users = alice\n",
			explain: []string{"allow_users: * ^/ deny (every signed-in user but alice)", "default: allow any signed-in user (no rule named the request)"}},
		{name: "allow_users does not apply to the catalog", ini: "[proxy]\nallow_users = alice\n",
			explain: []string{"default: allow any signed-in user (no rule named the request)"}},
		{name: "bad default", ini: "[access]\ndefault = maybe\n", errs: []string{"[access] default: must be allow"}},
		{name: "misspelt key", ini: "[access]\nrul1 = * ^/ deny\n", errs: []string{"rul1: unknown key: did you mean rule...?"}},
		{name: "same number twice", ini: "[access]\nrule1 = * ^/a deny\nrule01 = * ^/b deny\n", errs: []string{"rule01: is rule number 1 again (as rule1)"}},
		{name: "hosts without rule", ini: "[access]\nrule2.hosts = a.example.com\n", errs: []string{"rule2.hosts: names the hosts of rule2, which is not set"}},
		{name: "bad host", ini: "[access]\nrule2 = * ^/ deny\nrule2.hosts = a/b\n", errs: []string{"is not a host name"}},
		{name: "bad rule", ini: "[access]\nrule1 = * /admin deny\n", errs: []string{"must start with ^"}},
		{name: "shadowed", ini: "[access]\nrule1 = * ^/admin deny\nrule2 = GET ^/admin/x allow user:alice\n", errs: []string{"[access] rule2: rule2 (GET ^/admin/x allow user:alice) never decides: rule1"}},
		{name: "never matches", ini: "[access]\nrule1 = * ^admin deny\n", errs: []string{"never matches"}},
		{name: "catch-all anonymous", ini: "[access]\nrule1 = * ^/ anonymous\n", errs: []string{"matches every path"}},
		{name: "catch-all anonymous chosen", ini: "[proxy]\nallow_anonymous = true\n[access]\nrule1 = * ^/ anonymous\n",
			explain: []string{"rule1: * ^/ anonymous", "default: allow any signed-in user (no rule named the request)"}},
		{name: "shorthand shadowing a rule", ini: "[proxy]\nupstream = http://127.0.0.1:9\nskip_auth_routes = ^/public\n[access]\nrule1 = GET ^/public/x anonymous\n",
			errs: []string{"never decides: skip_auth_routes"}},
		{name: "groups header", ini: "[proxy]\ngroups_header = X Groups\n", errs: []string{"[proxy] groups_header: is not a header name"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Load(writeConfig(t, tt.ini), lookupEnv)
			var errs []string
			for _, p := range cfg.Report.Problems() {
				if p.Severity == ini.Error {
					errs = append(errs, p.String())
				}
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors %q, want %d: %q", errs, len(tt.errs), tt.errs)
			}
			for i := range errs {
				if !strings.Contains(errs[i], tt.errs[i]) {
					t.Errorf("error %q, want it to say %q", errs[i], tt.errs[i])
				}
			}
			if tt.explain != nil {
				if got := cfg.Access.Rules.Explain(); strings.Join(got, "\n") != strings.Join(tt.explain, "\n") {
					t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.explain, "\n"))
				}
			}
		})
	}
}

func TestGroupsHeaderDefault(t *testing.T) {
	if cfg := Load(writeConfig(t, ""), lookupEnv); cfg.Proxy.GroupsHeader != DefaultGroupsHeader {
		t.Errorf("groups_header %q", cfg.Proxy.GroupsHeader)
	}
	if cfg := Load(writeConfig(t, "[proxy]\ngroups_header =\n"), lookupEnv); cfg.Proxy.GroupsHeader != "" {
		t.Errorf("empty groups_header read as %q", cfg.Proxy.GroupsHeader)
	}
}
