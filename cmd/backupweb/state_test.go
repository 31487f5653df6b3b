package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/tokens"
)

// stateCmd runs `backupweb ARGS` with the instances' secret key and Redis
// password and returns the exit code, standard output and error.
func stateCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	c, out, errs := testCLI(t.Context(), "", map[string]string{"BACKUP_SECRET_KEY": instancesKey, "REDIS_PASSWORD": redisPassword})
	code := c.main(args)
	return code, out.String(), errs.String()
}

// TestStateImportExport: the factors file and the tokens file made by the
// commands on one disk are copied into Redis by state import, whose
// second run copies nothing; the commands with -config then act in Redis
// (no file written); state export writes them out again.
func TestStateImportExport(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: redisPassword})
	dir := t.TempDir()
	users := addUsers(t, dir, "alice", "bob")
	conf := filepath.Join(dir, "backupweb.ini")
	if err := os.WriteFile(conf, []byte(redisConfig(srv, dir, users, "prefix = state:", "second_factor = optional")), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := stateCmd(t, "user", "recovery-codes", "-file", users, "alice"); code != exitOK {
		t.Fatalf("recovery-codes: %s", errs)
	}
	if code, _, errs := stateCmd(t, "token", "add", "-file", users, "alice"); code != exitOK {
		t.Fatalf("token add: %s", errs)
	}
	for _, want := range []string{
		"factors: 1 copied, 0 already there\ntokens: 1 copied, 0 already there\n",
		"factors: 0 copied, 1 already there\ntokens: 0 copied, 1 already there\n",
	} {
		code, out, errs := stateCmd(t, "state", "import", "-config", conf)
		if code != exitOK || out != want {
			t.Fatalf("state import: exit %d, %q (%s), want %q", code, out, errs, want)
		}
	}
	os.Remove(factors.DefaultPath(users))
	os.Remove(tokens.DefaultPath(users))
	if code, out, errs := stateCmd(t, "user", "factors", "-config", conf, "alice"); code != exitOK || !strings.Contains(out, "recovery codes left: 10") {
		t.Fatalf("user factors -config after import: %d %q %s", code, out, errs)
	}
	if code, _, errs := stateCmd(t, "user", "recovery-codes", "-config", conf, "bob"); code != exitOK {
		t.Fatalf("recovery-codes -config: %s", errs)
	}
	if code, out, _ := stateCmd(t, "token", "list", "-config", conf); code != exitOK || strings.Count(out, "alice") != 1 {
		t.Fatalf("token list -config: %d %q", code, out)
	}
	for _, p := range []string{factors.DefaultPath(users), tokens.DefaultPath(users), filepath.Join(dir, "state")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("a command with -config naming Redis wrote %s", p)
		}
	}
	code, out, errs := stateCmd(t, "state", "export", "-config", conf)
	if code != exitOK || !strings.Contains(out, "factors: 2 users") || !strings.Contains(out, "tokens: 1 written") {
		t.Fatalf("state export: %d %q %s", code, out, errs)
	}
	// Where the service would read them with store = file: state_dir.
	set, err := factors.Read(filepath.Join(dir, "state", "factors"), nil)
	if err != nil || set.Len() != 2 {
		t.Fatalf("the exported factors file: %d users, %v", set.Len(), err)
	}
	if code, _, errs := stateCmd(t, "user", "factors", "-reset", "-config", conf, "alice"); code != exitOK {
		t.Fatalf("factors -reset -config: %s", errs)
	}
	if code, out, _ := stateCmd(t, "user", "factors", "-config", conf, "alice"); code != exitOK || strings.Contains(out, "recovery") {
		t.Fatalf("after the reset: %q", out)
	}
}
