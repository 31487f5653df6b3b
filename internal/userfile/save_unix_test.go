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

// TestSaveWithNewFile: SaveWith makes a new file 0600 with the owner asked
// for, and leaves an existing file's mode, owner and group as they are.
func TestSaveWithNewFile(t *testing.T) {
	uid, gid := os.Geteuid(), os.Getgid() // an owner this process may always give
	tests := []struct {
		name     string
		before   os.FileMode // 0: no file yet
		nf       NewFile
		wantMode os.FileMode
	}{
		{"zero value is Save", 0, NewFile{}, 0o600},
		{"owner given", 0, NewFile{UID: uid, GID: gid, SetOwner: true}, 0o600},
		{"existing file keeps its mode", 0o640, NewFile{UID: uid, GID: gid, SetOwner: true}, 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "users.txt")
			if tt.before != 0 {
				writeFile(t, path, "# c\n", tt.before)
			}
			d, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Add("alice", hashA); err != nil {
				t.Fatal(err)
			}
			if err := d.SaveWith(path, tt.nf); err != nil {
				t.Fatal(err)
			}
			fi := wantPerm(t, path, tt.wantMode)
			if st := fi.Sys().(*syscall.Stat_t); tt.nf.SetOwner && (int(st.Uid) != tt.nf.UID || int(st.Gid) != tt.nf.GID) {
				t.Errorf("owner %d:%d, want %d:%d", st.Uid, st.Gid, tt.nf.UID, tt.nf.GID)
			}
		})
	}
}

// TestSaveWithForeignOwner: as root, a new file is given an owner that is
// not the process; without root, asking for one fails and leaves no file.
func TestSaveWithForeignOwner(t *testing.T) {
	const uid, gid = 8765, 8766 // no process of this test runs as them
	path := filepath.Join(t.TempDir(), "users.txt")
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Add("alice", hashA); err != nil {
		t.Fatal(err)
	}
	err = d.SaveWith(path, NewFile{UID: uid, GID: gid, SetOwner: true})
	if os.Geteuid() != 0 {
		if err == nil {
			t.Fatal("another owner was given without root")
		}
		if names := dirNames(t, filepath.Dir(path)); len(names) != 0 {
			t.Errorf("left %q", names)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid || int(st.Gid) != gid || fi.Mode().Perm() != 0o600 {
		t.Errorf("owner %d:%d mode %04o, want %d:%d 0600", st.Uid, st.Gid, fi.Mode().Perm(), uid, gid)
	}
}
