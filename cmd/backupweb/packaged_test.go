package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// usePackagedPaths points the packaged configuration and key file at dir
// for the length of the test.
func usePackagedPaths(t *testing.T, dir string) (config, keyFile string) {
	t.Helper()
	oldConfig, oldKey := packagedConfig, packagedKeyFile
	packagedConfig, packagedKeyFile = filepath.Join(dir, "backupweb.ini"), filepath.Join(dir, "env")
	t.Cleanup(func() { packagedConfig, packagedKeyFile = oldConfig, oldKey })
	return packagedConfig, packagedKeyFile
}

// TestMissingKeyNamesPackagedKeyFile: with the package installed, a
// missing or short BACKUP_SECRET_KEY is explained with the packaged key
// file, not with advice to make a new key; elsewhere gen-secret stays the
// advice. The other keys are still checked, and nothing is built.
func TestMissingKeyNamesPackagedKeyFile(t *testing.T) {
	tests := []struct {
		name        string
		keyFile     bool   // the packaged key file exists
		atPackaged  bool   // the configuration is the packaged one
		key         string // BACKUP_SECRET_KEY; "" unset
		cmd         string
		code        int
		want, avoid []string
	}{
		{"key file exists, key unset", true, false, "", "check-config", exitError,
			[]string{"{env}", "EnvironmentFile=", "set -a; . {env}; set +a", "user_file: unknown key; did you mean users_file?"}, []string{"gen-secret"}},
		{"key file exists, key unset, serve", true, false, "", "serve", exitError,
			[]string{"{env}", "EnvironmentFile="}, []string{"gen-secret"}},
		{"key file exists, key short", true, false, "short", "check-config", exitError,
			[]string{"shorter than 32", "{env}"}, []string{"gen-secret"}},
		{"packaged configuration, key file missing", false, true, "", "check-config", exitError,
			[]string{"{env}", "is missing", "dpkg-reconfigure backupweb"}, []string{"gen-secret"}},
		{"no package", false, false, "", "check-config", exitError,
			[]string{"gen-secret"}, []string{"{env}"}},
		{"key file exists, key set", true, false, strings.Repeat("k", 64), "check-config", exitError,
			[]string{"user_file: unknown key"}, []string{"{env}", "gen-secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pkgConfig, keyFile := usePackagedPaths(t, dir)
			if tt.keyFile {
				os.WriteFile(keyFile, []byte("BACKUP_SECRET_KEY="+strings.Repeat("a", 64)+"\n"), 0o640)
			}
			users := filepath.Join(dir, "users")
			os.WriteFile(users, []byte("alice:"+testHashA+"\n"), 0o600)
			state := filepath.Join(dir, "state")
			config := filepath.Join(dir, "other.ini")
			if tt.atPackaged {
				config = pkgConfig
			}
			ini := "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + state + "\n[backups]\ndir = " + dir +
				"\n[authentication]\ntype = flask-login\nusers_file = " + users + "\nuse_bcrypt = True\nuser_file = typo\n"
			os.WriteFile(config, []byte(ini), 0o600)
			env := map[string]string{}
			if tt.key != "" {
				env["BACKUP_SECRET_KEY"] = tt.key
			}
			c, _, stderr := testCLI(context.Background(), "", env)
			if code := c.main([]string{tt.cmd, "-config", config}); code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "{env}", keyFile); !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, a := range tt.avoid {
				if a = strings.ReplaceAll(a, "{env}", keyFile); strings.Contains(stderr.String(), a) {
					t.Errorf("stderr says %q:\n%s", a, stderr)
				}
			}
			if _, err := os.Stat(state); err == nil {
				t.Error("the state folder was made although the configuration was refused")
			}
		})
	}
}
