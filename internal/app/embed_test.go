package app

import (
	"strings"
	"testing"
)

func TestSectionOf(t *testing.T) {
	env := func(name string) (string, bool) { return "from-env", name == "SET" }
	tests := []struct {
		name    string
		config  map[string]string
		key     string
		want    string
		problem string // "" when none is wanted
	}{
		{"a value as given", map[string]string{"realm": "Backups"}, "realm", "Backups", ""},
		{"keys case-insensitive, values trimmed", map[string]string{" Realm ": "  Backups "}, "realm", "Backups", ""},
		{"a bcrypt hash stays intact", map[string]string{"password": "$2b$12$abc"}, "password", "$2b$12$abc", ""},
		{"${NAME} expanded", map[string]string{"password": "x${SET}"}, "password", "xfrom-env", ""},
		{"a value of several lines", map[string]string{"authorized_users": "a@example.com,\nb@example.com"}, "authorized_users", "a@example.com,\nb@example.com", ""},
		{"unset variable", map[string]string{"password": "${UNSET}"}, "password", "${UNSET}", "[authentication] password: environment variable UNSET is not set"},
		{"a blank later line", map[string]string{"realm": "a\n\nb"}, "realm", "", "[authentication] realm: a value's lines after its first"},
		{"a comment as a later line", map[string]string{"realm": "a\n# b"}, "realm", "", "[authentication] realm: a value's lines after its first"},
		{"a carriage return", map[string]string{"realm": "a\rb"}, "realm", "", "[authentication] realm: a value must not hold a carriage return"},
		{"a key with a delimiter", map[string]string{"realm: x": "a"}, "realm", "", "[authentication] realm: x: is not a key"},
		{"a key starting a comment", map[string]string{"#realm": "a"}, "realm", "", "[authentication] #realm: is not a key"},
		{"an empty key", map[string]string{" ": "a"}, "realm", "", "a key must not be empty"},
		{"a key twice", map[string]string{"REALM": "a", "realm": "b"}, "realm", "a", `[authentication] realm: is given twice, as "REALM" and "realm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SectionOf(tt.config, env)
			if !s.Present() {
				t.Error("the section is not present")
			}
			if got := s.String(tt.key, ""); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
			}
			var problems []string
			for _, p := range s.Report().Problems() {
				problems = append(problems, p.String())
			}
			all := strings.Join(problems, "\n")
			switch {
			case tt.problem == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case tt.problem != "" && !strings.Contains(all, tt.problem):
				t.Errorf("problems %q, want one holding %q", problems, tt.problem)
			}
		})
	}
}
