package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/tokens"
)

// TestCommandsFindTheServiceFiles: token and user commands given only
// -file USERS edit the files the service reads: those of the configuration
// (./backupweb.ini, or the packaged one) whose users_file is USERS, in its
// state_dir, after moving one left at its old default place; with no such
// configuration, the files beside USERS, with a note; a -config naming
// another user file is refused.
func TestCommandsFindTheServiceFiles(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+testHashA+"\nbob:"+testHashB+"\n"), 0o600)
	state := filepath.Join(dir, "state")
	ini := "[server]\nstate_dir = " + state + "\n[backups]\ndir = " + dir +
		"\n[authentication]\ntype = flask-login\nuse_bcrypt = True\nusers_file = " + users + "\n"
	count := func(path string) int {
		list, err := tokens.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	// No configuration names the file: beside it, with a note.
	t.Chdir(t.TempDir())
	if code, _, stderr := runTokenCmd("add", "-file", users, "alice"); code != exitOK || !strings.Contains(stderr, "note: "+users+": found no configuration") {
		t.Fatalf("add without a configuration: %d %s", code, stderr)
	}
	if count(users+".tokens") != 1 {
		t.Fatal("the token is not beside the user file")
	}

	// ./backupweb.ini names it: the file moves into state_dir, once, and
	// the new token goes there.
	t.Chdir(dir)
	os.WriteFile(filepath.Join(dir, "backupweb.ini"), []byte(ini), 0o600)
	code, _, stderr := runTokenCmd("add", "-file", users, "bob")
	if code != exitOK || !strings.Contains(stderr, "moved "+users+".tokens to "+filepath.Join(state, "tokens")) || strings.Contains(stderr, "note:") {
		t.Fatalf("add with ./backupweb.ini: %d %s", code, stderr)
	}
	if count(filepath.Join(state, "tokens")) != 2 {
		t.Fatal("state_dir/tokens does not hold both tokens")
	}
	if _, err := os.Stat(users + ".tokens"); err == nil {
		t.Fatal("the old tokens file stays")
	}
	if code, _, stderr := runUserCmd("", "del", "-file", users, "bob"); code != exitOK || count(filepath.Join(state, "tokens")) != 1 {
		t.Fatalf("user del did not end bob's token in state_dir: %d %s", code, stderr)
	}

	// The packaged configuration, from another folder.
	t.Chdir(t.TempDir())
	pkg, _ := usePackagedPaths(t, t.TempDir())
	os.WriteFile(pkg, []byte(ini), 0o600)
	if code, _, stderr := runTokenCmd("add", "-file", users, "alice"); code != exitOK || count(filepath.Join(state, "tokens")) != 2 {
		t.Fatalf("add with the packaged configuration: %d %s", code, stderr)
	}

	// A -config for another user file.
	other := filepath.Join(dir, "other.ini")
	os.WriteFile(other, []byte(strings.ReplaceAll(ini, "users_file = "+users, "users_file = "+users+"2")), 0o600)
	list, _ := tokens.Read(filepath.Join(state, "tokens"))
	if code, _, stderr := runTokenCmd("revoke", "-file", users, "-config", other, list[0].ID); code != exitError || !strings.Contains(stderr, "names the user file "+users+"2, not "+users) {
		t.Fatalf("revoke with another configuration: %d %s", code, stderr)
	}
}
