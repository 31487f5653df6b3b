//go:build unix

package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSpecialFilesAreNotBackups checks that a named pipe is neither listed
// nor opened (opening a pipe would block the request), and that a file whose
// name Open refuses is not listed.
func TestSpecialFilesAreNotBackups(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "real.tar", "r", base)
	writeFile(t, dir, `back\slash.tar`, "b", base)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Skipf("cannot create a named pipe here: %v", err)
	}
	c := New(dir)
	list, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "real.tar" {
		t.Fatalf("List() = %+v, want only real.tar", list)
	}
	if _, _, err := c.Open("pipe"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open(pipe) error = %v, want ErrNotFound", err)
	}
}

// TestUnreadableFileIsAnError checks that a backup the service may not read
// is reported as an error (an operator's mistake to fix), not hidden as 404.
func TestUnreadableFileIsAnError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file; permission errors cannot be produced")
	}
	dir := t.TempDir()
	writeFile(t, dir, "locked.tar", "x", base)
	if err := os.Chmod(filepath.Join(dir, "locked.tar"), 0); err != nil {
		t.Fatal(err)
	}
	_, _, err := New(dir).Open("locked.tar")
	if err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("error = %v, want a permission error", err)
	}
}
