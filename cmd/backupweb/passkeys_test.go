package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckConfigPasskeys: passkeys (second_factor optional or required)
// need [server] public_url with a host name; passkey_login needs a
// second factor. Every problem names its section and key and says how to
// fix it.
func TestCheckConfigPasskeys(t *testing.T) {
	const users = "alice:$2b$12$qfeZmHvsxlDW8N2/YfnqZudyqkieQPQ4UbLzZH9l3wVK30hYkYJAm\n"
	auth := "[authentication]\ntype = flask-login\nusers_file = users\nuse_bcrypt = true\n"
	for _, tt := range []struct {
		name string
		ini  string
		code int
		want []string
	}{
		{"off needs nothing", auth, exitOK, nil},
		{"optional without public_url: TOTP only", auth + "second_factor = optional\n", exitOK,
			[]string{"warning:", "[authentication] second_factor: passkeys are not offered without [server] public_url"}},
		{"passkey_login without public_url", auth + "second_factor = optional\npasskey_login = true\n", exitError,
			[]string{"[authentication] passkey_login: passkeys need [server] public_url"}},
		{"passkey_login without public_url, type written as the alias login",
			strings.Replace(auth, "flask-login", "Login", 1) + "second_factor = optional\npasskey_login = true\n", exitError,
			[]string{"[authentication] passkey_login: passkeys need [server] public_url"}},
		{"required with public_url", "[server]\npublic_url = https://backups.example.com\n" + auth + "second_factor = required\npasskey_login = true\n", exitOK, nil},
		{"localhost over http", "[server]\npublic_url = http://localhost:8080\n" + auth + "second_factor = optional\n", exitOK, nil},
		{"plain http elsewhere", "[server]\npublic_url = http://backups.example.com\n" + auth + "second_factor = optional\n", exitError,
			[]string{"[server] public_url:", "plain http", "https://"}},
		{"an IP address", "[server]\npublic_url = https://10.0.0.5\n" + auth + "second_factor = optional\n", exitError,
			[]string{"[authentication] second_factor:", "relying-party id", "host name"}},
		{"passkey_login without a second factor", "[server]\npublic_url = https://backups.example.com\n" + auth + "passkey_login = true\n", exitError,
			[]string{"[authentication] passkey_login: needs second_factor = optional or required"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			if err := os.WriteFile(filepath.Join(dir, "users"), []byte(users), 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "test.ini")
			if err := os.WriteFile(path, []byte(tt.ini), 0o600); err != nil {
				t.Fatal(err)
			}
			c, _, stderr := testCLI(context.Background(), "", map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)})
			if code := c.main([]string{"check-config", "-config", path}); code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tt.code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}
