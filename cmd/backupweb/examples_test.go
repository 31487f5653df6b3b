package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplesPassCheckConfig keeps the files under examples/ honest: each
// passes check-config once its ${NAME} variables are set and its paths
// point at files that exist.
func TestExamplesPassCheckConfig(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.ini"))
	if err != nil || len(files) < 6 {
		t.Fatalf("examples: %v %v", files, err)
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	hash := "$2b$12$qfeZmHvsxlDW8N2/YfnqZudyqkieQPQ4UbLzZH9l3wVK30hYkYJAm"
	os.WriteFile(users, []byte("alice:"+hash+"\n"), 0o600)
	env := map[string]string{
		"BACKUP_SECRET_KEY": strings.Repeat("ab", 32),
		"BACKUP_BASIC_HASH": hash,
	}
	for _, p := range []string{"GOOGLE", "GITHUB", "GITLAB", "OIDC"} {
		env[p+"_CLIENT_ID"] = "client-id"
		env[p+"_CLIENT_SECRET"] = "client-secret"
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ReplaceAll(string(b), "/etc/backupweb/users", users)
			text = strings.ReplaceAll(text, "/var/lib/backupweb", filepath.Join(dir, "state"))
			path := filepath.Join(dir, filepath.Base(f))
			os.WriteFile(path, []byte(text), 0o600)
			c, _, stderr := testCLI(context.Background(), "", env)
			if code := c.main([]string{"check-config", "-config", path}); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, stderr.String())
			}
			if strings.Contains(stderr.String(), "error:") {
				t.Fatalf("errors:\n%s", stderr.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Error("check-config created the state directory")
	}
}
