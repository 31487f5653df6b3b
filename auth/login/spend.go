package login

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// maxSpent bounds how many used tokens one process remembers; past it the
// oldest are forgotten first. A pending state lives five minutes and a
// TOTP step two, so this many cover far more sign-ins than one process
// makes in that time.
const maxSpent = 100_000

// localSpent is auth.Shared.SpendOnce for a process without a shared
// store: a token is spent once per process until its ttl ends.
type localSpent struct {
	now func() time.Time

	mu    sync.Mutex
	seen  map[[sha256.Size]byte]time.Time
	queue []spentEntry // in spending order
}

type spentEntry struct {
	key     [sha256.Size]byte
	expires time.Time
}

func newLocalSpent(now func() time.Time) *localSpent {
	return &localSpent{now: now, seen: map[[sha256.Size]byte]time.Time{}}
}

// SpendOnce marks token of kind used for ttl and reports whether it was
// unused until now.
func (s *localSpent) SpendOnce(_ context.Context, kind, token string, ttl time.Duration) (bool, error) {
	key := sha256.Sum256([]byte(kind + "\x00" + token))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 && (!now.Before(s.queue[0].expires) || len(s.queue) >= maxSpent) {
		if exp, ok := s.seen[s.queue[0].key]; ok && exp.Equal(s.queue[0].expires) {
			delete(s.seen, s.queue[0].key)
		}
		s.queue = s.queue[1:]
	}
	if exp, used := s.seen[key]; used && now.Before(exp) {
		return false, nil
	}
	exp := now.Add(ttl)
	s.seen[key] = exp
	s.queue = append(s.queue, spentEntry{key: key, expires: exp})
	return true, nil
}
