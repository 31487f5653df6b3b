package session

import (
	"context"
	"errors"
	"fmt"
)

// ResealCount is what Reseal did with the records of a store.
type ResealCount struct {
	// Resealed were MAC'd under the previous key and now carry the
	// current key's MAC; Current carried it already.
	Resealed, Current int
	// Refused carry neither key's MAC: left as they are (Load refuses
	// and removes them).
	Refused int
}

// Lister is implemented by stores that can list every record they hold,
// for Reseal: the Redis store (AllSessions, a SCAN) and the package's own.
type Lister interface {
	AllSessions(ctx context.Context) (map[string]Record, error)
}

// AllSessions returns every record the store holds (Lister).
func (s *FileStore) AllSessions(context.Context) (map[string]Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	return s.t.snapshot(), nil
}

// AllSessions returns every record the store holds (Lister).
func (s *MemoryStore) AllSessions(context.Context) (map[string]Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.t.snapshot(), nil
}

// Reseal gives every record of the store that carries the previous key's
// MAC the current key's, at the store key it is kept under: the step of a
// rotation that lets the previous key go. A record cannot move to the
// current key's store key here (that needs the session id, which only the
// browser holds); Load moves each one at its next request, and a record
// not read again expires within the idle timeout. It needs a store that
// lists (Lister) and writes a MAC with Touch when the store has it, so
// that a session ended meanwhile is not brought back. Idempotent.
func (m *Manager) Reseal(ctx context.Context) (ResealCount, error) {
	var c ResealCount
	if m.prev == nil {
		return c, errors.New("session: reseal: no previous secret key given")
	}
	l, ok := m.store.(Lister)
	if !ok {
		return c, fmt.Errorf("session: reseal: the store %T cannot list its records", m.store)
	}
	recs, err := l.AllSessions(ctx)
	if err != nil {
		return c, fmt.Errorf("session: reseal: %w", err)
	}
	for key, rec := range recs {
		switch m.verifyRecord(key, &rec) {
		case m.keyset:
			c.Current++
			continue
		case nil:
			c.Refused++
			continue
		}
		rec.MAC = m.sealRecord(key, &rec)
		if m.toucher != nil {
			err = m.toucher.Touch(ctx, key, rec.LastSeen, rec.Expires, rec.MAC)
		} else {
			err = m.store.Commit(ctx, key, rec)
		}
		if err != nil {
			return c, fmt.Errorf("session: reseal: %w", err)
		}
		c.Resealed++
	}
	return c, nil
}
