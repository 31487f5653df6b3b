package session

import (
	"context"
	"sync"
	"time"
)

// MemoryStore keeps sessions in a map inside the process. Everything is lost
// on restart, and several instances cannot share it: it is meant for tests
// and for a single instance that accepts signing everyone out on restart.
// Expired records are invisible to Find at once and are dropped by a sweep
// that runs during commits at most once a minute.
//
// It ignores contexts: every operation completes immediately.
type MemoryStore struct {
	now func() time.Time

	mu sync.RWMutex
	t  table
}

var (
	_ Store       = (*MemoryStore)(nil)
	_ Toucher     = (*MemoryStore)(nil)
	_ UserDeleter = (*MemoryStore)(nil)
	_ Generations = (*MemoryStore)(nil)
)

// UserGeneration returns username's generation (Generations).
func (s *MemoryStore) UserGeneration(_ context.Context, username string) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.t.generation(username), nil
}

// NewMemoryStore returns an empty store that reads the time from now
// (time.Now when nil) to decide expiry.
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, t: newTable()}
}

// Find returns a copy of the live record under key.
func (s *MemoryStore) Find(_ context.Context, key string) (Record, bool, error) {
	now := s.now()
	s.mu.RLock()
	rec, ok := s.t.find(key, now)
	s.mu.RUnlock()
	return rec, ok, nil
}

// findShared is Find without copying the record's byte slices (see
// table.findShared).
func (s *MemoryStore) findShared(key string) (Record, bool, bool, error) {
	now := s.now()
	s.mu.RLock()
	rec, ok, checked := s.t.findShared(key, now)
	s.mu.RUnlock()
	return rec, ok, checked, nil
}

// markIntact records that the manager found the MAC of the record under
// key right (see table.markIntact).
func (s *MemoryStore) markIntact(key string, mac []byte) {
	markIntactLocked(&s.mu, &s.t, key, mac)
}

// Commit stores a copy of rec under key. A record without Expires is refused.
func (s *MemoryStore) Commit(_ context.Context, key string, rec Record) error {
	if rec.Expires.IsZero() {
		return errNoExpiry
	}
	now := s.now()
	s.mu.Lock()
	s.t.sweepIfDue(now)
	s.t.put(key, rec)
	s.mu.Unlock()
	return nil
}

// Touch refreshes LastSeen, Expires and MAC of an existing record.
func (s *MemoryStore) Touch(_ context.Context, key string, lastSeen, expires time.Time, mac []byte) error {
	s.mu.Lock()
	s.t.touch(key, lastSeen, expires, mac)
	s.mu.Unlock()
	return nil
}

// Delete removes key; deleting an unknown key is not an error.
func (s *MemoryStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	s.t.remove(key)
	s.mu.Unlock()
	return nil
}

// DeleteUser moves username's generation forward, removes every session
// of username and returns how many.
func (s *MemoryStore) DeleteUser(_ context.Context, username string) (int, error) {
	s.mu.Lock()
	n := s.t.removeUser(username)
	s.mu.Unlock()
	return n, nil
}

// LimitUser ends the oldest sessions of username beyond keep.
func (s *MemoryStore) LimitUser(_ context.Context, username string, keep int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.t.oldestOfUser(username, keep)
	for _, k := range keys {
		s.t.remove(k)
	}
	return len(keys), nil
}

// Len returns how many records the store holds, expired ones not yet swept
// included. It is meant for tests and metrics.
func (s *MemoryStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.t.recs)
}
