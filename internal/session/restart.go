package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
)

// Restart moves the live session s, which Load returned for r, to a
// brand-new id holding d, and sets the new cookie on w. It is for a step
// that raises what a session may do without being a new sign-in (the
// password given again): the id changes as at a sign-in, with a new CSRF
// secret, but the session keeps the time it began, so its absolute
// lifetime is not extended. The old id is deleted first: replaying it
// loads nothing. d must name the same user as s.
func (m *Manager) Restart(w http.ResponseWriter, r *http.Request, s *Session, d Data) (*Session, error) {
	if s == nil || d.Username == "" || d.Username != s.Username {
		return nil, errors.New("session: restart: the data must name the session's own user")
	}
	ctx := r.Context()
	if err := m.store.Delete(ctx, s.key); err != nil {
		return nil, fmt.Errorf("session: restart: revoke the previous id: %w", err)
	}
	id := make([]byte, idLen)
	rand.Read(id)
	csrf := make([]byte, csrfSecretLen)
	rand.Read(csrf)
	now := m.now()
	rec := Record{Data: d, Created: s.Created, LastSeen: now, CSRF: csrf, Expires: m.deadline(s.Created, now)}
	rec.Type = m.typ
	key := m.storeKey(id)
	rec.MAC = m.sealRecord(key, &rec)
	if err := m.store.Commit(ctx, key, rec); err != nil {
		return nil, fmt.Errorf("session: restart: %w", err)
	}
	m.SetCookie(w, r, m.cookie, encodeID(id), 0)
	return m.newSession(key, rec), nil
}
