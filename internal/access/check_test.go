package access

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rules []string
		want  []string // prefixes of the problems, in order
	}{
		{"backup service example", backupService, nil},
		{"no slash after ^", []string{"* ^admin deny"}, []string{"rule1 (* ^admin deny) never matches"}},
		{"matches nothing", []string{`* ^/a[^\x00-\x{10FFFF}] deny`}, []string{"rule1 (* ^/a[^\\x00-\\x{10FFFF}] deny) never matches"}},
		{"same rule twice", []string{"GET ^/a allow", "GET ^/a deny"}, []string{"rule2 (GET ^/a deny) never decides: rule1"}},
		{"prefix covers longer", []string{"* ^/admin deny", "GET ^/admin/users$ allow user:alice"}, []string{"rule2 (GET ^/admin/users$ allow user:alice) never decides: rule1"}},
		{"catch-all first", []string{"* ^/ deny", "* ^/x allow"}, []string{"rule2 (* ^/x allow) never decides: rule1"}},
		{"subjects within", []string{"* ^/a deny user:a,group:g", "POST ^/a/b allow group:g"}, []string{"rule2 (POST ^/a/b allow group:g) never decides: rule1"}},
		{"narrower subjects do not shadow", []string{"* ^/a deny user:a", "* ^/a allow"}, nil},
		{"narrower methods do not shadow", []string{"GET ^/a deny", "* ^/a allow"}, nil},
		{"methods within", []string{"GET,POST ^/a deny", "POST ^/a/b allow"}, []string{"rule2 (POST ^/a/b allow) never decides: rule1"}},
		{"pattern with more than a literal does not cover", []string{"* ^/a$ deny", "* ^/a/b allow"}, nil},
		{"case-folded literal is not a prefix", []string{"* ^/a deny", "* (?i)^/a/b allow"}, nil},
		{"anonymous does not shadow a deny", []string{"GET ^/status anonymous", "* ^/status deny"}, nil},
		{"deny shadows anonymous", []string{"* ^/status deny", "GET ^/status$ anonymous"}, []string{"rule2 (GET ^/status$ anonymous) never decides: rule1"}},
		{"host condition narrows", []string{"* ^/ deny @a.example.com", "* ^/x allow"}, nil},
		{"hosts within", []string{"* ^/ deny @a.example.com,b.example.com", "* ^/x allow @b.example.com"}, []string{"rule2 (* ^/x allow) never decides: rule1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRules(t, false, tt.rules...).Check()
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d: %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %q, want it to start %q", got[i], tt.want[i])
				}
			}
		})
	}
}

// TestCheckIsSound checks on random rule lists that every rule Check calls
// shadowed really never decides: for every request the reference
// evaluation gives, the shadowed rule is never the one that decides.
func TestCheckIsSound(t *testing.T) {
	rules := []string{"* ^/ deny", "GET ^/a allow", "GET ^/a/b allow group:g", "* ^/a deny user:u", "POST ^/b allow",
		"GET,POST ^/b second_factor", "GET ^/b$ anonymous", "* ^/a/b$ deny", "GET ^/ allow group:g,user:u"}
	paths := []string{"/", "/a", "/a/b", "/a/bc", "/b", "/bx", "/c"}
	for mask := 1; mask < 1<<len(rules); mask += 7 {
		var lines []string
		for i, r := range rules {
			if mask&(1<<i) != 0 {
				lines = append(lines, r)
			}
		}
		rs := mustRules(t, false, lines...)
		shadowed := map[string]bool{}
		for _, p := range rs.Check() {
			shadowed[strings.SplitN(p, " ", 2)[0]] = true
		}
		for _, p := range paths {
			for _, m := range []string{"GET", "POST", "PUT"} {
				for _, who := range []Who{nobody, {SignedIn: true, Name: "u", GroupsKnown: true}, {SignedIn: true, Name: "v", Groups: []string{"g"}, GroupsKnown: true}} {
					if _, rule, _ := reference(rs, m, "h", p, true, who); shadowed[rule] {
						t.Fatalf("rules %q: Check says %s never decides, but it decides %s %s for %+v", lines, rule, m, p, who)
					}
				}
			}
		}
	}
}

func TestExplain(t *testing.T) {
	rs := mustRules(t, true, "GET ^/status$ anonymous", "* ^/admin/ allow group:admins @backups.example.com")
	rs.List = append([]Rule{OnlyUsers([]string{"alice", "bob"})}, rs.List...)
	want := []string{
		"allow_users: * ^/ deny (every signed-in user but alice, bob)",
		"rule1: GET ^/status$ anonymous",
		"rule2: * ^/admin/ allow group:admins (hosts backups.example.com)",
		"default: deny (no rule named the request)",
	}
	got := rs.Explain()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("explain:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
