package groupfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name    string
		data    string
		want    map[string][]string // user: groups
		errLine int                 // > 0: refused at this line
		errHas  string
	}{
		{name: "apache example", data: "# groups\nadmins: alice\noperators: alice bob\n", want: map[string][]string{"alice": {"admins", "operators"}, "bob": {"operators"}}},
		{name: "tabs and spaces", data: "ops:\talice \t bob  \n  admins :alice\n", want: map[string][]string{"alice": {"admins", "ops"}, "bob": {"ops"}}},
		{name: "group on several lines", data: "ops: alice\nops: bob\nops: alice\n", want: map[string][]string{"alice": {"ops"}, "bob": {"ops"}}},
		{name: "quoted members", data: `ops: "carol smith" 'dave jones' "say \"hi\""` + "\n", want: map[string][]string{"carol smith": {"ops"}, "dave jones": {"ops"}, `say "hi"`: {"ops"}}},
		{name: "continuation", data: "ops: alice \\\n  bob\nadmins: ca\\\nrol\n", want: map[string][]string{"alice": {"ops"}, "bob": {"ops"}, "carol": {"admins"}}},
		{name: "double backslash is no continuation", data: "ops: alice\\\\\nadmins: bob\n", want: map[string][]string{`alice\\`: {"ops"}, "bob": {"admins"}}},
		{name: "CRLF", data: "ops: alice\r\nadmins: bob\r\n", want: map[string][]string{"alice": {"ops"}, "bob": {"admins"}}},
		{name: "empty group", data: "ops:\n", want: map[string][]string{}},
		{name: "comments and blanks", data: "\n   \n# ops: mallory\n  # also: mallory\n", want: map[string][]string{}},
		{name: "member with a colon", data: "ops: a:b\n", want: map[string][]string{"a:b": {"ops"}}},
		{name: "no colon", data: "ops: alice\nadmins alice\n", errLine: 2, errHas: "no colon"},
		{name: "no group name", data: ": alice\n", errLine: 1, errHas: "no group name"},
		{name: "spaced group name", data: "big ops: alice\n", errLine: 1, errHas: "space"},
		{name: "comma in group name", data: "a,b: alice\n", errLine: 1, errHas: "comma"},
		{name: "unclosed quote", data: "ops: alice\nadmins: \"bob\n", errLine: 2, errHas: "quote"},
		{name: "control character", data: "ops: al\x00ice\n", errLine: 1, errHas: "control"},
		{name: "invalid UTF-8", data: "ops: alice\nadmins: \xff\n", errLine: 2, errHas: "UTF-8"},
		{name: "continued line reports its first line", data: "ops: a \\\n b \\\n \"c\n", errLine: 1, errHas: "quote"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse("groups", []byte(tt.data))
			if tt.errLine > 0 {
				le, ok := err.(*LineError)
				if !ok || le.Line != tt.errLine || !strings.Contains(le.Msg, tt.errHas) || tab != nil {
					t.Fatalf("error %v, want line %d saying %q", err, tt.errLine, tt.errHas)
				}
				if !strings.HasPrefix(err.Error(), "groupfile: groups:") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for user, groups := range tt.want {
				if got := tab.GroupsOf(user); !slices.Equal(got, groups) {
					t.Errorf("%q: groups %q, want %q", user, got, groups)
				}
			}
			if got := tab.Users(); len(got) != len(tt.want) {
				t.Errorf("users %q, want %d", got, len(tt.want))
			}
		})
	}
}

func TestParseRefusesHugeFiles(t *testing.T) {
	if _, err := Parse("g", make([]byte, MaxSize+1)); err == nil {
		t.Fatal("a file over MaxSize was accepted")
	}
}

// FuzzParse checks that no input panics, that an accepted file gives
// sorted, repeat-free groups without commas, and that an accepted file
// re-written in its plain form reads the same.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.htgroup")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Parse("fuzz", data)
		if err != nil {
			if tab != nil {
				t.Fatal("a table with an error")
			}
			return
		}
		if !utf8.Valid(data) {
			t.Fatal("invalid UTF-8 accepted")
		}
		byGroup := map[string][]string{}
		for _, u := range tab.Users() {
			gs := tab.GroupsOf(u)
			if !slices.IsSorted(gs) || len(slices.Compact(slices.Clone(gs))) != len(gs) {
				t.Fatalf("%q: groups %q not sorted or repeated", u, gs)
			}
			for _, g := range gs {
				if g == "" || strings.ContainsAny(g, ", \t:") {
					t.Fatalf("group name %q", g)
				}
				byGroup[g] = append(byGroup[g], u)
			}
		}
		var plain strings.Builder
		for g, us := range byGroup {
			plain.WriteString(g + ":")
			for _, u := range us {
				if strings.ContainsAny(u, "\"'\\") {
					return // plain form cannot quote it simply
				}
				plain.WriteString(` "` + u + `"`)
			}
			plain.WriteString("\n")
		}
		again, err := Parse("plain", []byte(plain.String()))
		if err != nil {
			t.Fatalf("plain form %q refused: %v", plain.String(), err)
		}
		for _, u := range tab.Users() {
			if !slices.Equal(again.GroupsOf(u), tab.GroupsOf(u)) {
				t.Fatalf("%q: %q, then %q", u, tab.GroupsOf(u), again.GroupsOf(u))
			}
		}
	})
}
