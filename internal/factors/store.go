package factors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Keys returns the keys the store decrypts and hashes with.
func (s *Store) Keys() *Keys { return s.keys }

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

// ErrNoSuchCredential is returned by UpdateCredential for an id no user
// holds.
var ErrNoSuchCredential = errors.New("factors: no passkey has this credential id")

// UpdateCredential replaces the stored credential JSON of the passkey with
// credential id id (after a use, to record its new sign count).
func (s *Store) UpdateCredential(id []byte, credential json.RawMessage) error {
	if !json.Valid(credential) {
		return errors.New("factors: the credential is not valid JSON")
	}
	return s.Edit(func(d *Doc) error {
		user, i, ok := d.FindCredential(id)
		if !ok {
			return ErrNoSuchCredential
		}
		rec, err := d.Get(user)
		if err != nil {
			return err
		}
		rec.Passkeys[i].Credential = bytes.Clone(credential)
		return d.Put(rec)
	})
}

// UseRecovery spends one of user's recovery codes: it reports whether code
// was one of them and, when it was, removes it from the file under its
// lock, so that of two uses of one code at the same time exactly one
// succeeds.
func (s *Store) UseRecovery(user, code string) (bool, error) {
	used := false
	err := s.Edit(func(d *Doc) error {
		rec, err := d.Get(user)
		if err != nil {
			return err
		}
		if rec == nil {
			return errUnchanged
		}
		i := s.keys.MatchRecovery(user, code, rec.Recovery)
		if i < 0 {
			return errUnchanged
		}
		rec.Recovery = append(rec.Recovery[:i], rec.Recovery[i+1:]...)
		used = true
		return d.Put(rec)
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	if err != nil {
		return false, fmt.Errorf("factors: spending a recovery code of %s: %w", user, err)
	}
	return used, nil
}

// errUnchanged ends an edit that has nothing to write.
var errUnchanged = errors.New("nothing to change")

// TOTPSecret returns user's TOTP secret (base32), decrypted, or "" when
// they have none. A record that is Broken is an error.
func (s *Store) TOTPSecret(user string) (string, error) {
	rec, st := s.Lookup(user)
	if st == Broken {
		return "", fmt.Errorf("factors: the record of %s in %s cannot be used", user, s.path)
	}
	if rec == nil || rec.TOTP == nil {
		return "", nil
	}
	return s.keys.OpenTOTP(user, rec.TOTP.Sealed)
}
