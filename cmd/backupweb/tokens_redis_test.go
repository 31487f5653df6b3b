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

// tokenCmdAt runs `backupweb token ARGS -config conf` with the
// instances' secret key and Redis password, failing the test on an exit
// other than 0; it returns standard output.
func tokenCmdAt(t *testing.T, conf string, args ...string) string {
	t.Helper()
	confPath := filepath.Join(t.TempDir(), "backupweb.ini")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c, out, errs := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": instancesKey, "REDIS_PASSWORD": redisPassword})
	if code := c.main(append([]string{"token", args[0], "-config", confPath}, args[1:]...)); code != exitOK {
		t.Fatalf("token %v: %d %s", args, code, errs)
	}
	return out.String()
}

// redisTokenID returns the id of the one token `token list -config` lists.
func redisTokenID(t *testing.T, conf string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(tokenCmdAt(t, conf, "list")), "\n")
	if len(lines) != 2 {
		t.Fatalf("token list: %q, want one token", lines)
	}
	return strings.Fields(lines[1])[0]
}

// TestTokenRevokedAtOnceOnEveryInstance revokes a token with the
// configuration naming Redis, where the token was made: every instance
// refuses it at its very next request, and no tokens file was written.
func TestTokenRevokedAtOnceOnEveryInstance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "alice")
	conf := redisConfig(srv, dir, users, "prefix = tok:", "")
	tok := strings.TrimSpace(tokenCmdAt(t, conf, "add", "alice"))
	if !tokens.Wellformed(tok) {
		t.Fatalf("token add printed %q", tok)
	}
	if _, err := os.Stat(tokens.DefaultPath(users)); !os.IsNotExist(err) {
		t.Fatalf("token add -config with store = redis wrote a tokens file: %v", err)
	}
	id := redisTokenID(t, conf)
	a, b := startInstance(t, conf), startInstance(t, conf)
	for _, in := range []*instance{a, b} {
		if got := bearer(t, "GET", in.url+"/api/backups", tok, nil).StatusCode; got != http.StatusOK {
			t.Fatalf("%s before the revocation: %d", in.url, got)
		}
	}
	tokenCmdAt(t, conf, "revoke", id)
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
	conf := redisConfig(srv, dir, users, "prefix = acct:", "")
	tok := strings.TrimSpace(tokenCmdAt(t, conf, "add", "alice"))
	id := redisTokenID(t, conf)
	a, b := startInstance(t, conf), startInstance(t, conf)
	if got := bearer(t, "GET", b.url+"/api/backups", tok, nil).StatusCode; got != http.StatusOK {
		t.Fatalf("before: %d", got)
	}
	sid, _ := signIn(t, a.url, "alice", "pw-alice")
	code, page, _ := send(t, "GET", a.url+"/_backupweb/account", sid, nil, "text/html")
	csrf := testkit.FormToken([]byte(page))
	if code != http.StatusOK || csrf == "" || !strings.Contains(page, id) {
		t.Fatalf("account page: %d", code)
	}
	if code, _, _ := send(t, "POST", a.url+"/_backupweb/account/tokens/revoke", sid, url.Values{"csrf_token": {csrf}, "id": {id}}, ""); code != http.StatusSeeOther {
		t.Fatalf("revoke on the account page: %d", code)
	}
	if got := bearer(t, "GET", b.url+"/api/backups", tok, nil).StatusCode; got != http.StatusUnauthorized {
		t.Fatalf("the other instance right after: %d, want 401", got)
	}
}
