package oauth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxSpent bounds how many used states are remembered. Each entry costs
// about a hundred bytes. Past the bound the oldest are forgotten first;
// the identity provider's own single use of authorization codes still
// refuses those replays.
const maxSpent = 100_000

// spentStates remembers the states of completed or attempted callbacks
// until their sealed cookies have expired, so that replaying a callback
// (cookie and state together) is refused before its code is redeemed.
// It lives in memory: a restart forgets it, which leaves replays to the
// provider's single-use codes for at most FlowTTL.
type spentStates struct {
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	seen  map[[sha256.Size]byte]struct{}
	queue []spentEntry // in spending order, hence in expiry order
}

type spentEntry struct {
	key     [sha256.Size]byte
	expires time.Time
}

func newSpentStates(ttl time.Duration, now func() time.Time) *spentStates {
	return &spentStates{ttl: ttl, now: now, seen: map[[sha256.Size]byte]struct{}{}}
}

// spend marks state used and reports whether it was unused until now.
func (s *spentStates) spend(state string) bool {
	key := sha256.Sum256([]byte(state))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 && (!now.Before(s.queue[0].expires) || len(s.queue) >= maxSpent) {
		delete(s.seen, s.queue[0].key)
		s.queue = s.queue[1:]
	}
	if _, used := s.seen[key]; used {
		return false
	}
	s.seen[key] = struct{}{}
	s.queue = append(s.queue, spentEntry{key: key, expires: now.Add(s.ttl)})
	return true
}

// len returns how many states are remembered.
func (s *spentStates) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}
