package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// runSessionCLI runs `backupweb session args...` with the instances'
// environment and returns the exit code, stdout and stderr.
func runSessionCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c, out, errs := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": instancesKey, "REDIS_PASSWORD": redisPassword})
	code := c.main(append([]string{"session"}, args...))
	return code, out.String(), errs.String()
}

// sessionID returns the id `session list` printed for user's one session.
func sessionID(t *testing.T, list, user string) string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == user {
			return f[0]
		}
	}
	t.Fatalf("no session of %s in:\n%s", user, list)
	return ""
}

func TestSessionListAndRevokeOnRedis(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "alice", "bob")
	conf := redisConfig(srv, dir, users, "prefix = sess:", "")
	a, b := startInstance(t, conf), startInstance(t, conf)
	confPath := filepath.Join(t.TempDir(), "backupweb.ini")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	alice, _ := signIn(t, a.url, "alice", "pw-alice")
	bob, _ := signIn(t, b.url, "bob", "pw-bob")
	code, list, stderr := runSessionCLI(t, "list", "-config", confPath)
	if code != exitOK || !strings.Contains(list, "flask-login") || !strings.Contains(list, "127.0.0.1") {
		t.Fatalf("session list: %d %q %s", code, list, stderr)
	}
	id := sessionID(t, list, "alice")
	if strings.Contains(alice, id) || len(id) >= len(alice) {
		t.Fatalf("the listed id %q shows the cookie", id)
	}
	if _, only, _ := runSessionCLI(t, "list", "-config", confPath, "-user", "bob"); strings.Contains(only, "alice") || !strings.Contains(only, "bob") {
		t.Fatalf("list -user bob: %q", only)
	}
	if code, _, stderr := runSessionCLI(t, "revoke", "-config", confPath, id); code != exitOK {
		t.Fatalf("revoke: %s", stderr)
	}
	for _, in := range []*instance{a, b} {
		if code, _, _ := send(t, "GET", in.url+"/api/backups", alice, nil, ""); code != http.StatusUnauthorized {
			t.Fatalf("%s: alice's revoked session answered %d", in.url, code)
		}
		if code, _, _ := send(t, "GET", in.url+"/api/backups", bob, nil, ""); code != http.StatusOK {
			t.Fatalf("%s: bob's session answered %d", in.url, code)
		}
	}
	if code, _, _ := runSessionCLI(t, "revoke", "-config", confPath, "-user", "bob"); code != exitOK {
		t.Fatal("revoke -user bob")
	}
	if code, _, _ := send(t, "GET", a.url+"/api/backups", bob, nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("bob's session after revoke -user: %d", code)
	}
	if code, _, _ := runSessionCLI(t, "revoke", "-config", confPath, "AAAAAAAAAAAA"); code != exitError {
		t.Fatal("an unknown id was revoked")
	}
}

func TestSessionListOnTheFileStore(t *testing.T) {
	dir := t.TempDir()
	users := addUsers(t, dir, "alice")
	conf := "[server]\nlisten = 127.0.0.1:0\nstate_dir = " + filepath.Join(dir, "state") + "\naccess_log = false\n[backups]\ndir = " + dir +
		"\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = " + users + "\n"
	in := startInstance(t, conf)
	alice, _ := signIn(t, in.url, "alice", "pw-alice")
	confPath := filepath.Join(t.TempDir(), "backupweb.ini")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	code, list, stderr := runSessionCLI(t, "list", "-config", confPath)
	if code != exitOK {
		t.Fatalf("list: %s", stderr)
	}
	if id := sessionID(t, list, "alice"); strings.Contains(alice, id) {
		t.Fatal("the listed id shows the cookie")
	}
	id := sessionID(t, list, "alice")
	if code, _, stderr := runSessionCLI(t, "revoke", "-config", confPath, id); code != exitOK {
		t.Fatalf("revoke on the file store: %d %s", code, stderr)
	}
	// The command returns once the running service has taken the
	// request: the session's next request is refused.
	if code, _, _ := send(t, "GET", in.url+"/api/backups", alice, nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("the revoked session's next request: %d, want 401", code)
	}
	// A user's sessions at once, by name.
	again, _ := signIn(t, in.url, "alice", "pw-alice")
	if code, _, stderr := runSessionCLI(t, "revoke", "-config", confPath, "-user", "alice"); code != exitOK {
		t.Fatalf("revoke -user on the file store: %d %s", code, stderr)
	}
	if code, _, _ := send(t, "GET", in.url+"/api/backups", again, nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("the revoked user's next request: %d, want 401", code)
	}
	if code, _, _ := runSessionCLI(t, "revoke", "-config", confPath, "AAAAAAAAAAAA"); code != exitError {
		t.Fatal("an unknown id was accepted")
	}
}

// TestSessionRevokeIDStartingWithADash: a listed id is base64url, so one
// in 32 starts with '-'; revoke takes it as the id, not as a flag.
func TestSessionRevokeIDStartingWithADash(t *testing.T) {
	c, _, _ := testCLI(t.Context(), "", nil)
	for _, tc := range []struct {
		args       []string
		id, user   string
		wantParsed bool
	}{
		{[]string{"revoke", "-config", "F", "-HlTENmxohzU"}, "-HlTENmxohzU", "", true},
		{[]string{"revoke", "-HlTENmxohzU", "-config", "F"}, "-HlTENmxohzU", "", true},
		{[]string{"revoke", "-config", "F", "--", "-HlTENmxohzU"}, "-HlTENmxohzU", "", true},
		{[]string{"revoke", "--config=F", "_HlTENmxohzU"}, "_HlTENmxohzU", "", true},
		{[]string{"revoke", "-config", "F", "-user", "-HlTENmxohzU"}, "", "-HlTENmxohzU", true},
		// Not the form of an id: still an unknown flag.
		{[]string{"revoke", "-config", "F", "-HlTENmxohz"}, "", "", false},
		{[]string{"revoke", "-config", "F", "-HlTENmx.hzU"}, "", "", false},
		{[]string{"list", "-config", "F", "-HlTENmxohzU"}, "", "", false},
	} {
		sa, _, ok := parseSessionArgs(c, tc.args)
		if ok != tc.wantParsed || ok && (sa.id != tc.id || sa.user != tc.user || sa.config != "F") {
			t.Errorf("%q: parsed %v, id %q user %q config %q; want %v, id %q user %q", tc.args, ok, sa.id, sa.user, sa.config, tc.wantParsed, tc.id, tc.user)
		}
	}
}
