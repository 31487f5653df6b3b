package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// WriteBehindDelay is how long a FileStore lets activity refreshes (Touch)
// accumulate before rewriting its file. At most one such write happens per
// delay, whatever the traffic.
const WriteBehindDelay = 5 * time.Second

// FileStore is the default Store: sessions live in memory, so Find costs a
// map lookup, and are persisted to <dir>/sessions.json so they survive a
// restart.
//
// Durability: Commit, Delete and DeleteUser append one line to
// <dir>/sessions.journal and fsync it before they return, so a login or a
// logout is on disk once acknowledged, at a cost that does not grow with
// the number of sessions. Touch (the activity refresh) is written behind,
// at most once per WriteBehindDelay, and on Close; a crash loses at most
// those refreshes, which only makes idle expiry a little earlier. The
// write-behind (also started when the journal grows long) replaces the
// whole sessions.json atomically (temporary file, fsync, rename, directory
// fsync) and then empties the journal; opening the store replays the
// journal over the file.
//
// Expired records are dropped when the file is loaded, at every write and by
// a sweep during commits. The file holds keyed hashes of session ids, never
// the ids themselves.
//
// One process owns the directory: two processes sharing a file store would
// overwrite each other's sessions. Several instances need a shared store
// (see the package documentation).
type FileStore struct {
	path  string
	now   func() time.Time
	delay time.Duration

	mu      sync.RWMutex
	t       table
	gen     uint64      // bumped on every change to t
	written uint64      // gen of the last snapshot that reached the disk
	closed  bool        // Close was called
	timer   *time.Timer // pending write-behind, nil when none

	// flushMu serialises writes to the files: each snapshot is taken after
	// the previous write finished, so the file never goes back to an older
	// state, and journal appends never race the journal being emptied.
	flushMu sync.Mutex
	journal *journalFile
}

// foldAfter is how many journal lines beyond the number of live sessions
// start a rewrite of the session file (which empties the journal).
const foldAfter = 1000

var (
	_ Store       = (*FileStore)(nil)
	_ Toucher     = (*FileStore)(nil)
	_ UserDeleter = (*FileStore)(nil)
	_ UserLimiter = (*FileStore)(nil)
	_ Pinger      = (*FileStore)(nil)
	_ Generations = (*FileStore)(nil)
)

// UserGeneration returns username's generation (Generations).
func (s *FileStore) UserGeneration(_ context.Context, username string) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.t.generation(username), nil
}

// OpenFileStore opens the store kept in dir, creating dir (mode 0700) and the
// file (mode 0600) when missing. now (time.Now when nil) decides expiry. A
// file that cannot be parsed is an error naming it: the store does not guess.
// The file is rewritten at once when it is new, when expired records were
// dropped or when its mode was looser than 0600, so that an unwritable
// directory is reported at start rather than at the first login.
func OpenFileStore(dir string, now func() time.Time) (*FileStore, error) {
	if dir == "" {
		return nil, errors.New("session: file store: no directory given")
	}
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session: create state directory: %w", err)
	}
	if err := removeStaleTemps(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	st, err := readStateFile(path)
	if err != nil {
		return nil, err
	}
	jpath := filepath.Join(dir, JournalName)
	entries, lines, err := readJournal(jpath, st.seq)
	if err != nil {
		return nil, err
	}
	s := &FileStore{path: path, now: now, delay: WriteBehindDelay, t: newTable()}
	s.t.recs, s.t.gens = st.recs, st.gens
	s.gen, s.written = st.seq, st.seq
	for _, e := range entries {
		e.apply(&s.t)
		s.gen = e.Seq
	}
	if s.journal, err = openJournal(jpath, lines); err != nil {
		return nil, err
	}
	dropped := s.t.sweep(now())
	if !st.exists || st.loose || dropped > 0 || lines > 0 {
		s.gen++
		if err := s.flush(); err != nil {
			s.journal.close()
			return nil, err
		}
	}
	return s, nil
}

// Path returns the file the store writes.
func (s *FileStore) Path() string { return s.path }

// Find returns a copy of the live record under key.
func (s *FileStore) Find(_ context.Context, key string) (Record, bool, error) {
	now := s.now()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return Record{}, false, ErrClosed
	}
	rec, ok := s.t.find(key, now)
	s.mu.RUnlock()
	return rec, ok, nil
}

// findShared is Find without copying the record's byte slices (see
// table.findShared).
func (s *FileStore) findShared(key string) (Record, bool, bool, error) {
	now := s.now()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return Record{}, false, false, ErrClosed
	}
	rec, ok, checked := s.t.findShared(key, now)
	s.mu.RUnlock()
	return rec, ok, checked, nil
}

// markIntact records that the manager found the MAC of the record under
// key right (see table.markIntact).
func (s *FileStore) markIntact(key string, mac []byte) {
	markIntactLocked(&s.mu, &s.t, key, mac)
}

// Commit stores a copy of rec under key and rewrites the file before
// returning. A record without Expires is refused.
func (s *FileStore) Commit(_ context.Context, key string, rec Record) error {
	if rec.Expires.IsZero() {
		return errNoExpiry
	}
	now := s.now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.t.sweepIfDue(now)
	s.t.put(key, rec)
	s.gen++
	e := journalEntry{Seq: s.gen, Op: opPut, Key: key, Rec: &rec}
	s.mu.Unlock()
	return s.record(e)
}

// Touch refreshes LastSeen, Expires and MAC of an existing record in memory
// and schedules a write-behind; it never creates a record.
func (s *FileStore) Touch(_ context.Context, key string, lastSeen, expires time.Time, mac []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.t.touch(key, lastSeen, expires, mac) {
		s.gen++
		s.scheduleLocked()
	}
	return nil
}

// Delete removes key and, if it was there, rewrites the file before
// returning. Deleting an unknown key is not an error.
func (s *FileStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if !s.t.remove(key) {
		s.mu.Unlock()
		return nil
	}
	s.gen++
	e := journalEntry{Seq: s.gen, Op: opDelete, Key: key}
	s.mu.Unlock()
	return s.record(e)
}

// DeleteUser moves username's generation forward, removes every session
// of username, records both durably, and returns how many sessions it
// removed.
func (s *FileStore) DeleteUser(_ context.Context, username string) (int, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	n := s.t.removeUser(username)
	s.gen++
	e := journalEntry{Seq: s.gen, Op: opDeleteUser, User: username}
	s.mu.Unlock()
	return n, s.record(e)
}

// Ping reports whether the store is open.
func (s *FileStore) Ping(context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// LimitUser ends the oldest sessions of username beyond keep, durably.
func (s *FileStore) LimitUser(_ context.Context, username string, keep int) (int, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	keys := s.t.oldestOfUser(username, keep)
	entries := make([]journalEntry, 0, len(keys))
	for _, k := range keys {
		s.t.remove(k)
		s.gen++
		entries = append(entries, journalEntry{Seq: s.gen, Op: opDelete, Key: k})
	}
	s.mu.Unlock()
	if len(entries) == 0 {
		return 0, nil
	}
	return len(keys), s.record(entries...)
}

// record appends e to the journal, durably, and starts a rewrite of the
// session file when the journal has grown long.
func (s *FileStore) record(e ...journalEntry) error {
	s.flushMu.Lock()
	err := s.journal.append(e...)
	long := s.journal.lines > foldAfter+s.Len()
	s.flushMu.Unlock()
	if long {
		s.mu.Lock()
		s.scheduleLocked()
		s.mu.Unlock()
	}
	return err
}

// Flush writes pending activity refreshes now. It is what the write-behind
// timer and Close do; callers rarely need it.
func (s *FileStore) Flush() error { return s.flush() }

// Close writes pending changes and stops the store; later calls fail with
// ErrClosed. Closing twice is harmless.
func (s *FileStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	err := s.flush()
	if cerr := s.journal.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session: close: %w", err)
	}
	return nil
}

// Len returns how many records the store holds. It is meant for tests and
// metrics.
func (s *FileStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.t.recs)
}

// scheduleLocked arms the write-behind timer unless it is armed already.
// s.mu must be held.
func (s *FileStore) scheduleLocked() {
	if s.timer == nil && !s.closed {
		s.timer = time.AfterFunc(s.delay, s.writeBehind)
	}
}

// writeBehind runs on the timer. A failed write is retried after another
// delay; the next Commit, Delete or Close reports the failure, since it
// rewrites the same file.
func (s *FileStore) writeBehind() {
	s.mu.Lock()
	s.timer = nil
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return // Close writes for itself
	}
	if err := s.flush(); err != nil {
		s.mu.Lock()
		s.scheduleLocked()
		s.mu.Unlock()
	}
}

// flush writes the current records if anything changed since the last
// write, dropping expired records on the way.
func (s *FileStore) flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	now := s.now()
	s.mu.Lock()
	if s.gen == s.written {
		s.mu.Unlock()
		return nil
	}
	s.t.sweep(now)
	gen := s.gen
	snap, gens := s.t.snapshot(), maps.Clone(s.t.gens)
	s.mu.Unlock()
	if err := writeStateFile(s.path, snap, gens, gen); err != nil {
		return err
	}
	// Everything in the journal is now in the file, up to gen; whatever
	// comes later waits for flushMu and is appended afresh.
	if err := s.journal.reset(); err != nil {
		return err
	}
	s.mu.Lock()
	s.written = gen
	s.mu.Unlock()
	return nil
}
