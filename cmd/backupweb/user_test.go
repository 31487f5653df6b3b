package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// Throwaway bcrypt hashes at cost 4 for pre-filled user files.
const (
	testHashA = "$2b$04$XRTd2MQX.pV1qlg3Y5HZO.YqPfkMCb4I6rB0xpSYydEbIhHcQFMhy"
	testHashB = "$2b$04$QgwesizPF/ILU2ywZHluzeOcByhJ/ciBI5k5Gz23smBRZEf87h1pG"
)

// runUserCmd runs `backupweb user` in-process with the given input.
func runUserCmd(input string, args ...string) (code int, stdout, stderr string) {
	c, out, errs := bufferedCLI(strings.NewReader(input))
	code = runUser(c, args)
	return code, out.String(), errs.String()
}

// userFile creates a user file in a fresh directory and returns its path.
func userFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.txt")
	if content != "" {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// hashOf returns the value of name's line in the file at path.
func hashOf(t *testing.T, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if n, h, ok := strings.Cut(line, ":"); ok && n == name {
			return h
		}
	}
	t.Fatalf("no user %s in %q", name, b)
	return ""
}

func TestUserAddCreatesFile(t *testing.T) {
	path := userFile(t, "")
	code, stdout, stderr := runUserCmd("s3cret\n", "add", "-file", path, "-cost", "4", "alice")
	if code != exitOK || stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	hash := hashOf(t, path, "alice")
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("s3cret")); err != nil {
		t.Errorf("stored hash does not verify: %v", err)
	}
	if strings.Contains(stderr, "s3cret") || strings.Contains(stderr, hash) {
		t.Errorf("stderr shows a secret: %q", stderr)
	}
	if entries, err := os.ReadDir(filepath.Dir(path)); err != nil || len(entries) != 1 {
		t.Errorf("directory holds %v (%v), want only the user file", entries, err)
	}
}

func TestUserEditsPreserveOtherLines(t *testing.T) {
	const before = "# backupweb users\r\n\nalice:" + testHashA + "\n  # keep me  \nbob:" + testHashB + "\n"
	tests := []struct {
		name  string
		input string
		args  []string
		want  func(path string) string // expected file text
	}{
		{"add", "pw\n", []string{"add", "-file", "", "-cost", "4", "carol"}, func(path string) string {
			return before + "carol:" + hashOf(t, path, "carol") + "\n"
		}},
		{"add with the name first", "pw\n", []string{"add", "carol", "-file", "", "-cost", "4"}, func(path string) string {
			return before + "carol:" + hashOf(t, path, "carol") + "\n"
		}},
		{"passwd", "new\n", []string{"passwd", "-file", "", "-cost", "4", "alice"}, func(path string) string {
			return strings.Replace(before, testHashA, hashOf(t, path, "alice"), 1)
		}},
		{"del", "", []string{"del", "-file", "", "alice"}, func(string) string {
			return strings.Replace(before, "alice:"+testHashA+"\n", "", 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := userFile(t, before)
			args := append([]string(nil), tt.args...)
			for i := range args {
				if args[i] == "-file" {
					args[i+1] = path
				}
			}
			code, _, stderr := runUserCmd(tt.input, args...)
			if code != exitOK {
				t.Fatalf("exit %d stderr %q", code, stderr)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(path); string(got) != want {
				t.Errorf("file\n got %q\nwant %q", got, want)
			}
			if strings.Contains(stderr, "warning") {
				t.Errorf("unexpected warning: %q", stderr)
			}
		})
	}
}

func TestUserPasswdSetsNewPassword(t *testing.T) {
	path := userFile(t, "alice:"+testHashA+"\n")
	if code, _, stderr := runUserCmd("n3w-pass\r\n", "passwd", "-file", path, "-cost", "4", "alice"); code != exitOK {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	if err := bcrypt.CompareHashAndPassword([]byte(hashOf(t, path, "alice")), []byte("n3w-pass")); err != nil {
		t.Errorf("new password does not verify: %v", err)
	}
}

func TestUserList(t *testing.T) {
	path := userFile(t, "# c\nalice:"+testHashA+"\nnot a user\nbob:"+testHashB+"\n#carol:x\n")
	code, stdout, stderr := runUserCmd("", "list", "-file", path)
	if code != exitOK || stdout != "alice\nbob\n" || stderr != "" {
		t.Errorf("exit %d stdout %q stderr %q; want alice and bob", code, stdout, stderr)
	}
}

func TestUserRefusals(t *testing.T) {
	const content = "alice:" + testHashA + "\n"
	tests := []struct {
		name   string
		input  string
		args   []string // "PATH" is replaced by the user file
		code   int
		stderr string
	}{
		{"add existing", "pw\n", []string{"add", "-file", "PATH", "-cost", "4", "alice"}, exitError,
			`backupweb user add: user "alice" already exists in`},
		{"passwd missing", "pw\n", []string{"passwd", "-file", "PATH", "-cost", "4", "bob"}, exitError,
			`backupweb user passwd: no user "bob" in`},
		{"del missing", "", []string{"del", "-file", "PATH", "bob"}, exitError,
			`backupweb user del: no user "bob" in`},
		{"del in a missing file", "", []string{"del", "-file", "PATH.missing", "bob"}, exitError,
			"does not exist"},
		{"list a missing file", "", []string{"list", "-file", "PATH.missing"}, exitError,
			"does not exist"},
		{"empty password", "\n", []string{"add", "-file", "PATH", "-cost", "4", "bob"}, exitError,
			"backupweb user add: the password is empty"},
		{"no password", "", []string{"passwd", "-file", "PATH", "-cost", "4", "alice"}, exitError,
			"no password on standard input"},
		{"password too long", strings.Repeat("x", 73), []string{"add", "-file", "PATH", "-cost", "4", "bob"}, exitError,
			"longer than 72 bytes"},
		{"no action", "", nil, exitUsage, "Usage: backupweb user ACTION"},
		{"unknown action", "", []string{"remove", "-file", "PATH", "alice"}, exitUsage, `unknown action "remove"`},
		{"flags before the action", "", []string{"-file", "PATH", "del", "alice"}, exitUsage, "comes first"},
		{"no file", "", []string{"del", "alice"}, exitUsage, "backupweb user del: -file PATH is required"},
		{"no name", "", []string{"add", "-file", "PATH"}, exitUsage, "backupweb user add: a user name is required"},
		{"two names", "", []string{"del", "alice", "-file", "PATH", "bob"}, exitUsage, "takes one user name"},
		{"list with a name", "", []string{"list", "-file", "PATH", "alice"}, exitUsage, "takes no user name"},
		{"invalid name", "", []string{"add", "-file", "PATH", "bad:name"}, exitUsage,
			"backupweb user add: invalid user name: it contains ':'"},
		{"comment-like name", "", []string{"add", "-file", "PATH", "#bob"}, exitUsage, "invalid user name"},
		{"bad cost", "", []string{"add", "-file", "PATH", "-cost", "40", "bob"}, exitUsage, "-cost must be between 4 and 31"},
		{"unknown flag", "", []string{"add", "-force", "-file", "PATH", "bob"}, exitUsage, "flag provided but not defined"},
		{"help", "", []string{"help"}, exitOK, "Usage: backupweb user ACTION"},
		{"action help", "", []string{"add", "-h"}, exitOK, "Usage: backupweb user ACTION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := userFile(t, content)
			args := append([]string(nil), tt.args...)
			for i := range args {
				args[i] = strings.Replace(args[i], "PATH", path, 1)
			}
			code, stdout, stderr := runUserCmd(tt.input, args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) || stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d and %q", code, stdout, stderr, tt.code, tt.stderr)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != content {
				t.Errorf("file changed to %q (%v)", got, err)
			}
			if _, err := os.Stat(path + ".missing"); err == nil {
				t.Error("a refused command created a file")
			}
		})
	}
}

func TestUserWarnings(t *testing.T) {
	path := userFile(t, "alice:plain-password\n")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runUserCmd("pw\n", "add", "-file", path, "-cost", "4", "bob")
	if code != exitOK {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	for _, want := range []string{
		"backupweb user add: warning: " + path + " is open to every account on this machine (mode 0644)",
		"backupweb user add: warning: " + path + ":1: unsupported password value: not a hash",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "plain-password") {
		t.Errorf("a warning shows a password: %q", stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want the existing 0644 kept", fi.Mode().Perm(), err)
	}
}

func TestUserDelLastUserWarns(t *testing.T) {
	path := userFile(t, "alice:"+testHashA+"\n")
	code, _, stderr := runUserCmd("", "del", "-file", path, "alice")
	if code != exitOK {
		t.Fatalf("deleting the last user must succeed, exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, "nobody will be able to log in") {
		t.Errorf("no warning that nobody can log in: %q", stderr)
	}
}

func TestUserAddIntoMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-folder", "users.txt")
	code, _, stderr := runUserCmd("s3cret\n", "add", "-file", path, "-cost", "4", "alice")
	if code != exitError || !strings.Contains(stderr, "no-such-folder does not exist") {
		t.Fatalf("exit %d, stderr %q: want a message that the folder does not exist", code, stderr)
	}
}
