package session

import (
	"context"
	"fmt"
	"net/http"
)

// Held names the session a request came with, so that it can be checked
// again later (see Manager.Still) while the request is still being
// answered: a WebSocket or an event stream that must end with its session.
// It holds the store keys (keyed hashes of the id, under the current and
// the previous secret key), never the id.
type Held struct{ key, prev string }

// Hold returns the session named by r's cookie, to check later with
// Still; ok is false when r carries no well-formed session cookie. It does
// not look the session up.
func (m *Manager) Hold(r *http.Request) (h Held, ok bool) {
	key, ok := m.keyFromRequest(r)
	prev, _ := m.prevKeyFromRequest(r)
	return Held{key: key, prev: prev}, ok
}

// Still reports whether the held session is still live: in the store, made
// by the manager's type, and neither idle nor past its lifetime at the
// manager's clock. It returns the session's data for the caller to compare
// (same user, same credential). Unlike Load it records no activity and
// deletes nothing: checking a long-lived request again and again must not
// keep its session alive, nor race with the request that ends it. With a
// store that caches (Redis's client-side cache, invalidated by the server)
// most calls are answered from memory. err reports a store failure.
func (m *Manager) Still(ctx context.Context, h Held) (Data, bool, error) {
	if h.key == "" {
		return Data{}, false, nil
	}
	key := h.key
	rec, found, err := m.store.Find(ctx, key)
	if err == nil && !found && h.prev != "" {
		key = h.prev
		rec, found, err = m.store.Find(ctx, key)
	}
	if err != nil {
		return Data{}, false, fmt.Errorf("session: still: %w", err)
	}
	if !found || !m.recordIntact(key, &rec) || rec.Type != m.typ || m.expired(rec, m.now()) {
		return Data{}, false, nil
	}
	return rec.Data, true, nil
}
