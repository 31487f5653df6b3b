package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/redistest"
	"github.com/backupweb/backupweb/tokens"
)

// TestTokenRevokedAtOnceOnEveryInstance revokes a token with the
// configuration's Redis named: the other instance refuses it at its very
// next request, long before it reads the tokens file again.
func TestTokenRevokedAtOnceOnEveryInstance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "alice")
	conf := redisConfig(srv, dir, users, "prefix = tok:", "")
	_, out, stderr := runTokenCmd("add", "-file", users, "alice")
	tok := strings.TrimSpace(out)
	if !tokens.Wellformed(tok) {
		t.Fatalf("token add: %s", stderr)
	}
	list, err := tokens.Read(tokens.DefaultPath(users))
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	a, b := startInstance(t, conf), startInstance(t, conf)
	for _, in := range []*instance{a, b} {
		if got := bearer(t, "GET", in.url+"/api/backups", tok, nil).StatusCode; got != http.StatusOK {
			t.Fatalf("%s before the revocation: %d", in.url, got)
		}
	}
	confPath := filepath.Join(t.TempDir(), "backupweb.ini")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, errs := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": instancesKey, "REDIS_PASSWORD": redisPassword})
	if code := c.main([]string{"token", "revoke", "-file", users, "-config", confPath, list[0].ID}); code != exitOK {
		t.Fatalf("token revoke: %d %s", code, errs)
	}
	// At once: both instances, the next request, no waiting.
	for _, in := range []*instance{a, b} {
		if got := bearer(t, "GET", in.url+"/api/backups", tok, nil).StatusCode; got != http.StatusUnauthorized {
			t.Fatalf("%s right after the revocation: %d, want 401", in.url, got)
		}
	}
}
