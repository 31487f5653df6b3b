package directory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"

	"github.com/backupweb/backupweb/internal/auth"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := Config{URL: "ldaps://ldap.example.org", BindDN: "cn=svc,dc=example,dc=org", BindPassword: "pw", BaseDN: "dc=example,dc=org"}
	for _, tc := range []struct {
		name     string
		mod      func(*Config)
		key, msg string // "" key: no problem
	}{
		{"good", func(*Config) {}, "", ""},
		{"starttls", func(c *Config) { c.URL, c.StartTLS = "ldap://ldap.example.org:389", true }, "", ""},
		{"insecure", func(c *Config) { c.URL, c.Insecure = "ldap://ldap.example.org", true }, "", ""},
		{"ad preset", func(c *Config) { c.Preset = PresetActiveDirectory }, "", ""},
		{"no url", func(c *Config) { c.URL = "" }, "url", "missing required key"},
		{"http url", func(c *Config) { c.URL = "https://ldap.example.org" }, "url", "must start with ldaps:// or ldap://"},
		{"no host", func(c *Config) { c.URL = "ldaps://" }, "url", "names no host"},
		{"not a url", func(c *Config) { c.URL = "ldaps://[::1" }, "url", "is not a URL"},
		{"base dn in url", func(c *Config) { c.URL = "ldaps://ldap.example.org/dc=example,dc=org" }, "url", "base_dn"},
		{"plain ldap", func(c *Config) { c.URL = "ldap://ldap.example.org" }, "url", "without start_tls"},
		{"starttls on ldaps", func(c *Config) { c.StartTLS = true }, "start_tls", "ldap:// URLs"},
		{"no bind dn", func(c *Config) { c.BindDN = "" }, "bind_dn", "missing required key"},
		{"no bind password", func(c *Config) { c.BindPassword = "" }, "bind_password", "missing required key"},
		{"no base dn", func(c *Config) { c.BaseDN = "" }, "base_dn", "missing required key"},
		{"filter without username", func(c *Config) { c.UserFilter = "(objectClass=person)" }, "user_filter", "must contain {username}"},
		{"filter with username in a substring", func(c *Config) { c.UserFilter = "(uid={username}*)" }, "user_filter", "for equality"},
		{"filter that does not parse", func(c *Config) { c.UserFilter = "(&(uid={username})" }, "user_filter", "is not an LDAP filter"},
		{"groups filter without dn", func(c *Config) { c.GroupsFilter = "(objectClass=groupOfNames)" }, "groups_filter", "must contain {dn}"},
		{"unknown preset", func(c *Config) { c.Preset = "novell" }, "preset", "unknown value"},
		{"missing ca file", func(c *Config) { c.CAFile = filepath.Join(dir, "none.pem") }, "ca_file", "cannot read the CA file"},
		{"ca file without certificate", func(c *Config) { c.CAFile = notPEM }, "ca_file", "holds no PEM certificate"},
		{"bad attribute", func(c *Config) { c.EmailAttribute = "mail)(x" }, "email_attribute", "not an attribute name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mod(&c)
			err := c.Validate()
			if tc.key == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ke *auth.KeyError
			if !errors.As(err, &ke) || ke.Key != tc.key || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Validate = %v; want a problem at %s saying %q", err, tc.key, tc.msg)
			}
			if strings.Contains(err.Error(), c.BindPassword) && c.BindPassword != "" {
				t.Fatalf("the message holds the password: %v", err)
			}
		})
	}
}

// TestPresetFilters: the filters each preset sends, with hostile names,
// as the directory receives them (compiled and read back).
func TestPresetFilters(t *testing.T) {
	for _, tc := range []struct {
		preset, name, dn, user, groups string
	}{
		{PresetOpenLDAP, "alice", "uid=alice,ou=people,dc=example,dc=org",
			"(&(objectClass=person)(uid=alice))",
			"(&(objectClass=groupOfNames)(member=uid=alice,ou=people,dc=example,dc=org))"},
		{PresetActiveDirectory, "alice", "CN=Alice Liddell,OU=Staff,DC=corp,DC=example",
			"(&(objectClass=user)(sAMAccountName=alice))",
			"(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=CN=Alice Liddell,OU=Staff,DC=corp,DC=example))"},
		{PresetActiveDirectory, "a*)(x=*", `CN=Smith\, John (IT),DC=corp`,
			`(&(objectClass=user)(sAMAccountName=a\2a\29\28x=\2a))`,
			`(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=CN=Smith\5c, John \28IT\29,DC=corp))`},
		{PresetOpenLDAP, "al\x00ice\xff", "uid=x", `(&(objectClass=person)(uid=al\00ice\ff))`, `(&(objectClass=groupOfNames)(member=uid=x))`},
	} {
		c := Config{Preset: tc.preset}.WithDefaults()
		for _, f := range []struct{ filter, want string }{{c.UserFilter, tc.user}, {c.GroupsFilter, tc.groups}} {
			got := fill(f.filter, tc.name, tc.dn)
			if got != f.want {
				t.Errorf("%s: filled %q = %s; want %s", tc.preset, tc.name, got, f.want)
			}
			// What the directory is sent parses as one filter of the
			// same shape: nothing the name held became syntax.
			p, err := ldap.CompileFilter(got)
			if err != nil {
				t.Fatalf("%s: %s does not compile: %v", tc.preset, got, err)
			}
			if back, _ := ldap.DecompileFilter(p); len(p.Children) != 2 || back == "" {
				t.Errorf("%s: %s compiles to %d parts (%s)", tc.preset, got, len(p.Children), back)
			}
		}
		if want := map[string]string{PresetOpenLDAP: "uid", PresetActiveDirectory: "sAMAccountName"}[tc.preset]; c.NameAttribute() != want {
			t.Errorf("%s: NameAttribute = %s", tc.preset, c.NameAttribute())
		}
	}
}

// TestActiveDirectoryNestedGroupsFilter: the Active Directory preset asks
// for a user's groups, nested ones included, with exactly
// (&(objectClass=group)(member:1.2.840.113556.1.4.1941:=DN)), the DN as
// the directory gave it (RFC 4514: its own escapes kept as text) with
// the bytes RFC 4515 reserves escaped: \ * ( ) NUL and every byte above
// 0x7f. No real Active Directory runs here: this checks the text sent,
// not what a server makes of it.
func TestActiveDirectoryNestedGroupsFilter(t *testing.T) {
	c := Config{Preset: PresetActiveDirectory}.WithDefaults()
	const pre = "(&(objectClass=group)(member:1.2.840.113556.1.4.1941:="
	for _, tc := range []struct{ dn, want string }{
		{"CN=Alice Liddell,OU=Staff,DC=corp,DC=example", "CN=Alice Liddell,OU=Staff,DC=corp,DC=example"},
		{`CN=Smith\, John,OU=Users,DC=corp`, `CN=Smith\5c, John,OU=Users,DC=corp`},
		{`CN=O'Brien (Ops),OU=Users,DC=corp`, `CN=O'Brien \28Ops\29,OU=Users,DC=corp`},
		{`CN=star*,OU=Users,DC=corp`, `CN=star\2a,OU=Users,DC=corp`},
		{`CN=\#hash\+plus\;semi\<lt\>gt\"q,DC=corp`, `CN=\5c#hash\5c+plus\5c;semi\5c<lt\5c>gt\5c"q,DC=corp`},
		{`CN=\20lead and trail\20,DC=corp`, `CN=\5c20lead and trail\5c20,DC=corp`},
		{"CN=José Müller,DC=corp", `CN=Jos\c3\a9 M\c3\bcller,DC=corp`},
		{`CN=Jos\C3\A9,DC=corp`, `CN=Jos\5cC3\5cA9,DC=corp`},
		{"CN=nul\x00,DC=corp", `CN=nul\00,DC=corp`},
		{`CN=x)(member=*,DC=corp`, `CN=x\29\28member=\2a,DC=corp`},
	} {
		got := fill(c.GroupsFilter, "alice", tc.dn)
		if want := pre + tc.want + "))"; got != want {
			t.Errorf("DN %q:\n got %s\nwant %s", tc.dn, got, want)
			continue
		}
		f, err := ldap.CompileFilter(got)
		if err != nil {
			t.Fatalf("%s does not compile: %v", got, err)
		}
		// One AND of two parts, the second one extensible match of member
		// by the in-chain rule whose value is the DN, byte for byte.
		if len(f.Children) != 2 {
			t.Fatalf("%s: %d parts", got, len(f.Children))
		}
		m := f.Children[1]
		if m.Tag != ldap.FilterExtensibleMatch || len(m.Children) != 3 {
			t.Fatalf("%s: not one extensible match: %s", got, ldap.FilterMap[uint64(m.Tag)])
		}
		if rule, attr, val := m.Children[0].Value, m.Children[1].Value, m.Children[2].Data.String(); rule != InChainRule || attr != "member" || val != tc.dn {
			t.Errorf("%s: rule %v, attribute %v, value %q; want %s, member, %q", got, rule, attr, val, InChainRule, tc.dn)
		}
	}
}
