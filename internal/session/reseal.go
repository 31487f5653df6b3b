package session

import (
	"bytes"
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
// rotation that lets the previous key go. credential, when not nil,
// returns a user's stored credential (what Fingerprint was given at the
// sign-in): a record whose Data.Cred is that credential's fingerprint
// under the previous key gets the current key's, so that the session
// still matches its credential once the previous key is dropped. A record
// of a user credential does not know, or whose credential changed, keeps
// its Cred and is refused as before. A record cannot move to the
// current key's store key here (that needs the session id, which only the
// browser holds); Load moves each one at its next request, and a record
// not read again expires within the idle timeout. It needs a store that
// lists (Lister) and writes a MAC with Touch when the store has it, so
// that a session ended meanwhile is not brought back. Idempotent.
func (m *Manager) Reseal(ctx context.Context, credential func(user string) (string, bool)) (ResealCount, error) {
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
		ks := m.verifyRecord(key, &rec)
		if ks == nil {
			c.Refused++
			continue
		}
		recred := m.recred(&rec, credential)
		if ks == m.keyset && !recred {
			c.Current++
			continue
		}
		if err := m.rewrite(ctx, key, rec, recred); err != nil {
			return c, fmt.Errorf("session: reseal: %w", err)
		}
		c.Resealed++
	}
	return c, nil
}

// recred puts rec's credential fingerprint under the current key when it
// is the previous key's fingerprint of the user's credential, and reports
// whether it did.
func (m *Manager) recred(rec *Record, credential func(string) (string, bool)) bool {
	if credential == nil || rec.Cred == "" {
		return false
	}
	cred, ok := credential(rec.Username)
	if !ok {
		return false
	}
	if prev, ok := m.PreviousFingerprint(cred); !ok || prev != rec.Cred {
		return false
	}
	rec.Cred = m.Fingerprint(cred)
	return true
}

// rewrite stores rec under key with the current key's MAC. Only the MAC
// changed: Touch, which cannot bring back a session ended meanwhile.
// Data.Cred changed too: Commit, once the record is found unchanged, so
// that a session ended meanwhile is brought back only if it ends in the
// instant between the two.
func (m *Manager) rewrite(ctx context.Context, key string, rec Record, recred bool) error {
	old := rec.MAC
	rec.MAC = m.sealRecord(key, &rec)
	if !recred && m.toucher != nil {
		return m.toucher.Touch(ctx, key, rec.LastSeen, rec.Expires, rec.MAC)
	}
	now, found, err := m.store.Find(ctx, key)
	if err != nil || !found || !bytes.Equal(now.MAC, old) {
		return err // ended or changed meanwhile: left to the next run
	}
	return m.store.Commit(ctx, key, rec)
}
