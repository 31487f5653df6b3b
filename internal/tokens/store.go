package tokens

import (
	"context"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/filewatch"
)

// Status is what a lookup found.
type Status int

const (
	// Unknown: no token has this hash (a wrong, revoked or made-up one).
	Unknown Status = iota
	// Valid: the token exists and has not expired.
	Valid
	// Expired: the token exists but its lifetime is over.
	Expired
	// Broken: the tokens file does not parse; every token is refused.
	Broken
)

// usageEvery is how often, at most, the last-used times are written to
// the file: a token in use changes the file once a minute, not on every
// request.
const usageEvery = time.Minute

// maxAddrs bounds the client addresses remembered per token (to log the
// first use from a new one); past it the oldest is forgotten.
const maxAddrs = 32

// reading is one reading of the file, never modified once published.
type reading struct {
	byHash map[Hash]*Token
	broken bool
}

// Store is the tokens file as the service uses it: the last reading, read
// again when the file changes (its stat is polled) and on Reload, changes
// made through Edit, and the last-used times written coarsely. It is safe
// for concurrent use.
type Store struct {
	path string
	log  *slog.Logger
	now  func() time.Time

	cur atomic.Pointer[reading]

	mu   sync.Mutex // serialises reloads; guards last
	last filewatch.Stamp

	useMu   sync.Mutex // guards used, addrs, flushed
	used    map[string]time.Time
	addrs   map[string][]string
	flushed time.Time
}

// Open reads the tokens file at path and returns its Store. A file that
// cannot be read or parsed is logged and refuses every token until it is
// fixed; it is not an error. log may be nil (slog.Default); now may be nil
// (time.Now).
func Open(path string, log *slog.Logger, now func() time.Time) *Store {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	s := &Store{path: path, log: log, now: now, used: map[string]time.Time{}, addrs: map[string][]string{}}
	s.Reload()
	return s
}

// Path returns the tokens file's path.
func (s *Store) Path() string { return s.path }

// Lookup finds token by its hash. A malformed value is Unknown without a
// lookup.
func (s *Store) Lookup(token string) (*Token, Status) {
	rd := s.cur.Load()
	if rd.broken {
		return nil, Broken
	}
	if !Wellformed(token) {
		return nil, Unknown
	}
	t, ok := rd.byHash[HashOf(token)]
	switch {
	case !ok:
		return nil, Unknown
	case t.Expired(s.now()):
		return t, Expired
	}
	return t, Valid
}

// Still reports whether the token with t's id is still in the file and
// unexpired: a check for a long-lived connection made with it.
func (s *Store) Still(t *Token) bool {
	rd := s.cur.Load()
	h, err := hex.DecodeString(t.Hash)
	if rd.broken || err != nil || len(h) != len(Hash{}) {
		return false
	}
	got, ok := rd.byHash[Hash(h)]
	return ok && got.ID == t.ID && !got.Expired(s.now())
}

// Of returns the tokens of user, oldest first, with the last-used times
// not yet written.
func (s *Store) Of(user string) []Token {
	rd := s.cur.Load()
	var list []Token
	for _, t := range rd.byHash {
		if t.User == user {
			c := *t
			list = append(list, c)
		}
	}
	s.useMu.Lock()
	for i := range list {
		if u, ok := s.used[list[i].ID]; ok && u.After(list[i].LastUsed) {
			list[i].LastUsed = u
		}
	}
	s.useMu.Unlock()
	sortByCreated(list)
	return list
}

// Reload reads the file again. A problem is logged and returned.
func (s *Store) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reloadLocked()
}

func (s *Store) reloadLocked() error {
	st, _ := filewatch.Stat(s.path) // a missing file is the zero stamp
	list, err := Read(s.path)
	s.last = st
	if err != nil {
		s.cur.Store(&reading{broken: true})
		s.log.Error("tokens: the tokens file cannot be used; every token is refused until it is fixed", "file", s.path, "err", err)
		return err
	}
	rd := &reading{byHash: make(map[Hash]*Token, len(list))}
	for _, t := range list {
		h, _ := hex.DecodeString(t.Hash) // checked by Parse
		rd.byHash[Hash(h)] = t
	}
	s.cur.Store(rd)
	return nil
}

// Poll reads the file again when its stat changed since the last reading,
// and writes the last-used times when they are due.
func (s *Store) Poll() {
	st, _ := filewatch.Stat(s.path)
	s.mu.Lock()
	if !st.Same(s.last) || st.Racy() {
		s.reloadLocked()
	}
	s.mu.Unlock()
	s.flush(false)
}

// Watch polls the file every interval until ctx ends (none when interval
// is not positive), then writes the last-used times not yet written.
func (s *Store) Watch(ctx context.Context, interval time.Duration) {
	filewatch.Every(ctx, interval, s.Poll)
	s.Flush()
}

// Flush writes the last-used times not yet written, now (at shutdown).
func (s *Store) Flush() { s.flush(true) }

// Edit changes the file (see the function Edit) and reads it again, so
// that the change is seen at once.
func (s *Store) Edit(fn func(*Doc) error) error {
	err := Edit(s.path, fn)
	s.Reload()
	return err
}

// Used records a use of t from the client address addr. It reports
// whether addr is new for t in this process (the first use from it),
// which the caller logs. The time reaches the file at the next flush.
func (s *Store) Used(t *Token, addr string) (newAddr bool) {
	now := s.now()
	s.useMu.Lock()
	defer s.useMu.Unlock()
	if prev, ok := s.used[t.ID]; !ok || now.Sub(prev) >= time.Second {
		s.used[t.ID] = now
	}
	seen := s.addrs[t.ID]
	for _, a := range seen {
		if a == addr {
			return false
		}
	}
	if len(seen) >= maxAddrs {
		seen = seen[1:]
	}
	s.addrs[t.ID] = append(seen, addr)
	return true
}

// flush writes the pending last-used times when the last write is a
// minute old (or at once with force). A failure is logged; the times are
// kept for the next try.
func (s *Store) flush(force bool) {
	s.useMu.Lock()
	if len(s.used) == 0 || !force && s.now().Sub(s.flushed) < usageEvery {
		s.useMu.Unlock()
		return
	}
	pending := s.used
	s.used, s.flushed = map[string]time.Time{}, s.now()
	s.useMu.Unlock()
	if s.cur.Load().broken {
		return // a broken file is never rewritten
	}
	err := s.Edit(func(d *Doc) error {
		for _, t := range d.List {
			if u, ok := pending[t.ID]; ok && u.After(t.LastUsed) {
				t.LastUsed = u.UTC().Truncate(time.Second)
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("tokens: writing the last-used times failed", "file", s.path, "err", err)
		s.useMu.Lock()
		for id, u := range pending {
			if cur, ok := s.used[id]; !ok || u.After(cur) {
				s.used[id] = u
			}
		}
		s.useMu.Unlock()
	}
}

// ErrNoToken is returned when a revocation names no token of the user.
var ErrNoToken = errors.New("tokens: no such token")
