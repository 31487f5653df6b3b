package directory

import (
	"testing"

	"github.com/go-ldap/ldap/v3"
)

// FuzzFill: whatever the name, each preset's filled user filter parses as
// the preset's one filter, an AND of two parts whose second is an
// equality match of the name attribute with exactly the name's bytes: no
// name adds a part, a wildcard or a presence test. Seeds are in
// testdata/fuzz/FuzzFill as well.
func FuzzFill(f *testing.F) {
	for _, s := range []string{"alice", "*", "a*)(uid=*", `\2a`, "\x00", "\xff\xfe", "é", "((((", ")))", "", "a\\"} {
		f.Add(s)
	}
	var presets []Config
	for _, p := range []string{PresetOpenLDAP, PresetActiveDirectory} {
		presets = append(presets, Config{Preset: p}.WithDefaults())
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, c := range presets {
			p, err := ldap.CompileFilter(fill(c.UserFilter, name, ""))
			if err != nil {
				t.Fatalf("%s, %q: %v", c.Preset, name, err)
			}
			if p.Tag != ldap.FilterAnd || len(p.Children) != 2 {
				t.Fatalf("%s, %q: not an AND of two parts", c.Preset, name)
			}
			eq := p.Children[1]
			if eq.Tag != ldap.FilterEqualityMatch || len(eq.Children) != 2 {
				t.Fatalf("%s, %q: the name's part is %s", c.Preset, name, ldap.FilterMap[uint64(eq.Tag)])
			}
			if got := eq.Children[0].Data.String(); got != c.NameAttribute() {
				t.Fatalf("%s, %q: compares %s", c.Preset, name, got)
			}
			if got := eq.Children[1].Data.String(); got != name {
				t.Fatalf("%s, %q: compares with %q", c.Preset, name, got)
			}
		}
	})
}
