package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// TestTreeNested: folders at any depth, with totals; hidden and linked
// folders are not folders of the catalog.
func TestTreeNested(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "hosts/alpha/daily/a.tar", 3, base)
	put(t, dir, "hosts/beta/b.tar", 4, base.Add(time.Hour))
	put(t, dir, ".snapshots/x.tar", 1, base)
	symlink(t, filepath.Join(dir, "hosts"), filepath.Join(dir, "linked"))
	symlink(t, "/etc", filepath.Join(dir, "etc"))
	c := New(dir)
	defer c.Close()
	top, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Folders) != 1 || top.Folders[0].Name != "hosts" || top.Count != 2 || top.Size != 7 {
		t.Fatalf("top: %d folders, %d backups, %d bytes", len(top.Folders), top.Count, top.Size)
	}
	alpha, err := top.Lookup("hosts/alpha/")
	if err != nil || alpha.Count != 1 || alpha.Path != "hosts/alpha/" {
		t.Fatalf("hosts/alpha/: %+v, %v", alpha, err)
	}
	for _, p := range []string{"linked/", ".snapshots/", "etc/", "hosts/../hosts/", "hosts//alpha/", "nothing/"} {
		if _, err := top.Lookup(p); err != ErrNotFound {
			t.Errorf("Lookup(%q) = %v, want ErrNotFound", p, err)
		}
	}
}

// TestChangeReadsOneFolder: with the folders watched, a backup added to
// one folder reads that folder again and no other.
func TestChangeReadsOneFolder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the folders are watched on Linux only")
	}
	dir := t.TempDir()
	for i := range 30 {
		put(t, dir, fmt.Sprintf("f%02d/sub/a.tar", i), 1, base)
	}
	c := New(dir)
	defer c.Close()
	top, _ := c.Tree()
	if n := c.readDirs.Load(); n != 61 {
		t.Fatalf("first reading: %d folders read, want 61", n)
	}
	before := c.readDirs.Load()
	put(t, dir, "f07/sub/b.tar", 1, base.Add(time.Hour))
	var now *Folder
	testkit.WaitUntil(t, 5*time.Second, func() bool { now, _ = c.Tree(); return now.Count == 31 },
		func() string { return "the new backup does not show" })
	if n := c.readDirs.Load() - before; n != 1 {
		t.Errorf("%d folders read after a change in one, want 1", n)
	}
	if now.Folders[3] != top.Folders[3] || now.Folders[7] == top.Folders[7] {
		t.Error("unchanged folders were not kept, or the changed one was")
	}
	// A new folder is read, and watched.
	os.MkdirAll(filepath.Join(dir, "f07/new"), 0o700)
	testkit.WaitUntil(t, 5*time.Second, func() bool { now, _ = c.Tree(); _, err := now.Lookup("f07/new/"); return err == nil },
		func() string { return "the new folder does not show" })
	put(t, dir, "f07/new/c.tar", 1, base)
	testkit.WaitUntil(t, 5*time.Second, func() bool { now, _ = c.Tree(); return now.Count == 32 },
		func() string { return "a backup in the new folder does not show" })
	// A folder removed and made again at once, with other backups: the
	// new one is read, and watched.
	os.RemoveAll(filepath.Join(dir, "f05"))
	put(t, dir, "f05/sub/x.tar", 1, base)
	put(t, dir, "f05/sub/y.tar", 1, base)
	testkit.WaitUntil(t, 5*time.Second, func() bool {
		now, _ = c.Tree()
		f, err := now.Lookup("f05/sub/")
		return err == nil && len(f.Backups) == 2 && f.Backups[0].Name == "x.tar"
	}, func() string { return "the folder made again does not show" })
	put(t, dir, "f05/sub/z.tar", 1, base)
	testkit.WaitUntil(t, 5*time.Second, func() bool { now, _ = c.Tree(); return now.Count == 34 },
		func() string { return "a backup in the folder made again does not show" })
	os.RemoveAll(filepath.Join(dir, "f07"))
	testkit.WaitUntil(t, 5*time.Second, func() bool { now, _ = c.Tree(); return now.Count == 31 && len(now.Folders) == 29 },
		func() string { return "the removed folder still shows" })
}

// TestUnwatchedTreeSeesChanges: without the watcher a change deep in the
// tree shows too.
func TestUnwatchedTreeSeesChanges(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "a/b/c.tar", 1, base)
	c := New(dir)
	c.Close()
	if top, _ := c.Tree(); top.Count != 1 {
		t.Fatal(top.Count)
	}
	put(t, dir, "a/b/d.tar", 1, base)
	testkit.WaitUntil(t, 5*time.Second, func() bool { top, _ := c.Tree(); return top.Count == 2 },
		func() string { return "the new backup does not show" })
}
