package login

import (
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/userfile"
)

// fakeHash returns a well-formed bcrypt hash of the given cost; nothing is
// ever verified against it.
func fakeHash(cost string, salt byte) string {
	return "$2b$" + cost + "$" + strings.Repeat(string(salt), 53)
}

func TestDecoyCost(t *testing.T) {
	tests := []struct {
		name  string
		costs []string
		want  int
	}{
		{"one user", []string{"10"}, 10},
		{"the usual cost wins", []string{"12", "10", "12"}, 12},
		{"most common even if lower", []string{"10", "10", "14"}, 10},
		{"a tie goes to the higher cost", []string{"11", "13"}, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var entries []userfile.Entry
			for i, c := range tt.costs {
				entries = append(entries, userfile.Entry{Name: string(rune('a' + i)), Hash: fakeHash(c, 'a'), Line: i + 1})
			}
			if got := newUserSet(entries, true).decoyCost; got != tt.want {
				t.Errorf("decoy cost %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEndedUsers(t *testing.T) {
	set := func(pairs ...string) *userSet {
		var entries []userfile.Entry
		for i := 0; i < len(pairs); i += 2 {
			entries = append(entries, userfile.Entry{Name: pairs[i], Hash: pairs[i+1]})
		}
		return newUserSet(entries, false)
	}
	tests := []struct {
		name       string
		prev, next *userSet
		want       []string
	}{
		{"unchanged", set("a", "1", "b", "2"), set("b", "2", "a", "1"), nil},
		{"added", set("a", "1"), set("a", "1", "b", "2"), nil},
		{"removed", set("a", "1", "b", "2"), set("a", "1"), []string{"b"}},
		{"password changed", set("a", "1", "b", "2"), set("a", "9", "b", "2"), []string{"a"}},
		{"all gone", set("a", "1", "b", "2"), set("c", "3"), []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := endedUsers(tt.prev, tt.next)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ended %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDigestIgnoresComments(t *testing.T) {
	a, _ := userfile.Parse("a", strings.NewReader("# one\nalice:x\n"), false)
	b, _ := userfile.Parse("b", strings.NewReader("alice:x\n\n# two\n"), false)
	c, _ := userfile.Parse("c", strings.NewReader("alice:y\n"), false)
	d, _ := userfile.Parse("d", strings.NewReader("alic:ex\n"), false)
	if digestOf(a) != digestOf(b) {
		t.Error("comments and blank lines change the digest")
	}
	if digestOf(a) == digestOf(c) || digestOf(a) == digestOf(d) {
		t.Error("a changed user does not change the digest")
	}
}
