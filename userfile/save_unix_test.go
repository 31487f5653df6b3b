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

// TestSaveWithNewFile: SaveWith makes a new file with the mode and group
// asked for, refuses modes that open it beyond one reading group, and
// leaves an existing file's mode and group as they are.
func TestSaveWithNewFile(t *testing.T) {
	gid := os.Getgid() // a group this process may always give
	tests := []struct {
		name     string
		before   os.FileMode // 0: no file yet
		nf       NewFile
		wantMode os.FileMode
		wantErr  bool
	}{
		{"zero value is Save", 0, NewFile{}, 0o600, false},
		{"group readable", 0, NewFile{Mode: 0o640, Group: gid, SetGroup: true}, 0o640, false},
		{"read only", 0, NewFile{Mode: 0o440}, 0o440, false},
		{"group writable refused", 0, NewFile{Mode: 0o660}, 0, true},
		{"others refused", 0, NewFile{Mode: 0o604}, 0, true},
		{"set-id refused", 0, NewFile{Mode: 0o600 | os.ModeSetgid}, 0, true},
		{"existing file keeps its mode", 0o600, NewFile{Mode: 0o640, Group: gid, SetGroup: true}, 0o600, false},
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
			err = d.SaveWith(path, tt.nf)
			if tt.wantErr {
				if err == nil {
					t.Fatal("saved, want an error")
				}
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("a refused mode left a file: %v", err)
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
			if got := fi.Mode().Perm(); got != tt.wantMode {
				t.Errorf("mode %04o, want %04o", got, tt.wantMode)
			}
			if st := fi.Sys().(*syscall.Stat_t); tt.nf.SetGroup && int(st.Gid) != tt.nf.Group {
				t.Errorf("group %d, want %d", st.Gid, tt.nf.Group)
			}
		})
	}
}

// TestSaveWithForeignGroup: as root, a new file is given a group the
// process is not in; without root, asking for such a group fails and
// leaves no file.
func TestSaveWithForeignGroup(t *testing.T) {
	const gid = 8765 // no process of this test belongs to it
	path := filepath.Join(t.TempDir(), "users.txt")
	d, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Add("alice", hashA); err != nil {
		t.Fatal(err)
	}
	err = d.SaveWith(path, NewFile{Mode: 0o640, Group: gid, SetGroup: true})
	if os.Geteuid() != 0 {
		if err == nil {
			t.Fatal("a group this process is not in was given without root")
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
	if st := fi.Sys().(*syscall.Stat_t); int(st.Gid) != gid || fi.Mode().Perm() != 0o640 {
		t.Errorf("group %d mode %04o, want %d 0640", st.Gid, fi.Mode().Perm(), gid)
	}
}
