package main

import (
	"context"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{"plain", "BACKUP_SECRET_KEY=abc\n", map[string]string{"BACKUP_SECRET_KEY": "abc"}, ""},
		{"comments and blanks", "# c\n; c\n\n  \nA=1\n", map[string]string{"A": "1"}, ""},
		{"no equals sign is ignored", "junk\nA=1\n", map[string]string{"A": "1"}, ""},
		{"spaces around", "  A = one two  \n", map[string]string{"A": "one two"}, ""},
		{"double quotes", `A="x \"y\" \\ \$z"` + "\n", map[string]string{"A": `x "y" \ $z`}, ""},
		{"single quotes keep backslashes", `A='x \n y'` + "\n", map[string]string{"A": `x \n y`}, ""},
		{"dollar kept", "A=$2b$12$abc\n", map[string]string{"A": "$2b$12$abc"}, ""},
		{"continuation", "A=one\\\ntwo\n", map[string]string{"A": "onetwo"}, ""},
		{"later wins", "A=1\nA=2\n", map[string]string{"A": "2"}, ""},
		{"empty value", "A=\n", map[string]string{"A": ""}, ""},
		{"bad name", "1A=x\n", nil, `env:1: "1A" is not a variable name`},
		{"unclosed quote", "A=\"x\n", nil, "env:1: A: the quote is not closed"},
		{"text after quote", "A=\"x\" y\n", nil, "env:1: A: text after the closing quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseEnvFile(strings.NewReader(tt.in), "env")
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestCheckConfigAsServiceReadsUnitEnv runs the first-use step as pasted:
// check-config -as-service with the key only in the unit's environment
// file passes, though the shell lacks it; a key only in the shell does not
// count, and a missing environment file is no environment at all.
func TestCheckConfigAsServiceReadsUnitEnv(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skip("no current user:", err)
	}
	old := serviceUser
	serviceUser = me.Username // an account that exists here, owning the files
	t.Cleanup(func() { serviceUser = old })
	dir := t.TempDir()
	_, keyFile := usePackagedPaths(t, dir)
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+testHashA+"\n"), 0o600)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	config := filepath.Join(dir, "other.ini")
	os.WriteFile(config, []byte("[server]\nstate_dir = "+state+"\n[backups]\ndir = "+dir+
		"\n[authentication]\ntype = flask-login\nusers_file = "+users+"\nuse_bcrypt = True\n"), 0o600)
	key := strings.Repeat("ab", 32)
	tests := []struct {
		name     string
		file     string // the environment file; "-" none
		shellKey bool
		code     int
		want     string
	}{
		{"key in the unit's file only", "# made by the package\nBACKUP_SECRET_KEY=" + key + "\n", false, exitOK, "configuration ok"},
		{"quoted key in the file", "BACKUP_SECRET_KEY=\"" + key + "\"\n", false, exitOK, "configuration ok"},
		{"key in the shell only", "OTHER=1\n", true, exitError, "BACKUP_SECRET_KEY"},
		{"no environment file", "-", true, exitError, "BACKUP_SECRET_KEY"},
		{"broken environment file", "BACKUP_SECRET_KEY=\"" + key + "\n", false, exitError, keyFile + ":1: BACKUP_SECRET_KEY: the quote is not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(keyFile)
			if tt.file != "-" {
				os.WriteFile(keyFile, []byte(tt.file), 0o600)
			}
			env := map[string]string{}
			if tt.shellKey {
				env["BACKUP_SECRET_KEY"] = key
			}
			c, stdout, stderr := testCLI(context.Background(), "", env)
			code := c.main([]string{"check-config", "-as-service", "-config", config})
			if out := stdout.String() + stderr.String(); code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tt.code, tt.want, out)
			}
			if strings.Contains(stderr.String(), key) {
				t.Errorf("the key was printed:\n%s", stderr)
			}
		})
	}
}
