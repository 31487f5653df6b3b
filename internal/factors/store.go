package factors

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/filewatch"
)

// Store is the factors file as the service uses it: the last reading,
// read again when the file changes (its stat is polled) and on Reload
// (SIGHUP), and changes made through Edit. It is safe for concurrent use.
type Store struct {
	path string
	keys *Keys
	log  *slog.Logger

	set atomic.Pointer[Set]

	mu   sync.Mutex // serialises reloads; guards last
	last filewatch.Stamp
}

// Open reads the factors file at path and returns its Store. Problems in
// the file are logged (file, line, user) and make the users concerned
// Broken; they are not an error. log may be nil (slog.Default).
func Open(path string, keys *Keys, log *slog.Logger) *Store {
	if log == nil {
		log = slog.Default()
	}
	s := &Store{path: path, keys: keys, log: log}
	s.Reload()
	return s
}

// Path returns the factors file's path.
func (s *Store) Path() string { return s.path }

// Set returns the current reading.
func (s *Store) Set() *Set { return s.set.Load() }

// Lookup returns what the current reading says about user (see
// Set.Lookup).
func (s *Store) Lookup(user string) (*Record, Status) { return s.set.Load().Lookup(user) }

// Reload reads the file again. Its problems are logged, each with the
// file and line, and returned joined.
func (s *Store) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reloadLocked()
}

func (s *Store) reloadLocked() error {
	st, _ := filewatch.Stat(s.path) // a missing file is the zero stamp
	set, err := Read(s.path, s.keys)
	s.set.Store(set)
	s.last = st
	if err != nil {
		for _, e := range flatten(err) {
			var le *LineError
			if errors.As(e, &le) {
				s.log.Error("factors: a line of the factors file cannot be used; its user cannot sign in until it is fixed or their factors are reset",
					"file", le.File, "line", le.Line, "user", le.User, "err", le.Err)
				continue
			}
			s.log.Error("factors: the factors file cannot be read; nobody can complete a second factor until it is fixed", "file", s.path, "err", e)
		}
		return err
	}
	return nil
}

// flatten returns the errors joined in err, or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Poll reads the file again when its stat changed since the last reading.
func (s *Store) Poll() {
	st, _ := filewatch.Stat(s.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Same(s.last) && !st.Racy() {
		return
	}
	s.reloadLocked()
}

// Watch polls the file every interval until ctx ends (none when
// interval is not positive).
func (s *Store) Watch(ctx context.Context, interval time.Duration) {
	filewatch.Every(ctx, interval, s.Poll)
}

// Edit changes the file (see the function Edit) and reads it again, so
// that the change is seen at once.
func (s *Store) Edit(fn func(*Doc) error) error {
	err := Edit(s.path, s.keys, fn)
	s.Reload()
	return err
}
