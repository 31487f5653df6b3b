//go:build unix

package userfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestSaveKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	path := filepath.Join(t.TempDir(), "users.txt")
	writeFile(t, path, "# c\n", 0o640)
	const uid, gid = 4321, 8765
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := addUser(path, "alice"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || st.Gid != gid || fi.Mode().Perm() != 0o640 {
		t.Errorf("owner %d:%d mode %v, want %d:%d 0640", st.Uid, st.Gid, fi.Mode().Perm(), uid, gid)
	}
}

func TestSaveIgnoresUmask(t *testing.T) {
	// A permissive umask must not widen a new file beyond 0600.
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "users.txt")
	if err := addUser(path, "alice"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}
