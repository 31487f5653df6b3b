package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// listed returns the names and sizes c lists, in the order of the names,
// for comparisons.
func listed(t testing.TB, c *Catalog) string {
	t.Helper()
	list, err := c.List()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list, func(a, b Backup) int { return strings.Compare(a.Name, b.Name) })
	var s string
	for _, b := range list {
		s += fmt.Sprintf("%s:%d ", b.Name, b.Size)
	}
	return s
}

// waitListed waits until c lists want.
func waitListed(t testing.TB, c *Catalog, want string) {
	t.Helper()
	testkit.WaitUntil(t, 5*time.Second, func() bool { return listed(t, c) == want },
		func() string { return fmt.Sprintf("listed %q, want %q", listed(t, c), want) })
}

// TestListSeesChanges: a file added, renamed, removed, or grown in place
// shows, watched or not.
func TestListSeesChanges(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			dir := t.TempDir()
			c := New(dir)
			defer c.Close()
			if got := listed(t, c); got != "" {
				t.Fatal(got)
			}
			if closed {
				c.Close() // the stat of every listing
			}
			p := filepath.Join(dir, "new.tar")
			os.WriteFile(p, []byte("x"), 0o600)
			waitListed(t, c, "new.tar:1 ")
			os.Rename(p, filepath.Join(dir, "renamed.tar"))
			waitListed(t, c, "renamed.tar:1 ")
			f, err := os.OpenFile(filepath.Join(dir, "renamed.tar"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.Write([]byte("yz")) // still open: no close event, only writes
			waitListed(t, c, "renamed.tar:3 ")
			os.Remove(filepath.Join(dir, "renamed.tar"))
			waitListed(t, c, "")
		})
	}
}

// TestWatchedSnapshotShared: while the folder is watched and unchanged,
// Snapshot returns the same listing without reading the folder.
func TestWatchedSnapshotShared(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the folder is watched on Linux only")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar"), []byte("a"), 0o600)
	c := New(dir)
	defer c.Close()
	s1, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	watching := c.watch != nil
	c.mu.Unlock()
	if !watching {
		t.Fatal("the folder is not watched after the first listing")
	}
	if l := c.last.Load(); !l.watched {
		t.Fatal("the listing was not read under the watcher")
	}
	for range 3 {
		if s2, _ := c.Snapshot(); s2 != s1 {
			t.Fatal("unchanged folder, new snapshot")
		}
	}
	os.WriteFile(filepath.Join(dir, "b.tar"), []byte("b"), 0o600)
	waitListed(t, c, "a.tar:1 b.tar:1 ")
}

// folderListing makes top/backups holding one one-byte file, name, and
// returns them with its catalog, listed once (so watched where it can be),
// closed when the test ends.
func folderListing(t *testing.T, name string) (top, dir string, c *Catalog) {
	t.Helper()
	top = t.TempDir()
	dir = filepath.Join(top, "backups")
	os.Mkdir(dir, 0o700)
	os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600)
	c = New(dir)
	t.Cleanup(func() { c.Close() })
	if got := listed(t, c); got != name+":1 " {
		t.Fatal(got)
	}
	return top, dir, c
}

// TestWatchedFolderReplaced: when the path comes to name another folder
// (the old one renamed away, a new one made), the new one is listed.
func TestWatchedFolderReplaced(t *testing.T) {
	top, dir, c := folderListing(t, "old.tar")
	// The folder's parent renamed: the watch, on the folder itself,
	// sees nothing; the watcher's check of the path does.
	if err := os.Rename(top+"/backups", top+"/moved"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "fresh.tar"), []byte("ff"), 0o600)
	waitListed(t, c, "fresh.tar:2 ")
	os.WriteFile(filepath.Join(dir, "more.tar"), []byte("mmm"), 0o600)
	waitListed(t, c, "fresh.tar:2 more.tar:3 ")
}

// TestWatchedFolderRemoved: a watched folder removed lists as empty, and a
// new one made at its path is listed.
func TestWatchedFolderRemoved(t *testing.T) {
	_, dir, c := folderListing(t, "a.tar")
	os.RemoveAll(dir)
	waitListed(t, c, "")
	os.Mkdir(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "b.tar"), []byte("bb"), 0o600)
	waitListed(t, c, "b.tar:2 ")
}

// TestCloseStopsWatcher: Close ends the watcher's goroutine and later
// listings start none.
func TestCloseStopsWatcher(t *testing.T) {
	dir := t.TempDir()
	c := New(dir)
	listed(t, c)
	c.Close()
	listed(t, c)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watch != nil {
		t.Fatal("a watcher runs after Close")
	}
}

// TestCloseNil: a program without a catalog may close its nil *Catalog.
func TestCloseNil(t *testing.T) {
	var c *Catalog
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
