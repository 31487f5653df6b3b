package userfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// dirNames lists the names in dir, to catch leftover temporary files.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// addUser loads path, adds a user and saves it back.
func addUser(path, name string) error {
	d, err := Load(path)
	if err != nil {
		return err
	}
	if err := d.Add(name, hashA); err != nil {
		return err
	}
	return d.Save(path)
}

func TestSaveMode(t *testing.T) {
	tests := []struct {
		name   string
		before os.FileMode // 0: no file yet
		want   os.FileMode
	}{
		{"new file", 0, 0o600},
		{"owner only", 0o600, 0o600},
		{"tighter", 0o400, 0o400},
		{"group readable kept", 0o640, 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "users.txt")
			if tt.before != 0 {
				writeFile(t, path, "# c\n", tt.before)
			}
			if err := addUser(path, "alice"); err != nil {
				t.Fatal(err)
			}
			wantPerm(t, path, tt.want)
			if names := dirNames(t, dir); len(names) != 1 {
				t.Errorf("directory holds %q, want only users.txt", names)
			}
		})
	}
}

func TestSaveFailureLeavesFileAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.txt")
	writeFile(t, path, "# before\n", 0o600)
	boom := errors.New("rename failed")
	renameFile = func(string, string) error { return boom }
	defer func() { renameFile = os.Rename }()
	if err := addUser(path, "alice"); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the rename failure", err)
	}
	if got := readFile(t, path); got != "# before\n" {
		t.Errorf("file changed to %q", got)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only users.txt", names)
	}
}

func TestSaveThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "users.txt")
	writeFile(t, real, "# c\n", 0o600)
	if err := os.Symlink("real.txt", link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	if err := addUser(link, "alice"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}
	if got, want := readFile(t, real), "# c\nalice:"+hashA+"\n"; got != want {
		t.Errorf("target holds %q, want %q", got, want)
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("directory holds %q, want real.txt and users.txt", names)
	}
}

func TestSaveRefuses(t *testing.T) {
	dir := t.TempDir()
	dangling := filepath.Join(dir, "dangling.txt")
	if err := os.Symlink("nowhere.txt", dangling); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	for name, path := range map[string]string{
		"a directory":      dir,
		"a missing folder": filepath.Join(dir, "missing", "users.txt"),
		"a dangling link":  dangling,
	} {
		t.Run(name, func(t *testing.T) {
			var d Doc
			if err := d.Add("alice", hashA); err != nil {
				t.Fatal(err)
			}
			if err := d.Save(path); err == nil {
				t.Errorf("Save(%s) succeeded", path)
			}
		})
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only the dangling link", names)
	}
}

// wantPerm checks the permission bits of the file at path and returns
// its information.
func wantPerm(t *testing.T, path string, want os.FileMode) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode %04o, want %04o", got, want)
	}
	return fi
}
