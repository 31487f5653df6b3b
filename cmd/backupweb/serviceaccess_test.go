package main

import (
	"context"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/app"
)

// fakeInfo is a fabricated stat result: an owner, a group and a mode.
type fakeInfo struct {
	mode     fs.FileMode
	uid, gid uint32
}

func (f fakeInfo) Name() string       { return "" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return &syscall.Stat_t{Uid: f.uid, Gid: f.gid} }

// fakeStat answers from a table; a path not in it does not exist.
func fakeStat(files map[string]fakeInfo) statFunc {
	return func(p string) (fs.FileInfo, error) {
		if fi, ok := files[p]; ok {
			return fi, nil
		}
		return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
}

// TestAccessProblem judges fabricated owners, groups and modes as the
// kernel would for the service account (uid 900, groups 900 and 950).
func TestAccessProblem(t *testing.T) {
	svc := account{name: "svc", uid: 900, gid: 900, groupName: "svc", gids: []uint32{900, 950}}
	dir := fs.ModeDir
	base := map[string]fakeInfo{
		"/":      {dir | 0o755, 0, 0},
		"/etc":   {dir | 0o755, 0, 0},
		"/etc/b": {dir | 0o750, 0, 900},
		"/var":   {dir | 0o755, 0, 0},
	}
	with := func(extra map[string]fakeInfo) map[string]fakeInfo {
		m := map[string]fakeInfo{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	root := account{name: "root", uid: 0, gid: 0, groupName: "root", gids: []uint32{0}}
	tests := []struct {
		name  string
		files map[string]fakeInfo
		path  string
		need  need
		want  []string // all in the message; nil: no problem
		acct  *account // nil: svc
	}{
		{"root:svc 0640", with(map[string]fakeInfo{"/etc/b/users": {0o640, 0, 900}}), "/etc/b/users", readFile, nil, nil},
		{"root:root 0600", with(map[string]fakeInfo{"/etc/b/users": {0o600, 0, 0}}), "/etc/b/users", readFile,
			[]string{"svc cannot read it", "root:root 0600", "chgrp svc /etc/b/users && chmod g+r /etc/b/users"}, nil},
		{"root:svc 0600", with(map[string]fakeInfo{"/etc/b/users": {0o600, 0, 900}}), "/etc/b/users", readFile,
			[]string{"cannot read", "run: chmod g+r /etc/b/users"}, nil},
		{"supplementary group", with(map[string]fakeInfo{"/etc/b/users": {0o640, 0, 950}}), "/etc/b/users", readFile, nil, nil},
		{"owned by svc, 0200", with(map[string]fakeInfo{"/etc/b/users": {0o200, 900, 0}}), "/etc/b/users", readFile,
			[]string{"run: chmod u+r /etc/b/users"}, nil},
		{"owner bits win over others", with(map[string]fakeInfo{"/etc/b/users": {0o044, 900, 900}}), "/etc/b/users", readFile,
			[]string{"chmod u+r"}, nil},
		{"world readable", with(map[string]fakeInfo{"/etc/b/users": {0o644, 0, 0}}), "/etc/b/users", readFile, nil, nil},
		{"folder closed", with(map[string]fakeInfo{"/etc/b": {dir | 0o700, 0, 0}, "/etc/b/users": {0o644, 0, 0}}), "/etc/b/users", readFile,
			[]string{"cannot enter the folder /etc/b", "root:root 0700", "chgrp svc /etc/b && chmod g+x /etc/b"}, nil},
		{"backups listable", with(map[string]fakeInfo{"/var/bk": {dir | 0o2750, 0, 900}}), "/var/bk", listDir, nil, nil},
		{"backups not listable", with(map[string]fakeInfo{"/var/bk": {dir | 0o2710, 0, 900}}), "/var/bk", listDir,
			[]string{"cannot list it", "chmod g+rx /var/bk"}, nil},
		{"state writable", with(map[string]fakeInfo{"/var/st": {dir | 0o700, 900, 900}}), "/var/st", writeDir, nil, nil},
		{"state read only", with(map[string]fakeInfo{"/var/st": {dir | 0o500, 900, 900}}), "/var/st", writeDir,
			[]string{"cannot write into it", "chmod u+wx /var/st"}, nil},
		{"state missing, parent closed", base, "/var/st/sub", writeDir,
			[]string{"cannot create it", "cannot write into /var", "chgrp svc /var && chmod g+wx /var"}, nil},
		{"state missing, parent open", with(map[string]fakeInfo{"/var/st": {dir | 0o700, 900, 900}}), "/var/st/sub", writeDir, nil, nil},
		{"missing file left to the loaders", base, "/etc/b/nope", readFile, nil, nil},
		{"root account reads everything", with(map[string]fakeInfo{"/etc/b/users": {0o000, 5, 5}}), "/etc/b/users", readFile, nil, &root},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acct := svc
			if tt.acct != nil {
				acct = *tt.acct
			}
			got := accessProblem(acct, tt.path, tt.need, fakeStat(tt.files))
			if tt.want == nil {
				if got != "" {
					t.Fatalf("unexpected problem: %s", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
}

// TestCheckConfigAsUser runs check-config -as-user against real files for
// the account nobody, which owns none of them: a user file it cannot read
// fails the check, with the file and the fix; once readable, it passes.
// Without the flag the same configuration passes for the running user.
func TestCheckConfigAsUser(t *testing.T) {
	if u, err := user.Lookup("nobody"); err != nil || u.Uid == strconv.Itoa(os.Getuid()) {
		t.Skip("needs a user nobody other than the one running the test")
	}
	// Not t.TempDir: its parent is closed to other accounts.
	dir, err := os.MkdirTemp("", "backupweb-as-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+testHashA+"\n"), 0o600)
	backups := filepath.Join(dir, "backups")
	os.Mkdir(backups, 0o755)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o777)
	os.Chmod(state, 0o777)
	icon := filepath.Join(dir, "logo.svg")
	os.WriteFile(icon, []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), 0o644)
	ini := filepath.Join(dir, "backupweb.ini")
	os.WriteFile(ini, []byte("[server]\nstate_dir = "+state+"\n[backups]\ndir = "+backups+"\n[ui]\nicon = "+icon+
		"\n[authentication]\ntype = flask-login\nusers_file = "+users+"\nuse_bcrypt = True\n"), 0o644)
	env := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}
	run := func(args ...string) (int, string) {
		c, _, stderr := testCLI(context.Background(), "", env)
		code := c.main(append([]string{"check-config", "-config", ini}, args...))
		return code, stderr.String()
	}
	if code, out := run(); code != exitOK {
		t.Fatalf("without -as-user: exit %d\n%s", code, out)
	}
	code, out := run("-as-user", "nobody")
	if code != exitError {
		t.Fatalf("users 0600: exit %d\n%s", code, out)
	}
	for _, w := range []string{"error: " + users + ": [authentication] users_file:", "nobody cannot read it", "chmod g+r " + users} {
		if !strings.Contains(out, w) {
			t.Errorf("stderr lacks %q:\n%s", w, out)
		}
	}
	os.Chmod(users, 0o644) // open only for the test: nobody reads it as "others"
	if code, out := run("-as-user", "nobody"); code != exitOK {
		t.Fatalf("users 0644: exit %d\n%s", code, out)
	}
	os.Chmod(state, 0o755)
	if code, out := run("-as-user", "nobody"); code != exitError || !strings.Contains(out, "[server] state_dir:") {
		t.Fatalf("state 0755: exit %d\n%s", code, out)
	}
	os.Chmod(state, 0o777)
	os.Chmod(icon, 0o600)
	if code, out := run("-as-user", "nobody"); code != exitError || !strings.Contains(out, "[ui] icon:") {
		t.Fatalf("icon 0600: exit %d\n%s", code, out)
	}
	os.Chmod(icon, 0o644)
	os.Chmod(ini, 0o600)
	if code, out := run("-as-user", "nobody"); code != exitError || !strings.Contains(out, "error: "+ini+": nobody") &&
		!strings.Contains(out, "error: "+ini+": the service user nobody cannot read it") {
		t.Fatalf("configuration 0600: exit %d\n%s", code, out)
	}
}

func TestCheckConfigAsServiceFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-as-service", "-as-user", "someone-else"}, exitUsage, "give one of them"},
		{[]string{"-as-user", "no-such-user-backupweb-test"}, exitError, "no user no-such-user-backupweb-test"},
	}
	for _, tt := range tests {
		c, _, stderr := testCLI(context.Background(), "", nil)
		t.Chdir(t.TempDir())
		if code := c.main(append([]string{"check-config"}, tt.args...)); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tt.args, code, tt.code, tt.want, stderr)
		}
	}
}

// TestServiceAccessFileKeys checks that every file key of flask-login is
// judged for the service account with no list to keep: the files it reads
// must be readable (an error), and the folders of the files it rewrites
// (factors_file, with a second factor on, and tokens_file, both by default
// beside the user file) writable (a warning: it starts, and fails to save).
func TestServiceAccessFileKeys(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	groups := filepath.Join(dir, "groups")
	os.WriteFile(users, []byte("alice:"+testHashA+"\n"), 0o600)
	os.WriteFile(groups, []byte("ops: alice\n"), 0o600)
	svc := account{name: "svc", uid: 900, gid: 900, groupName: "svc", gids: []uint32{900}}
	files := map[string]fakeInfo{dir: {fs.ModeDir | 0o755, 0, 0}, users: {0o600, 0, 0}, groups: {0o600, 0, 0}}
	for _, d := range parents(dir) {
		files[d] = fakeInfo{fs.ModeDir | 0o755, 0, 0}
	}
	tests := []struct {
		secondFactor string
		want         []string // "severity key", in the report's order
	}{
		{"off", []string{"error users_file", "error groups_file", "warning tokens_file"}},
		{"optional", []string{"error users_file", "error factors_file", "warning factors_file", "error groups_file", "warning tokens_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.secondFactor, func(t *testing.T) {
			ini := filepath.Join(dir, "backupweb.ini")
			os.WriteFile(ini, []byte("[server]\nstate_dir = "+filepath.Join(dir, "state")+"\n[authentication]\ntype = flask-login\nuse_bcrypt = true\nusers_file = "+users+
				"\ngroups_file = "+groups+"\nsecond_factor = "+tt.secondFactor+"\n"), 0o600)
			os.WriteFile(filepath.Join(dir, "users.factors"), nil, 0o600)
			files[filepath.Join(dir, "users.factors")] = fakeInfo{0o600, 0, 0}
			c, _, _ := testCLI(context.Background(), "", map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)})
			a := app.Check(ini, c.options("", nil))
			before := len(a.Config.Report.Problems())
			checkServiceAccess(a, svc, fakeStat(files))
			var got []string
			for _, p := range a.Config.Report.Problems()[before:] {
				if p.Section == app.Section {
					got = append(got, p.Severity.String()+" "+p.Key)
				}
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("problems %v, want %v\n%v", got, tt.want, a.Config.Report.Problems())
			}
		})
	}
}
