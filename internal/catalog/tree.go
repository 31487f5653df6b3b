package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// Folder is one folder of the tree: its own backups and its subfolders,
// with totals over everything below it. Read it, never modify it.
type Folder struct {
	// Path is the folder's path inside the backups folder, with a final
	// slash ("db/", "hosts/alpha/"); "" for the top folder.
	Path string
	// Name is the last element of Path, "" for the top folder.
	Name string
	// Folders are the subfolders, by name.
	Folders []*Folder
	// Backups are the folder's own backups, newest first, then by name.
	Backups []Backup
	// Count, Size and Newest are the number of backups at any depth
	// below the folder, their total size, and the newest one's time
	// (zero when there is none).
	Count  int
	Size   int64
	Newest time.Time

	flat  *Snapshot   // Backups as a Snapshot, for Catalog.Snapshot
	stamp os.FileInfo // the folder's stat when it was read

	orders sync.Map // orderKey → []int32: Backups' indexes in that order
	// totals are the folder's totals under a Query's Visible, by
	// VisibleKey; totalsKeys counts them (roughly: concurrent pages may
	// store one twice).
	totals     sync.Map
	totalsKeys atomic.Int32
}

// emptyFolder is the top of a backups folder that does not exist.
func emptyFolder() *Folder {
	return &Folder{Backups: []Backup{}, flat: &Snapshot{Backups: []Backup{}}}
}

// Lookup returns the folder at rel ("" for the top, "db/", "db/daily/";
// the final slash optional), or ErrNotFound.
func (f *Folder) Lookup(rel string) (*Folder, error) {
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" {
		return f, nil
	}
	cur := f
	for name := range strings.SplitSeq(rel, "/") {
		i, ok := slices.BinarySearchFunc(cur.Folders, name, func(s *Folder, n string) int { return strings.Compare(s.Name, n) })
		if !ok || !validName(name) {
			return nil, ErrNotFound
		}
		cur = cur.Folders[i]
	}
	return cur, nil
}

// Walk calls fn for f and every folder below it, parents first.
func (f *Folder) Walk(fn func(*Folder)) {
	fn(f)
	for _, s := range f.Folders {
		s.Walk(fn)
	}
}

// reader is one reading of the tree: which folders to read again.
type reader struct {
	c       *Catalog
	dirty   map[string]bool // folders to read again (not full)
	full    bool            // read every folder
	watched bool            // add a watch to every folder read for the first time
}

// stale reports whether rel or a folder below it must be read again.
func (r *reader) stale(rel string) (self, below bool) {
	if r.full {
		return true, true
	}
	for d := range r.dirty {
		if d == rel {
			self = true
		} else if strings.HasPrefix(d, rel) {
			below = true
		}
	}
	return self, below
}

// folder returns the folder rel (named name), opened as dir, reading it
// again when it changed and reusing old (its previous reading, nil for
// none) otherwise, and the same for every folder below it.
func (r *reader) folder(dir *os.Root, rel, name string, old *Folder) (*Folder, error) {
	self, below := r.stale(rel)
	if old != nil && !self && !below {
		return old, nil
	}
	var f *Folder
	var subs []string
	var err error
	if old == nil || self {
		if r.watched {
			// Before the read, so nothing added after it is missed; again
			// at every read (the kernel keeps one watch per folder), so a
			// folder removed and made again at the same path is watched.
			r.watched = r.c.watchFolder(rel)
		}
		f, subs, err = r.c.readFolder(dir, rel, name)
		if err != nil {
			return nil, err
		}
	} else {
		f = &Folder{Path: rel, Name: name, Backups: old.Backups, flat: old.flat, stamp: old.stamp}
		for _, s := range old.Folders {
			subs = append(subs, s.Name)
		}
	}
	for _, s := range subs {
		var prev *Folder
		if old != nil {
			if i, ok := slices.BinarySearchFunc(old.Folders, s, func(x *Folder, n string) int { return strings.Compare(x.Name, n) }); ok {
				prev = old.Folders[i]
			}
		}
		sub, err := openSub(dir, s)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // gone, or swapped for something else
			}
			return nil, err
		}
		child, err := r.folder(sub, rel+s+"/", s, prev)
		sub.Close()
		if err != nil {
			return nil, err
		}
		f.Folders = append(f.Folders, child)
	}
	f.total()
	if old != nil && f.same(old) {
		return old, nil // unchanged: keep the pointer, and what callers derived from it
	}
	return f, nil
}

// total fills in Count, Size and Newest.
func (f *Folder) total() {
	f.Count, f.Size, f.Newest = len(f.Backups), 0, time.Time{}
	for _, b := range f.Backups {
		f.Size += b.Size
	}
	if len(f.Backups) > 0 {
		f.Newest = f.Backups[0].Modified
	}
	for _, s := range f.Folders {
		f.Count += s.Count
		f.Size += s.Size
		if s.Newest.After(f.Newest) {
			f.Newest = s.Newest
		}
	}
}

// same reports whether f holds what old holds, subfolders by pointer.
func (f *Folder) same(old *Folder) bool {
	return slices.Equal(f.Folders, old.Folders) && slices.Equal(f.Backups, old.Backups)
}

// openSub opens the subfolder name of dir as a root of its own, when it is
// a real folder: one swapped for a link between the look and the open is
// refused, not followed.
func openSub(dir *os.Root, name string) (*os.Root, error) {
	before, err := dir.Lstat(name)
	if err != nil {
		return nil, notFoundOr(err, name)
	}
	if !before.IsDir() {
		return nil, ErrNotFound
	}
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, notFoundOr(err, name)
	}
	after, err := sub.Stat(".")
	if err != nil || !os.SameFile(before, after) {
		sub.Close()
		return nil, notFoundOr(cmp.Or(err, fs.ErrNotExist), name)
	}
	return sub, nil
}

// Checksum files: NAME.sha256 beside NAME, and SHA256SUMS (sha256sum's
// output) for every file of its folder. Neither is a backup.
const (
	sumSuffix = ".sha256"
	sumsFile  = "SHA256SUMS"
	// maxSumsBytes bounds what is read of one checksum file.
	maxSumsBytes = 4 << 20
)

// isChecksumFile reports whether name is a checksum file, not a backup.
func isChecksumFile(name string) bool {
	return name == sumsFile || (strings.HasSuffix(name, sumSuffix) && len(name) > len(sumSuffix))
}

// readFolder reads the folder rel, opened as dir: its backups with their
// checksums, and the names of its subfolders, sorted.
func (c *Catalog) readFolder(dir *os.Root, rel, name string) (*Folder, []string, error) {
	c.readDirs.Add(1)
	where := c.dir + "/" + rel
	d, err := dir.Open(".")
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: list %s: %w", where, err)
	}
	stamp, _ := d.Stat()
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: list %s: %w", where, err)
	}
	f := &Folder{Path: rel, Name: name, Backups: make([]Backup, 0, len(entries)), stamp: stamp}
	var subs, sums []string
	for _, e := range entries {
		n := e.Name()
		if !validName(n) {
			if !utf8.ValidString(n) {
				c.reportSkipped(rel + n)
			}
			continue
		}
		switch {
		case e.IsDir():
			subs = append(subs, n)
			continue
		case !e.Type().IsRegular():
			continue
		case isChecksumFile(n):
			sums = append(sums, n)
			continue
		}
		// An lstat inside the root: a file replaced by a link after
		// ReadDir is seen as the link and left out.
		info, err := dir.Lstat(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("catalog: list %s: %w", where, err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		f.Backups = append(f.Backups, backupOf(n, info))
	}
	slices.SortFunc(f.Backups, newestFirst)
	slices.Sort(subs)
	if len(sums) > 0 {
		applySums(dir, f.Backups, sums)
	}
	f.flat = &Snapshot{Backups: f.Backups}
	return f, subs, nil
}

// newestFirst orders backups newest first, then by name.
func newestFirst(a, b Backup) int {
	if c := b.Modified.Compare(a.Modified); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// Open opens the backup at path ("db/daily/x.tar.zst", or a name directly
// inside the folder) for reading and describes it. The caller closes the
// file. Every path that is not a regular file inside the folder, through
// real folders only, gives ErrNotFound: an empty path, "." or ".."
// anywhere, an element starting with a dot or holding '\\' or NUL, a
// doubled or final slash, a symbolic link wherever it points (as the file
// or as a folder on the way), a directory, a device. Other errors
// (permission denied, I/O) are returned wrapped.
//
// Each folder on the way is looked up with Lstat inside an os.Root and
// opened as a root of its own whose stat must name the very folder the
// Lstat saw; the file is opened through the last root, and its Fstat must
// name the very file the Lstat saw. Anything swapped in between is
// refused, not followed.
func (c *Catalog) Open(path string) (*os.File, Backup, error) {
	elems := strings.Split(path, "/")
	for _, e := range elems {
		if !validName(e) {
			return nil, Backup{}, ErrNotFound
		}
	}
	root, err := os.OpenRoot(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Backup{}, ErrNotFound
	}
	if err != nil {
		return nil, Backup{}, fmt.Errorf("catalog: open %s: %w", c.dir, err)
	}
	for _, e := range elems[:len(elems)-1] {
		sub, err := openSub(root, e)
		root.Close()
		if err != nil {
			return nil, Backup{}, err
		}
		root = sub
	}
	defer root.Close()
	name := elems[len(elems)-1]
	if isChecksumFile(name) {
		return nil, Backup{}, ErrNotFound
	}
	f, b, err := openFile(root, name)
	if err != nil {
		return nil, Backup{}, err
	}
	if sum, at, ok := c.sumOf(path); ok {
		// Against the file as it is now, not as the tree saw it.
		b.SHA256, b.sumTimes, b.SumStale = sum, at, at.olderThan(b)
	}
	return f, b, nil
}

// sumOf is the checksum the current tree gives the backup at path and its
// checksum file's times; false when it gives none.
func (c *Catalog) sumOf(path string) (string, stamp, bool) {
	top, err := c.Tree()
	if err != nil || top == nil {
		return "", stamp{}, false
	}
	dir, name := "", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, name = path[:i+1], path[i+1:]
	}
	f, err := top.Lookup(dir)
	if err != nil {
		return "", stamp{}, false
	}
	for _, b := range f.Backups {
		if b.Name == name && b.SHA256 != "" {
			return b.SHA256, b.sumTimes, true
		}
	}
	return "", stamp{}, false
}

// openFile opens the regular file name directly inside root.
func openFile(root *os.Root, name string) (*os.File, Backup, error) {
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
