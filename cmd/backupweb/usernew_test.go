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

// useServiceGroup makes lookupServiceGroup answer gid (found false: no
// service user) for the length of the test.
func useServiceGroup(t *testing.T, gid int, found bool) {
	t.Helper()
	old := lookupServiceGroup
	lookupServiceGroup = func() (int, string, bool) { return gid, "svc", found }
	t.Cleanup(func() { lookupServiceGroup = old })
}

// ownGroupName is the name of this process's group, which -group may give
// without root.
func ownGroupName(t *testing.T) string {
	t.Helper()
	g, err := user.LookupGroupId(strconv.Itoa(os.Getgid()))
	if err != nil {
		t.Skipf("this process's group has no name: %v", err)
	}
	return g.Name
}

// TestUserAddNewFileOwner: a file add creates is 0600, unless its folder
// belongs to the service user's group or -group names one: then it is
// given that group and mode 0640, so the service can read it. An existing
// file keeps its mode and group whatever the flags say.
func TestUserAddNewFileOwner(t *testing.T) {
	gid := os.Getgid() // the temporary folders' group
	tests := []struct {
		name       string
		serviceGid int
		found      bool
		group      string      // -group; "own" is this process's group
		before     os.FileMode // 0: no file yet
		code       int
		wantMode   os.FileMode
		wantStderr string
	}{
		{"folder of the service's group", gid, true, "", 0, exitOK, 0o640, "as its folder belongs to the group of the service user"},
		{"folder of another group", gid + 1, true, "", 0, exitOK, 0o600, ""},
		{"no service user", gid, false, "", 0, exitOK, 0o600, ""},
		{"-group", gid + 1, false, "own", 0, exitOK, 0o640, "mode 0640"},
		{"-group unknown", gid, true, "no-such-group-backupweb-test", 0, exitError, 0, `no group "no-such-group-backupweb-test"`},
		{"existing file keeps its mode", gid, true, "", 0o600, exitOK, 0o600, ""},
		{"existing file, -group of its own group", gid, true, "own", 0o600, exitOK, 0o600, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useServiceGroup(t, tt.serviceGid, tt.found)
			path := userFile(t, "")
			if tt.before != 0 {
				os.WriteFile(path, []byte("bob:"+testHashB+"\n"), tt.before)
			}
			args := []string{"add", "-file", path, "-cost", "4"}
			if tt.group == "own" {
				args = append(args, "-group", ownGroupName(t))
			} else if tt.group != "" {
				args = append(args, "-group", tt.group)
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
			if st := fi.Sys().(*syscall.Stat_t); int(st.Gid) != gid {
				t.Errorf("group %d, want %d", st.Gid, gid)
			}
		})
	}
}

// TestUserGroupFlagOnExistingFile: -group never changes an existing file;
// a different group is reported, not applied. -group with another action
// is a usage error.
func TestUserGroupFlagOnExistingFile(t *testing.T) {
	useServiceGroup(t, 0, false)
	path := userFile(t, "bob:"+testHashB+"\n")
	g, err := user.LookupGroupId("0")
	if err != nil || os.Getgid() == 0 {
		t.Skip("needs a process whose group is not 0 and a group 0")
	}
	code, _, stderr := runUserCmd("s3cret-pw\n", "add", "-file", path, "-cost", "4", "-group", g.Name, "alice")
	if code != exitOK || !strings.Contains(stderr, "not applied") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || int(fi.Sys().(*syscall.Stat_t).Gid) != os.Getgid() {
		t.Errorf("the existing file changed: %v %v", fi.Mode(), err)
	}
}

func TestUserGroupFlagOnlyForAdd(t *testing.T) {
	path := userFile(t, "bob:"+testHashB+"\n")
	for _, action := range []string{"passwd", "del"} {
		code, _, stderr := runUserCmd("pw\n", action, "-file", path, "-group", "root", "bob")
		if code != exitUsage || !strings.Contains(stderr, "-group applies to add only") {
			t.Errorf("%s -group: exit %d %s", action, code, stderr)
		}
	}
}

// TestUserAddServiceFolderAsRoot is the packaged case: root adds a user
// to a new file in a folder of the service's group; the file is
// root:GROUP 0640, and a later passwd keeps that.
func TestUserAddServiceFolderAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a folder a group this process is not in needs root")
	}
	const svcGid = 8766
	useServiceGroup(t, svcGid, true)
	dir := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 0, svcGid); err != nil {
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
		if st.Uid != 0 || st.Gid != svcGid || fi.Mode().Perm() != 0o640 {
			t.Errorf("%v: %d:%d %04o, want 0:%d 0640", args, st.Uid, st.Gid, fi.Mode().Perm(), svcGid)
		}
	}
}
