// Package catalog is the backups folder: the tree of folders and backups
// the web interface shows, one folder's page of it, and the safe opening
// of one backup for download.
//
// A backup is a regular file inside the folder or inside one of its
// folders, at any depth. Nothing else is a backup: not a symbolic link
// (even one that points at a file inside the folder), not a device,
// socket or named pipe, not a file or folder whose name starts with a dot,
// and not a checksum file (NAME.sha256, SHA256SUMS), whose lines give the
// backups beside them their SHA-256 instead. A folder is a real directory,
// never a link. The tree is kept while the folders are unchanged: on Linux
// inotify says which folder changed, and only that one is read again;
// elsewhere each folder is stat()ed.
//
// Opening goes through os.Root, which confines every lookup to the folder,
// and compares what was looked up with what was opened at every step, so
// a path cannot escape the folder with "..", a separator or a link, nor by
// swapping a file or folder for a link between the check and the open.
package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// ErrNotFound means the path does not denote a backup (or, for Lookup, a
// folder): no such file, or a name or file that is not a regular file
// inside the folder. The web layer answers it with 404 whatever the cause,
// so a client learns nothing about what else the folder holds.
var ErrNotFound = errors.New("catalog: backup not found")

// Backup describes one backup file.
type Backup struct {
	// Name is the file's name inside its folder, without any directory.
	Name string
	// Size is the file's length in bytes.
	Size int64
	// Modified is the file's modification time.
	Modified time.Time
	// SHA256 is the lower-case hex digest that NAME.sha256 or a
	// SHA256SUMS line beside the file gives; "" when none does.
	SHA256 string
	// SumStale tells that the checksum file that gave SHA256 is older
	// than the file by either clock: its modification time is earlier, or
	// its status change time is (the file was written after it, even if
	// its modification time was then set back). The digest may describe
	// bytes the file no longer holds, so it is shown as stale and never
	// sent as the file's Repr-Digest. A verification of the bytes reports
	// it as such.
	SumStale bool
	// Changed is the file's status change time (ctime), which every
	// write, and every change of its times, moves to the present; Modified
	// where the system gives none. Inode is its inode number (0 where the
	// system gives none). With Size and Modified they name one version of
	// the file: see Version.
	Changed time.Time
	Inode   uint64
	// sumTimes are the times of the checksum file that gave SHA256.
	sumTimes stamp
}

// Version is a strong validator of the file's bytes, built from the file
// itself: its size, modification time and status change time to the
// nanosecond, and inode. A rewrite in place changes the change time even
// when it keeps the size and sets the modification time back; a
// replacement by rename changes the inode.
func (b Backup) Version() string {
	return strconv.FormatInt(b.Size, 36) + "-" + strconv.FormatInt(b.Modified.UnixNano(), 36) + "-" +
		strconv.FormatUint(b.Inode, 36) + "-" + strconv.FormatInt(b.Changed.UnixNano(), 36)
}

// LastChanged is the later of the file's modification and status change
// times: when its bytes last changed at the latest. Setting the
// modification time back cannot move it earlier, so a client comparing
// dates (If-Modified-Since, wget -N) is not told an old date for new
// bytes.
func (b Backup) LastChanged() time.Time {
	if b.Changed.After(b.Modified) {
		return b.Changed
	}
	return b.Modified
}

// stamp is a checksum file's two clocks: its modification time, which
// says when it was written and can be set, and its status change time,
// which moves to the present on every write and cannot be set back.
type stamp struct{ modified, changed time.Time }

func stampOf(b Backup) stamp { return stamp{b.Modified, b.Changed} }

// olderThan reports whether a checksum file with these times is older
// than the backup b by either clock, so its digest may not be b's.
func (s stamp) olderThan(b Backup) bool {
	return s.modified.Before(b.Modified) || s.changed.Before(b.Changed)
}

// Catalog reads one backups folder. It is safe for concurrent use. On
// Linux it learns of changes from inotify, one watch per folder, started
// at the first listing; Close stops the watches.
type Catalog struct {
	dir string
	log *slog.Logger // nil: skipped names go unreported

	// last is the last reading of the tree. gen counts the changes the
	// watcher has seen, and its end: a tree read under the watcher is
	// current while gen is what it was before the read.
	last atomic.Pointer[listing]
	gen  atomic.Uint64
	// readDirs counts the folders read, for tests of what a change
	// costs.
	readDirs atomic.Int64

	// build serialises the readings of the tree.
	build sync.Mutex

	mu      sync.Mutex
	watch   *watcher        // nil: not watching, the folders are stat()ed instead
	tried   time.Time       // the last attempt to start watching
	closed  bool            // Close was called: no new watch
	dirty   map[string]bool // folders the watcher saw change since the last reading; allDirty: every one
	skipped map[string]bool

	// checks are the last verification results, by backup path.
	checks results
}

// allDirty in Catalog.dirty asks for the whole tree to be read again.
const allDirty = "*"

// listing is one reading of the tree and how to tell it is still current.
type listing struct {
	top     *Folder
	watched bool      // read while the watcher ran: current while gen is unchanged
	gen     uint64    // Catalog.gen before the read
	at      time.Time // not watched: when it was read in full
}

// New returns the catalog of dir. The folder need not exist yet: until it
// does, the catalog is empty. New does not touch the file system.
func New(dir string) *Catalog {
	return &Catalog{dir: dir}
}

// WithLogger makes c report, once per name, the files it leaves out of the
// listing because their names cannot be served (not valid UTF-8: a name a
// browser or JSON client cannot send back). It returns c.
func (c *Catalog) WithLogger(log *slog.Logger) *Catalog {
	c.log = log
	return c
}

// listTTL bounds how long a file growing in place shows its old size. With
// the watcher, writes to a file are passed on at the watcher's next tick
// (watchTick, shorter). Without it, the tree is read again in full after
// listTTL, and in between a folder whose own stat (modification time,
// inode) changed is read again: adding, removing or renaming an entry
// changes its folder's modification time. It is also how long the catalog
// waits before trying again to watch a folder it could not watch.
const listTTL = 2 * time.Second

// maxSkippedReported bounds the names remembered as already reported.
const maxSkippedReported = 1024

// FoldersRead returns how many folders c has read (one directory listing
// each) since New: what a change costs, for tests and benchmarks.
func (c *Catalog) FoldersRead() int64 { return c.readDirs.Load() }

// Dir returns the folder's path as given to New.
func (c *Catalog) Dir() string { return c.dir }

// List returns the backups directly inside the folder, newest first;
// backups modified at the same instant are ordered by name. A folder that
// does not exist gives an empty list and no error. Entries that vanish
// while the folder is read are left out, and so are names Open refuses
// (holding a backslash, longer than 255 bytes, starting with a dot), so
// everything listed can be downloaded. The slice is the caller's.
func (c *Catalog) List() ([]Backup, error) {
	snap, err := c.Snapshot()
	if snap == nil {
		return nil, err
	}
	return slices.Clone(snap.Backups), err
}

// Snapshot is one listing of the top folder's own backups, shared by every
// caller while that folder is unchanged: read it, never modify it. A
// caller may keep work derived from it (an encoded answer) for as long as
// Catalog.Snapshot returns the same pointer.
type Snapshot struct {
	// Backups is the listing, in List's order.
	Backups []Backup
}

// Snapshot returns the listing as List does, without copying it: the same
// *Snapshot while the top folder's own backups are unchanged, a new one
// otherwise. See Tree for when the folders are read.
func (c *Catalog) Snapshot() (*Snapshot, error) {
	top, err := c.Tree()
	if top == nil {
		return nil, err
	}
	return top.flat, err
}

// Tree returns the top folder, with every folder and backup below it. It
// is shared by every caller while the folders are unchanged: read it,
// never modify it. A folder unchanged since the last reading keeps its
// *Folder, so a caller may keep work derived from one for as long as it
// is returned again.
//
// While the folders are watched (inotify, Linux), the tree is reused until
// the watcher reports a change, with no system call, and then only the
// folders that changed are read again: a backup added, removed or renamed
// shows as soon as the watcher has read the kernel's notice, normally
// within a millisecond. Otherwise every folder is stat()ed on every call
// and those whose stat changed are read again; the whole tree is read
// again when older than listTTL. A top folder that does not exist gives an
// empty tree, never cached.
func (c *Catalog) Tree() (*Folder, error) {
	if l := c.last.Load(); l != nil && l.watched && l.gen == c.gen.Load() {
		return l.top, nil
	}
	c.build.Lock()
	defer c.build.Unlock()
	if l := c.last.Load(); l != nil && l.watched && l.gen == c.gen.Load() {
		return l.top, nil // read by another caller meanwhile
	}
	return c.readTree()
}

// readTree is Tree when the last reading may be out of date; c.build is
// held.
func (c *Catalog) readTree() (*Folder, error) {
	watched := c.ensureWatch()
	gen := c.gen.Load() // before the read: a change during it is seen next time
	prev := c.last.Load()
	now := time.Now()
	dirty := c.takeDirty()
	full := prev == nil || dirty[allDirty] || prev.watched != watched || (!watched && now.Sub(prev.at) >= listTTL)
	var old *Folder
	if !full {
		old = prev.top
		if !watched {
			dirty = c.changedFolders(prev.top)
		}
	}
	root, err := os.OpenRoot(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		c.last.Store(nil)
		return emptyFolder(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: list %s: %w", c.dir, err)
	}
	defer root.Close()
	r := reader{c: c, dirty: dirty, full: full, watched: watched}
	top, err := r.folder(root, "", "", old)
	if err != nil {
		return nil, err
	}
	at := now
	if !full {
		at = prev.at
	}
	c.last.Store(&listing{top: top, watched: watched, gen: gen, at: at})
	return top, nil
}

// takeDirty returns the folders the watcher saw change and forgets them.
func (c *Catalog) takeDirty() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.dirty
	c.dirty = nil
	return d
}

// markDirty records that folder rel changed (allDirty: any) and makes the
// next Tree read it.
func (c *Catalog) markDirty(rel string) {
	c.mu.Lock()
	if c.dirty == nil {
		c.dirty = map[string]bool{}
	}
	c.dirty[rel] = true
	c.mu.Unlock()
	c.gen.Add(1)
}

// changedFolders stats every folder of top and returns those whose stat
// is not the one they were read with (or that are gone).
func (c *Catalog) changedFolders(top *Folder) map[string]bool {
	out := map[string]bool{}
	var walk func(f *Folder)
	walk = func(f *Folder) {
		now, err := os.Lstat(c.dir + "/" + f.Path)
		if err != nil || f.stamp == nil || !sameDir(f.stamp, now) {
			out[f.Path] = true
		}
		for _, sub := range f.Folders {
			walk(sub)
		}
	}
	walk(top)
	return out
}

// ensureWatch starts the watcher unless it runs, the catalog is closed, or
// an attempt failed less than listTTL ago, and reports whether it runs.
func (c *Catalog) ensureWatch() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watch != nil {
		return true
	}
	if c.closed || (!c.tried.IsZero() && time.Since(c.tried) < listTTL) {
		return false
	}
	c.tried = time.Now()
	var w *watcher
	w, err := startWatcher(c.dir, c.markDirty, func() {
		c.mu.Lock()
		if c.watch == w {
			c.watch = nil
		}
		c.mu.Unlock()
		c.gen.Add(1)
	})
	if err != nil {
		return false
	}
	c.watch = w
	return true
}

// watchFolder adds folder rel to the running watch; false when there is
// none or the kernel refuses one more (the tree is then stat()ed).
func (c *Catalog) watchFolder(rel string) bool {
	c.mu.Lock()
	w := c.watch
	c.mu.Unlock()
	if w == nil {
		return false
	}
	if err := w.add(rel); err != nil {
		// Out of watches: stop watching, and stat every folder instead.
		go c.dropWatch(w)
		return false
	}
	return true
}

// dropWatch stops w when it is still the catalog's watcher.
func (c *Catalog) dropWatch(w *watcher) {
	c.mu.Lock()
	if c.watch == w {
		c.watch = nil
	}
	c.mu.Unlock()
	w.stop()
	c.gen.Add(1)
}

// Close stops watching the folders; the catalog keeps working, stat()ing
// them on every listing. It always returns nil, and does nothing on a nil
// *Catalog (a program without a catalog may defer it anyway).
func (c *Catalog) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	c.closed = true
	w := c.watch
	c.mu.Unlock()
	if w != nil {
		w.stop()
	}
	return nil
}

// sameDir reports whether two stats describe the same, unchanged folder.
func sameDir(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// maxNameLen is the longest file name the common file systems store (ext4,
// XFS, btrfs, ZFS: 255 bytes). Longer names cannot be backups.
const maxNameLen = 255

// validName reports whether name can only mean an entry of a folder
// itself, and one the catalog shows: not hidden (a leading dot). Backslashes
// are refused on every system, so a name means the same file wherever the
// service runs.
func validName(name string) bool {
	if name == "" || name[0] == '.' || len(name) > maxNameLen || !utf8.ValidString(name) {
		return false
	}
	return !strings.ContainsAny(name, "/\\\x00")
}

// reportSkipped logs, once per name, a file left out of the listing
// because its name is not valid UTF-8. The name is shown with Go's
// escapes, so the log line stays valid text.
func (c *Catalog) reportSkipped(name string) {
	if c.log == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.skipped == nil {
		c.skipped = map[string]bool{}
	}
	if c.skipped[name] || len(c.skipped) >= maxSkippedReported {
		return
	}
	c.skipped[name] = true
	c.log.Warn("catalog: a file in the backups folder is not listed: its name is not valid UTF-8, so no browser or API client could ask for it; rename it",
		"dir", c.dir, "name", strings.Trim(strconv.QuoteToASCII(name), `"`))
}

// notFoundOr maps "no such file" and the refusals of a name the file system
// cannot hold (too long, invalid) to ErrNotFound, and wraps everything else
// (permission denied, I/O errors), which the operator must hear about.
func notFoundOr(err error, name string) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTDIR) {
		return ErrNotFound
	}
	return fmt.Errorf("catalog: open %q: %w", name, err)
}

func backupOf(name string, info fs.FileInfo) Backup {
	b := Backup{Name: name, Size: info.Size(), Modified: info.ModTime(), Changed: info.ModTime()}
	statIdentity(&b, info)
	return b
}
