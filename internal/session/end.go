package session

import (
	"context"
	"fmt"
)

// EndMatching ends every session of the manager's type whose data match
// accepts, and returns how many ended: for an identity provider that
// ends the sessions it made (OpenID Connect back-channel logout names a
// provider session or an account, never a cookie). Only records that
// carry a good MAC are given to match, so that what match reads is what
// a sign-in wrote. It needs a store that lists every record (Lister);
// deleting in a shared store ends the session on every instance, as a
// logout does. An error leaves the sessions not yet reached as they are:
// the caller must not report success.
func (m *Manager) EndMatching(ctx context.Context, match func(Data) bool) (int, error) {
	l, ok := m.store.(Lister)
	if !ok {
		return 0, fmt.Errorf("session: end matching sessions: %w", ErrCannotList)
	}
	recs, err := l.AllSessions(ctx)
	if err != nil {
		return 0, fmt.Errorf("session: end matching sessions: %w", err)
	}
	n := 0
	for key, rec := range recs {
		if rec.Type != m.typ || m.verifyRecord(key, &rec) == nil || !match(rec.Data) {
			continue
		}
		if err := m.store.Delete(ctx, key); err != nil {
			m.ended(ctx, "logout", n)
			return n, fmt.Errorf("session: end matching sessions: %w", err)
		}
		n++
	}
	m.ended(ctx, "logout", n)
	return n, nil
}
