package main

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// useService makes lookupServiceAccount answer acct (found false: no
// service user) and geteuid answer euid for the length of the test.
func useService(t *testing.T, acct account, found bool, euid int) {
	t.Helper()
	oldSvc, oldEuid := lookupServiceAccount, geteuid
	lookupServiceAccount = func() (account, bool) { return acct, found }
	geteuid = func() int { return euid }
	t.Cleanup(func() { lookupServiceAccount, geteuid = oldSvc, oldEuid })
}

// ownName is the name of this process's user, which -owner may give
// without root.
func ownName(t *testing.T) string {
	t.Helper()
	u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	if err != nil {
		t.Skipf("this process's user has no name: %v", err)
	}
	return u.Username
}

// TestUserAddNewFileOwner: a file add creates is always 0600. As root, in
// a folder of the service user's group, it is owned by the service user;
// -owner names its owner. An existing file keeps its mode and owner
// whatever the flags say. (Playing root here chowns to this process's own
// ids, which needs no privilege; TestUserAddServiceFolderAsRoot does the
// real thing as root.)
func TestUserAddNewFileOwner(t *testing.T) {
	uid, gid := uint32(os.Geteuid()), uint32(os.Getgid()) // the temporary folders' owner and group
	svc := account{name: "svc", uid: uid, gid: gid}
	tests := []struct {
		name       string
		svc        account
		found      bool
		euid       int
		owner      string      // -owner; "self" is this process's user
		before     os.FileMode // 0: no file yet
		code       int
		wantMode   os.FileMode
		wantStderr string
	}{
		{"root, folder of the service's group", svc, true, 0, "", 0, exitOK, 0o600, "owned by the service user svc, mode 0600"},
		{"root, folder of another group", account{name: "svc", uid: uid, gid: gid + 1}, true, 0, "", 0, exitOK, 0o600, ""},
		{"root, no service user", svc, false, 0, "", 0, exitOK, 0o600, ""},
		{"not root, folder of the service's group", svc, true, int(uid) + 1, "", 0, exitOK, 0o600, ""},
		{"-owner", svc, false, int(uid), "self", 0, exitOK, 0o600, "mode 0600"},
		{"-owner unknown", svc, true, 0, "no-such-user-backupweb-test", 0, exitError, 0, "no user no-such-user-backupweb-test on this machine"},
		{"-owner another user without root", svc, true, int(uid) + 1, "self", 0, exitError, 0, "only root can make a file for another user"},
		{"existing file keeps its mode", svc, true, 0, "", 0o640, exitOK, 0o640, ""},
		{"existing file, -owner of its own owner", svc, true, 0, "self", 0o600, exitOK, 0o600, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useService(t, tt.svc, tt.found, tt.euid)
			path := userFile(t, "")
			if tt.before != 0 {
				os.WriteFile(path, []byte("bob:"+testHashB+"\n"), tt.before)
				os.Chmod(path, tt.before)
			}
			args := []string{"add", "-file", path, "-cost", "4"}
			if tt.owner == "self" {
				args = append(args, "-owner", ownName(t))
			} else if tt.owner != "" {
				args = append(args, "-owner", tt.owner)
			}
			code, _, stderr := runUserCmd("s3cret-pw\n", append(args, "alice")...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q: %s", tt.wantStderr, stderr)
			}
			if tt.code != exitOK {
				if _, err := os.Stat(path); tt.before == 0 && !os.IsNotExist(err) {
					t.Errorf("a refused add made the file: %v", err)
				}
				return
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tt.wantMode {
				t.Errorf("mode %04o, want %04o", got, tt.wantMode)
			}
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid || st.Gid != gid {
				t.Errorf("owner %d:%d, want %d:%d", st.Uid, st.Gid, uid, gid)
			}
		})
	}
}

// TestUserOwnerFlagOnExistingFile: -owner never changes an existing file;
// a different owner is reported, not applied.
func TestUserOwnerFlagOnExistingFile(t *testing.T) {
	useService(t, account{}, false, 0)
	path := userFile(t, "bob:"+testHashB+"\n")
	root, err := user.LookupId("0")
	if err != nil || os.Geteuid() == 0 {
		t.Skip("needs a process that is not root and a user 0")
	}
	code, _, stderr := runUserCmd("s3cret-pw\n", "add", "-file", path, "-cost", "4", "-owner", root.Username, "alice")
	if code != exitOK || !strings.Contains(stderr, "not applied") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || int(fi.Sys().(*syscall.Stat_t).Uid) != os.Geteuid() {
		t.Errorf("the existing file changed: %v %v", fi.Mode(), err)
	}
}

func TestUserOwnerFlagOnlyForAdd(t *testing.T) {
	path := userFile(t, "bob:"+testHashB+"\n")
	for _, action := range []string{"passwd", "del"} {
		code, _, stderr := runUserCmd("pw\n", action, "-file", path, "-owner", "root", "bob")
		if code != exitUsage || !strings.Contains(stderr, "-owner applies to add only") {
			t.Errorf("%s -owner: exit %d %s", action, code, stderr)
		}
	}
}

// TestUserAddServiceFolderAsRoot is the packaged case: root adds a user
// to a new file in a folder of the service's group; the file is owned by
// the service user, mode 0600, and a later passwd by root keeps that.
func TestUserAddServiceFolderAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file another owner needs root")
	}
	svc := account{name: "svc", uid: 8765, gid: 8766}
	useService(t, svc, true, 0)
	dir := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 0, int(svc.gid)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "users")
	for _, args := range [][]string{{"add", "-file", path, "-cost", "4", "alice"}, {"passwd", "-file", path, "-cost", "4", "alice"}} {
		if code, _, stderr := runUserCmd("s3cret-pw\n", args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != svc.uid || st.Gid != svc.gid || fi.Mode().Perm() != 0o600 {
			t.Errorf("%v: %d:%d %04o, want %d:%d 0600", args, st.Uid, st.Gid, fi.Mode().Perm(), svc.uid, svc.gid)
		}
	}
}
