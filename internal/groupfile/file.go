package groupfile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/filewatch"
)

// DefaultPollInterval is how often Watch reads the file to see whether it
// changed, as the user file is watched.
const DefaultPollInterval = 2 * time.Second

// File is a groups file kept current: read by Open, again by Reload (the
// program calls it on SIGHUP, beside the user file's reload) and whenever
// Watch sees its content change. Lookups always answer from the last
// reading, so a user whose groups changed is judged by the new groups at
// the next request; sessions are not touched.
//
// It fails closed: once a reading fails (the file is missing, unreadable,
// or has an error on any line), every user's groups are unknown
// (GroupsOf's known is false) until a reading succeeds again. Nobody is
// then admitted by a group, and a rule that needs a group to decide
// refuses (see access.Who.GroupsKnown), so that a broken file never makes a
// deny rule stop matching. The old groups are not kept: a broken edit may
// be the one that removed someone from a group. Safe for concurrent use.
type File struct {
	path string
	log  *slog.Logger
	// PollInterval is how often Watch reads the file; zero:
	// DefaultPollInterval; negative: Watch returns at once.
	PollInterval time.Duration

	mu  sync.Mutex // serialises readings
	cur atomic.Pointer[reading]
}

// reading is one reading of the file.
type reading struct {
	table  *Table // nil when broken
	digest [32]byte
	err    error
}

// Open reads the groups file at path. An error (the file cannot be read or
// has a problem) means the configuration cannot start. log receives the
// reload messages; nil discards them.
func Open(path string, log *slog.Logger) (*File, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, log: log}
	rd := read(path)
	if rd.err != nil {
		return nil, rd.err
	}
	f.cur.Store(rd)
	return f, nil
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// GroupsOf returns name's groups (sorted; shared, not to be changed) and
// whether they are known: false while the file is broken.
func (f *File) GroupsOf(name string) (groups []string, known bool) {
	rd := f.cur.Load()
	if rd == nil || rd.table == nil {
		return nil, false
	}
	return rd.table.GroupsOf(name), true
}

// Broken returns the problem of the last reading, or nil when it is good.
func (f *File) Broken() error {
	if rd := f.cur.Load(); rd != nil {
		return rd.err
	}
	return errors.New("groupfile: not read")
}

// Reload reads the file again and returns its problem, if any. It logs
// (at error level) when the file breaks, naming the file and line and
// saying that nobody is admitted by group, and (at info level) when it is
// read again, with how many groups it defines.
func (f *File) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	rd := read(f.path)
	prev := f.cur.Load()
	f.cur.Store(rd)
	switch {
	case rd.err != nil && (prev == nil || prev.err == nil || prev.err.Error() != rd.err.Error()):
		f.log.Error("auth: the groups file cannot be used; nobody is admitted by a group and rules that name groups refuse until it is fixed", "file", f.path, "err", rd.err)
	case rd.err == nil && prev != nil && prev.err != nil:
		f.log.Info("auth: the groups file is good again", "file", f.path, "groups", rd.table.Groups())
	case rd.err == nil && (prev == nil || prev.digest != rd.digest):
		f.log.Info("auth: groups file reloaded", "file", f.path, "groups", rd.table.Groups())
	}
	return rd.err
}

// Watch reads the file every PollInterval and switches to its content
// when it changed, until ctx ends (auth.Watcher).
func (f *File) Watch(ctx context.Context) {
	every := f.PollInterval
	if every == 0 {
		every = DefaultPollInterval
	}
	filewatch.Every(ctx, every, f.poll)
}

// poll reloads the file when its content or state differs from the last
// reading.
func (f *File) poll() {
	rd := read(f.path)
	prev := f.cur.Load()
	if prev != nil && prev.digest == rd.digest && (prev.err == nil) == (rd.err == nil) {
		return
	}
	f.Reload()
}

// read reads and parses the file at path.
func read(path string) *reading {
	fh, err := os.Open(path)
	if err != nil {
		return &reading{err: fmt.Errorf("groupfile: cannot read the groups file %s: %w", path, err)}
	}
	defer fh.Close()
	if info, err := fh.Stat(); err == nil && !info.Mode().IsRegular() {
		return &reading{err: fmt.Errorf("groupfile: the groups file %s is not a regular file", path)}
	}
	data, err := io.ReadAll(io.LimitReader(fh, MaxSize+1))
	if err != nil {
		return &reading{err: fmt.Errorf("groupfile: cannot read the groups file %s: %w", path, err)}
	}
	rd := &reading{digest: sha256.Sum256(data)}
	rd.table, rd.err = Parse(path, data)
	return rd
}
