// Package catalog is the backups folder: the list of backups the web
// interface shows and the safe opening of one of them for download.
//
// A backup is a regular file directly inside the folder. Nothing else is a
// backup: not a directory, not a symbolic link (even one that points at a
// file inside the folder), not a device, socket or named pipe, and not a file
// in a subdirectory. A listing is kept while the folder is unchanged: on
// Linux inotify says when it changes, elsewhere a stat of the folder does.
//
// Opening goes through os.Root, which confines every lookup to the folder,
// and compares what was looked up with what was opened, so a name cannot
// escape the folder with "..", a separator or a link, nor by swapping the file
// for a link between the check and the open.
package catalog

import (
	"cmp"
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

// ErrNotFound means the name does not denote a backup: no such file, or a
// name or file that is not a regular file directly inside the folder. The
// web layer answers it with 404 whatever the cause, so a client learns
// nothing about what else the folder holds.
var ErrNotFound = errors.New("catalog: backup not found")

// Backup describes one backup file.
type Backup struct {
	// Name is the file's name inside the folder, without any directory.
	Name string
	// Size is the file's length in bytes.
	Size int64
	// Modified is the file's modification time.
	Modified time.Time
}

// Catalog reads one backups folder. It is safe for concurrent use. On
// Linux it learns of changes to the folder from inotify, started at the
// first listing; Close stops that watch.
type Catalog struct {
	dir string
	log *slog.Logger // nil: skipped names go unreported

	// last is the last listing. gen counts the changes the watcher has
	// seen, and its end: a listing read under the watcher is current
	// while gen is what it was before the read.
	last atomic.Pointer[listing]
	gen  atomic.Uint64

	mu      sync.Mutex
	watch   *watcher  // nil: not watching, the folder is stat()ed instead
	tried   time.Time // the last attempt to start watching
	closed  bool      // Close was called: no new watch
	skipped map[string]bool
}

// listing is one reading of the folder and how to tell it is still current.
type listing struct {
	snap    *Snapshot
	watched bool        // read while the watcher ran: current while gen is unchanged
	gen     uint64      // Catalog.gen before the read
	stamp   os.FileInfo // not watched: the folder as it was when read
	at      time.Time   // not watched: when it was read
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
// (watchTick, shorter). Without it, a listing is reused for at most listTTL
// while the folder's own stat (modification time, inode) is unchanged:
// adding, removing or renaming a file changes the folder's modification
// time. It is also how long the catalog waits before trying again to watch
// a folder it could not watch.
const listTTL = 2 * time.Second

// maxSkippedReported bounds the names remembered as already reported.
const maxSkippedReported = 1024

// Dir returns the folder's path as given to New.
func (c *Catalog) Dir() string { return c.dir }

// List returns the backups, newest first; backups modified at the same
// instant are ordered by name. A folder that does not exist gives an empty
// list and no error. Entries that vanish while the folder is read are left
// out, and so are names Open refuses (holding a backslash, or longer than
// 255 bytes), so everything listed can be downloaded. List does not descend
// into subdirectories. Hidden files (names starting with a dot) are listed
// like any other. The slice is the caller's.
func (c *Catalog) List() ([]Backup, error) {
	snap, err := c.Snapshot()
	if snap == nil {
		return nil, err
	}
	return slices.Clone(snap.Backups), err
}

// Snapshot is one listing of the folder, shared by every caller while the
// folder is unchanged: read it, never modify it. A caller may keep work
// derived from it (an encoded answer) for as long as Catalog.Snapshot
// returns the same pointer.
type Snapshot struct {
	// Backups is the listing, in List's order.
	Backups []Backup
}

// Snapshot returns the listing as List does, without copying it: the same
// *Snapshot while the folder is unchanged, a new one otherwise.
//
// While the folder is watched (inotify, Linux), the listing is reused
// until the watcher reports a change, with no system call: a backup added,
// removed or renamed shows as soon as the watcher has read the kernel's
// notice, normally within a millisecond. Otherwise the folder is stat()ed
// on every call and the listing reused while that stat (modification time,
// inode, size) is unchanged and the listing is younger than listTTL. A
// folder that does not exist gives an empty snapshot, never cached.
func (c *Catalog) Snapshot() (*Snapshot, error) {
	if l := c.last.Load(); l != nil && l.watched && l.gen == c.gen.Load() {
		return l.snap, nil
	}
	return c.snapshotRead()
}

// snapshotRead is Snapshot when the last listing may be out of date.
func (c *Catalog) snapshotRead() (*Snapshot, error) {
	watched := c.ensureWatch()
	gen := c.gen.Load() // before the read: a change during it is seen next time
	prev := c.last.Load()
	var dirInfo os.FileInfo
	var statErr error
	now := time.Now()
	if !watched {
		dirInfo, statErr = os.Stat(c.dir)
		if statErr == nil && prev != nil && !prev.watched && now.Sub(prev.at) < listTTL && sameDir(prev.stamp, dirInfo) {
			return prev.snap, nil
		}
	}
	list, err := c.read()
	if err != nil {
		if list == nil {
			return nil, err
		}
		return &Snapshot{Backups: list}, err
	}
	snap := &Snapshot{Backups: list}
	if prev != nil && slices.Equal(prev.snap.Backups, list) {
		// Read again but unchanged: keep the pointer, so what callers
		// derived from it stays valid.
		snap = prev.snap
	}
	if !watched && statErr != nil {
		return snap, nil
	}
	c.last.Store(&listing{snap: snap, watched: watched, gen: gen, stamp: dirInfo, at: now})
	return snap, nil
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
	w, err := startWatcher(c.dir, func() { c.gen.Add(1) }, func() {
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

// Close stops watching the folder; the catalog keeps working, stat()ing
// the folder on every listing. It always returns nil, and does nothing on
// a nil *Catalog (a program without a catalog may defer it anyway).
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

// read lists the folder.
func (c *Catalog) read() ([]Backup, error) {
	entries, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Backup{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: list %s: %w", c.dir, err)
	}
	backups := make([]Backup, 0, len(entries))
	for _, e := range entries {
		// A name Open would refuse (a backslash, too long) is not offered
		// for download either.
		if !e.Type().IsRegular() {
			continue
		}
		if !validName(e.Name()) {
			if !utf8.ValidString(e.Name()) {
				c.reportSkipped(e.Name())
			}
			continue
		}
		// Info is an lstat: a file replaced by a link after ReadDir is
		// seen as the link and left out.
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("catalog: list %s: %w", c.dir, err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		backups = append(backups, backupOf(e.Name(), info))
	}
	slices.SortFunc(backups, func(a, b Backup) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return backups, nil
}

// Open opens the named backup for reading and describes it. The caller
// closes the file. Every name that is not a regular file directly inside the
// folder gives ErrNotFound: an empty name, ".", "..", a name holding '/',
// '\\' or NUL, a symbolic link wherever it points, a directory, a device.
// Other errors (permission denied, I/O) are returned wrapped.
//
// The file is looked up with Lstat inside an os.Root, opened through the same
// root, and its Fstat must name the very file the Lstat saw; a file swapped
// for a link or another file in between is refused, not followed.
func (c *Catalog) Open(name string) (*os.File, Backup, error) {
	if !validName(name) {
		return nil, Backup{}, ErrNotFound
	}
	root, err := os.OpenRoot(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Backup{}, ErrNotFound
	}
	if err != nil {
		return nil, Backup{}, fmt.Errorf("catalog: open %s: %w", c.dir, err)
	}
	defer root.Close()

	before, err := root.Lstat(name)
	if err != nil {
		return nil, Backup{}, notFoundOr(err, name)
	}
	if !before.Mode().IsRegular() {
		return nil, Backup{}, ErrNotFound
	}
	// O_NONBLOCK keeps a named pipe swapped in after the Lstat from
	// blocking the open; for a regular file it changes nothing.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrPermission) {
		return nil, Backup{}, fmt.Errorf("catalog: open %q: %w", name, err)
	}
	if err != nil {
		// The entry was a regular file a moment ago: it has gone, or it
		// was swapped for something the root refuses (a link leading
		// out of the folder, a loop).
		return nil, Backup{}, ErrNotFound
	}
	after, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, Backup{}, fmt.Errorf("catalog: stat %q: %w", name, err)
	}
	if !after.Mode().IsRegular() || !os.SameFile(before, after) {
		f.Close()
		return nil, Backup{}, ErrNotFound
	}
	return f, backupOf(name, after), nil
}

// maxNameLen is the longest file name the common file systems store (ext4,
// XFS, btrfs, ZFS: 255 bytes). Longer names cannot be backups.
const maxNameLen = 255

// validName reports whether name can only mean an entry of the folder
// itself. Backslashes are refused on every system, so a name means the same
// file wherever the service runs.
func validName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > maxNameLen || !utf8.ValidString(name) {
		return false
	}
	return !strings.ContainsAny(name, "/\\\x00")
}

// notFoundOr maps "no such file" and the refusals of a name the file system
// cannot hold (too long, invalid) to ErrNotFound, and wraps everything else
// (permission denied, I/O errors), which the operator must hear about.
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

func notFoundOr(err error, name string) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.EINVAL) {
		return ErrNotFound
	}
	return fmt.Errorf("catalog: open %q: %w", name, err)
}

func backupOf(name string, info fs.FileInfo) Backup {
	return Backup{Name: name, Size: info.Size(), Modified: info.ModTime()}
}
