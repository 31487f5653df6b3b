package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A bcrypt hash (cost 4) for configurations that store one.
const failClosedHash = "$2b$04$XRTd2MQX.pV1qlg3Y5HZO.YqPfkMCb4I6rB0xpSYydEbIhHcQFMhy"

// TestFailClosed runs check-config and serve on the same broken files:
// each is an attempt to configure authentication that went wrong, and both
// commands must refuse it with the same message (exit 1), serve without
// ever listening.
func TestFailClosed(t *testing.T) {
	secret := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}
	tests := []struct {
		name  string
		ini   string            // written to ./backupweb.ini; {dir} is the test folder
		files map[string]string // more files in the test folder
		link  bool              // ./backupweb.ini is a link to a file that is gone
		env   map[string]string
		want  string
	}{
		{name: "commented-out header", ini: "[backups]\ndir = {dir}\n#[authentication]\ntype = basic\nusername = u\npassword = p\n",
			want: "[backups] type: is an [authentication] key but it is in [backups]; is the [authentication] header above it commented out"},
		{name: "misspelt header", ini: "[authentification]\ntype = basic\nusername = u\npassword = p\n",
			want: "did you mean [authentication]?"},
		{name: "short header", ini: "[auth]\ntype = basic\nusername = u\npassword = p\n",
			want: "did you mean [authentication]?"},
		{name: "authentication keys in server", ini: "[server]\nlisten = 127.0.0.1:0\ntype = basic\nusername = u\npassword = p\n",
			want: "[server] type: is an [authentication] key but it is in [server]"},
		{name: "header in another case", ini: "[Authentication]\ntype = basic\nusername = u\npassword = p\n",
			want: "write [authentication]"},
		{name: "section without type", ini: "[authentication]\n#type = basic\nusername = u\npassword = p\n",
			want: "[authentication] has no type key"},
		{name: "keys under DEFAULT", ini: "[DEFAULT]\ntype = basic\nusername = u\npassword = p\n",
			want: "[DEFAULT] type: is an [authentication] key but it is in [DEFAULT]"},
		{name: "indented header", ini: "[backups]\ndir = {dir}\n  [authentication]\ntype = basic\nusername = u\npassword = p\n",
			want: "the [authentication] header is indented"},
		{name: "dangling link", link: true, want: "symbolic link to"},
		{name: "port out of range", ini: "[server]\nlisten = 127.0.0.1:99999\n", want: "port 99999 is out of range"},
		{name: "backups dir is a file", ini: "[backups]\ndir = {dir}/afile\n", files: map[string]string{"afile": "x"},
			want: "afile is not a folder"},
		{name: "state_dir cannot be created", ini: "[server]\nstate_dir = {dir}/afile/state\n[authentication]\ntype = flask-login\nusers_file = {dir}/users\nuse_bcrypt = true\n",
			files: map[string]string{"afile": "x", "users": "alice:" + failClosedHash + "\n"}, env: secret,
			want: "[server] state_dir: the state folder"},
		{name: "basic hash with use_bcrypt off", ini: "[authentication]\ntype = basic\nusername = u\npassword = " + failClosedHash + "\n",
			want: "password: is a bcrypt hash but use_bcrypt is off"},
		{name: "basic with use_bycrypt", ini: "[authentication]\ntype = basic\nusername = u\npassword = " + failClosedHash + "\nuse_bycrypt = true\n",
			want: "use_bycrypt: unknown key; did you mean use_bcrypt?"},
		{name: "user file hashes with use_bcrypt off", ini: "[server]\nstate_dir = {dir}/state\n[authentication]\ntype = flask-login\nusers_file = {dir}/users\n",
			files: map[string]string{"users": "alice:" + failClosedHash + "\n"}, env: secret,
			want: "users:1: the value is a bcrypt hash but use_bcrypt is off"},
		{name: "user_file misspelt", ini: "[server]\nstate_dir = {dir}/state\n[authentication]\ntype = flask-login\nuser_file = {dir}/users\nuse_bcrypt = true\n",
			files: map[string]string{"users": "alice:" + failClosedHash + "\n"}, env: secret,
			want: "user_file: unknown key; did you mean users_file?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link {
				os.Symlink(filepath.Join(dir, "moved.ini"), "backupweb.ini")
			} else {
				os.WriteFile("backupweb.ini", []byte(strings.ReplaceAll(tt.ini, "{dir}", dir)), 0o600)
			}

			c, _, stderr := testCLI(context.Background(), "", tt.env)
			if code := c.main([]string{"check-config"}); code != exitError {
				t.Fatalf("check-config exit %d, want 1\n%s", code, stderr)
			}
			if !strings.Contains(stderr.String(), "error:") || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("check-config does not say %q:\n%s", tt.want, stderr)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c, _, stderr = testCLI(ctx, "", tt.env)
			done := make(chan int, 1)
			go func() { done <- c.main([]string{"serve"}) }()
			select {
			case code := <-done:
				if code != exitError {
					t.Errorf("serve exit %d, want 1", code)
				}
			case <-time.After(20 * time.Second):
				cancel()
				t.Fatalf("serve did not stop on a broken configuration:\n%s", stderr)
			}
			if out := stderr.String(); strings.Contains(out, "listening") || !strings.Contains(out, tt.want) {
				t.Errorf("serve must refuse without listening, saying %q:\n%s", tt.want, out)
			}
		})
	}
}

// TestListenFlagChecked gives -listen the same check as [server] listen.
func TestListenFlagChecked(t *testing.T) {
	t.Chdir(t.TempDir())
	c, _, stderr := testCLI(context.Background(), "", nil)
	if code := c.main([]string{"serve", "-listen", "localhost"}); code != exitError {
		t.Fatalf("serve -listen localhost: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "-listen must be HOST:PORT, for example 127.0.0.1:8080") {
		t.Errorf("no friendly message:\n%s", stderr)
	}
}

// TestAuthOffWarnings: check-config warns that authentication is off, as
// serve does, and more pointedly when the address is not loopback.
func TestAuthOffWarnings(t *testing.T) {
	for _, tt := range []struct{ ini, want string }{
		{"", "authentication is off (type none): anyone who can reach this address"},
		{"[server]\nlisten = 0.0.0.0:8080\n", "authentication is off (type none) and backupweb listens on 0.0.0.0:8080: anyone who can reach this address can read and download every backup"},
	} {
		t.Chdir(t.TempDir())
		if tt.ini != "" {
			os.WriteFile("backupweb.ini", []byte(tt.ini), 0o600)
		}
		c, _, stderr := testCLI(context.Background(), "", nil)
		if code := c.main([]string{"check-config"}); code != exitOK {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		if !strings.Contains(stderr.String(), "warning: ") || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("check-config with %q does not warn %q:\n%s", tt.ini, tt.want, stderr)
		}
	}
}
