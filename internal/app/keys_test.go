package app

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKeysDocumented checks that every declared [authentication] key has
// its row in docs/configuration.md's [authentication] table (a row's first
// cell names one key or several, each in backquotes), and that every row
// there names declared keys only.
func TestKeysDocumented(t *testing.T) {
	text, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "\n## `[authentication]`\n")
	if !ok {
		t.Fatal("docs/configuration.md has no [authentication] heading")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(cell, -1) {
			documented[m[1]] = true
		}
	}
	known := knownKeys()
	for k := range known {
		if !documented[k] {
			t.Errorf("key %s has no row in docs/configuration.md's [authentication] table", k)
		}
	}
	for k := range documented {
		if !known[k] {
			t.Errorf("docs/configuration.md documents [authentication] %s, which no type declares", k)
		}
	}
}

// TestKeyKinds checks the declarations that drive checks elsewhere: the
// secrets, the files check-config -as-service judges, and the keys a
// reload applies without a restart.
func TestKeyKinds(t *testing.T) {
	tests := []struct {
		typ, kind string
		got       func(Type) []string
		want      []string
	}{
		{"basic", "secrets", secretNames, []string{"password"}},
		{"oauth", "secrets", secretNames, []string{"client_secret"}},
		{"flask-login", "secrets", secretNames, nil},
		{"basic", "files", fileNames, []string{"groups_file"}},
		{"flask-login", "files", fileNames, []string{"users_file", "login_template", "factors_file", "groups_file", "tokens_file"}},
		{"oauth", "files", fileNames, nil},
		{"basic", "live", liveNames, []string{"attempt_wait", "failure_window", "max_failures", "max_user_failures", "password", "use_bcrypt", "username"}},
		{"flask-login", "live", liveNames, []string{"attempt_wait", "failure_window", "max_failures", "max_user_failures", "second_factor"}},
		{"oauth", "live", liveNames, nil},
	}
	for _, tt := range tests {
		ty, _ := Lookup(tt.typ)
		if got := tt.got(ty); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s %s: %v, want %v", tt.typ, tt.kind, got, tt.want)
		}
	}
}

func secretNames(t Type) []string { return slices.Sorted(maps.Keys(t.Secrets())) }

func liveNames(t Type) []string { return slices.Sorted(maps.Keys(t.Live())) }

func fileNames(t Type) []string {
	var out []string
	for _, k := range t.Keys {
		if k.IsFile() {
			out = append(out, k.Name)
		}
	}
	return out
}
