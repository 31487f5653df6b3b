package session

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// UserLister is implemented by stores that can list the live sessions of
// one user: their records by store key. The account page and `backupweb
// session list` read it; a store without it cannot show sessions.
type UserLister interface {
	UserSessions(ctx context.Context, username string) (map[string]Record, error)
}

// IDLen is the length of a session's listed id: the start of its store
// key (itself a keyed hash of the session id), enough to name one session
// among a user's, and neither the cookie's secret nor enough to rebuild
// it or the key.
const IDLen = 12

// Info is one session as a user or an administrator sees it.
type Info struct {
	// ID names the session in lists and revocations (IDLen characters).
	ID       string
	Username string
	Type     string
	Created  time.Time
	LastSeen time.Time
	// Client is the client address and Agent the browser (its
	// User-Agent, shortened) of the sign-in, as recorded then.
	Client, Agent string
	// Current marks the session of the request that asked.
	Current bool
}

// ErrCannotList is returned when the store cannot list sessions.
var ErrCannotList = errors.New("session: the store cannot list sessions")

// Sessions returns the live sessions of username, newest first; the one r
// carries is marked Current (r may be nil). Records that fail their MAC,
// and those of a generation the user's sessions were ended past, are left
// out.
func (m *Manager) Sessions(ctx context.Context, username string, r *http.Request) ([]Info, error) {
	l, ok := m.store.(UserLister)
	if !ok {
		return nil, ErrCannotList
	}
	recs, err := l.UserSessions(ctx, username)
	if err != nil {
		return nil, err
	}
	var current []string
	if r != nil {
		current = m.keysFromRequest(r)
	}
	var gen uint64
	if m.gens != nil {
		if gen, err = m.gens.UserGeneration(ctx, username); err != nil {
			return nil, err
		}
	}
	now := m.now()
	list := make([]Info, 0, len(recs))
	for key, rec := range recs {
		if rec.Username != username || rec.Gen < gen || m.expired(rec, now) || !m.recordIntact(key, &rec) {
			continue
		}
		list = append(list, Info{ID: key[:min(IDLen, len(key))], Username: rec.Username, Type: rec.Type,
			Created: rec.Created, LastSeen: rec.LastSeen, Client: rec.Client, Agent: rec.Agent, Current: slices.Contains(current, key)})
	}
	slices.SortFunc(list, func(a, b Info) int { return b.Created.Compare(a.Created) })
	return list, nil
}

// EndSessions ends the sessions of username whose listed id is in ids
// (all but the request's own with others), and returns how many ended.
// An id that names no session of username ends nothing.
func (m *Manager) EndSessions(ctx context.Context, username string, r *http.Request, ids []string, others bool) (int, error) {
	l, ok := m.store.(UserLister)
	if !ok {
		return 0, ErrCannotList
	}
	recs, err := l.UserSessions(ctx, username)
	if err != nil {
		return 0, err
	}
	var current []string
	if r != nil {
		current = m.keysFromRequest(r)
	}
	n := 0
	for key, rec := range recs {
		if rec.Username != username {
			continue
		}
		end := others && !slices.Contains(current, key)
		for _, id := range ids {
			if len(id) == IDLen && strings.HasPrefix(key, id) {
				end = true
			}
		}
		if !end {
			continue
		}
		if err := m.store.Delete(ctx, key); err != nil {
			return n, err
		}
		n++
	}
	if n > 0 {
		m.ended(ctx, "revoked", n)
	}
	return n, nil
}

// userSessions returns copies of the live records of username in t.
func (t *table) userSessions(username string, now time.Time) map[string]Record {
	out := map[string]Record{}
	for k, rec := range t.recs {
		if rec.Username == username && !rec.expiredAt(now) {
			out[k] = rec.clone()
		}
	}
	return out
}

// UserSessions returns the live sessions of username (UserLister).
func (s *FileStore) UserSessions(_ context.Context, username string) (map[string]Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	return s.t.userSessions(username, s.now()), nil
}

// UserSessions returns the live sessions of username (UserLister).
func (s *MemoryStore) UserSessions(_ context.Context, username string) (map[string]Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.t.userSessions(username, time.Now()), nil
}

// ReadFileSessions reads the sessions a file store keeps in dir (its file
// and journal) without opening the store or writing anything, so that
// `backupweb session list` can show them while the service runs. Activity
// refreshes not yet written (at most WriteBehindDelay old) are not seen.
func ReadFileSessions(dir string, now time.Time) (map[string]Record, error) {
	st, err := readStateFile(filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	entries, _, err := readJournal(filepath.Join(dir, JournalName), st.seq)
	if err != nil {
		return nil, err
	}
	t := newTable()
	t.recs = st.recs
	for _, e := range entries {
		e.apply(&t)
	}
	out := map[string]Record{}
	for k, rec := range t.recs {
		if !rec.expiredAt(now) {
			out[k] = rec
		}
	}
	return out, nil
}
