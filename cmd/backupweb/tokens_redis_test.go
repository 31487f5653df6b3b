package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/tokens"
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

// TestAccountPageRevocationReachesEveryInstance revokes a token on one
// instance's account page: the other refuses it at its next request.
func TestAccountPageRevocationReachesEveryInstance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "alice")
	_, out, _ := runTokenCmd("add", "-file", users, "alice")
	tok := strings.TrimSpace(out)
	list, err := tokens.Read(tokens.DefaultPath(users))
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	conf := redisConfig(srv, dir, users, "prefix = acct:", "")
	a, b := startInstance(t, conf), startInstance(t, conf)
	if got := bearer(t, "GET", b.url+"/api/backups", tok, nil).StatusCode; got != http.StatusOK {
		t.Fatalf("before: %d", got)
	}
	sid, _ := signIn(t, a.url, "alice", "pw-alice")
	code, page, _ := send(t, "GET", a.url+"/_backupweb/account", sid, nil, "text/html")
	csrf := testkit.FormToken([]byte(page))
	if code != http.StatusOK || csrf == "" || !strings.Contains(page, list[0].ID) {
		t.Fatalf("account page: %d", code)
	}
	if code, _, _ := send(t, "POST", a.url+"/_backupweb/account/tokens/revoke", sid, url.Values{"csrf_token": {csrf}, "id": {list[0].ID}}, ""); code != http.StatusSeeOther {
		t.Fatalf("revoke on the account page: %d", code)
	}
	if got := bearer(t, "GET", b.url+"/api/backups", tok, nil).StatusCode; got != http.StatusUnauthorized {
		t.Fatalf("the other instance right after: %d, want 401", got)
	}
}
