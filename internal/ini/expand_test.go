package ini

import (
	"strings"
	"testing"
)

// env is a fixed environment for expansion tests.
var env = map[string]string{
	"SECRET": "s3cr3t-value",
	"HASH":   "$2y$12$abcdefghijklmnopqrstuu5RwaW3rHJAm/5Td1uXxyzXyzXyzXyzX",
	"NESTED": "${SECRET}",
	"EMPTY":  "",
	"A_1":    "a",
}

func lookupEnv(name string) (string, bool) {
	v, ok := env[name]
	return v, ok
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name, value, want string
		problems          []string // substrings, one per expected problem, in order
	}{
		{"no reference", "plain", "plain", nil},
		{"whole value", "${SECRET}", "s3cr3t-value", nil},
		{"inside text", "pre-${A_1}-post", "pre-a-post", nil},
		{"several", "${A_1}${A_1}:${SECRET}", "aa:s3cr3t-value", nil},
		{"empty variable is set", "x${EMPTY}y", "xy", nil},
		{"bcrypt literal survives", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", nil},
		{"lone dollars", "$ $$ $a $(x) 100$", "$ $$ $a $(x) 100$", nil},
		{"expanded hash is not rescanned", "${HASH}", env["HASH"], nil},
		{"single pass", "${NESTED}", "${SECRET}", nil},
		{"double dollar not an escape", "$${A_1}", "$a", nil},
		{"unset", "x${MISSING}y", "x${MISSING}y", []string{"MISSING is not set"}},
		{"unset and set", "${MISSING}/${A_1}/${OTHER}", "${MISSING}/a/${OTHER}", []string{"MISSING", "OTHER"}},
		{"unterminated", "abc${SECRET", "abc${SECRET", []string{`without a closing "}"`}},
		{"empty name", "${}", "${}", []string{"invalid variable name"}},
		{"invalid name", "${1ABC}x${A B}", "${1ABC}x${A B}", []string{"invalid variable name", "invalid variable name"}},
		{"brace without dollar", "{SECRET}", "{SECRET}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{}
			f := Parse("app.ini", strings.NewReader("[s]\n\nkey = "+tt.value+"\n"), rep)
			f.Expand(lookupEnv)
			if got, _ := f.Section("s").Lookup("key"); got != tt.want {
				t.Errorf("value %q, want %q", got, tt.want)
			}
			ps := rep.Problems()
			if len(ps) != len(tt.problems) {
				t.Fatalf("problems %v, want %d", ps, len(tt.problems))
			}
			for i, p := range ps {
				if p.Severity != Error || p.File != "app.ini" || p.Line != 3 || p.Section != "s" || p.Key != "key" || !strings.Contains(p.Msg, tt.problems[i]) {
					t.Errorf("problem %d = %#v, want an error at app.ini:3 [s] key containing %q", i, p, tt.problems[i])
				}
			}
		})
	}
}

func TestExpandNamesVariableAndKey(t *testing.T) {
	rep := &Report{}
	f := Parse("app.ini", strings.NewReader("[authentication]\nclient_secret = ${OAUTH_SECRET}\n"), rep)
	f.Expand(lookupEnv)
	got := rep.Problems()[0].String()
	want := "error: app.ini:2: [authentication] client_secret: environment variable OAUTH_SECRET is not set (referenced as ${OAUTH_SECRET})"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestExpandEverySectionOnce(t *testing.T) {
	f := Parse("t", strings.NewReader("[DEFAULT]\nd = ${A_1}\n[x]\nk = ${SECRET}\n  ${A_1}\n[y]\nk = $${A_1}\n"), nil)
	calls := 0
	lookup := func(name string) (string, bool) { calls++; return lookupEnv(name) }
	f.Expand(lookup)
	f.Expand(lookup)
	if calls != 4 {
		t.Errorf("lookup called %d times, want 4 (Expand must run once)", calls)
	}
	checks := []struct{ section, key, want string }{
		{"x", "k", "s3cr3t-value\na"},
		{"x", "d", "a"},
		{"y", "k", "$a"},
		{DefaultSection, "d", "a"},
	}
	for _, c := range checks {
		if got, _ := f.Section(c.section).Lookup(c.key); got != c.want {
			t.Errorf("[%s] %s = %q, want %q", c.section, c.key, got, c.want)
		}
	}
}

func TestExpandNilLookupUsesEnvironment(t *testing.T) {
	t.Setenv("BACKUPWEB_CONFIG_TEST_VAR", "from-env")
	f := Parse("t", strings.NewReader("[s]\nk = ${BACKUPWEB_CONFIG_TEST_VAR}\n"), nil)
	f.Expand(nil)
	if got, _ := f.Section("s").Lookup("k"); got != "from-env" {
		t.Errorf("got %q", got)
	}
}

func TestExpandNeverEchoesValues(t *testing.T) {
	rep := &Report{}
	f := Parse("t", strings.NewReader("[s]\npassword = hunter2${NOPE}\nb = hunter2${bad name}\nc = hunter2${UNTERMINATED\nd = ${SECRET}${NOPE}\n"), rep)
	f.Expand(lookupEnv)
	if len(rep.Problems()) != 4 {
		t.Fatalf("want 4 problems, got %v", rep.Problems())
	}
	for _, p := range rep.Problems() {
		if s := p.String(); strings.Contains(s, "hunter2") || strings.Contains(s, env["SECRET"]) || strings.Contains(s, "bad name") {
			t.Errorf("problem echoes part of a value: %s", s)
		}
	}
}

func TestHasLiteralText(t *testing.T) {
	tests := map[string]bool{
		"":                false,
		"${A}":            false,
		" ${A} ${B} ":     false,
		"x${A}":           true,
		"${A}x":           true,
		"$2b$12$abc":      true,
		"${UNTERMINATED":  true,
		"plain password":  true,
		"${A}\n  ${B}\n ": false,
	}
	for v, want := range tests {
		if got := hasLiteralText(v); got != want {
			t.Errorf("hasLiteralText(%q) = %v, want %v", v, got, want)
		}
	}
}
