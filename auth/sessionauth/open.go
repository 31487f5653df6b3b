package sessionauth

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/backupweb/backupweb/auth"
	"github.com/backupweb/backupweb/peer"
	"github.com/backupweb/backupweb/session"
)

// Sessions are the session manager a session type serves from and the
// store under it, which Close flushes and releases.
type Sessions struct {
	*session.Manager
	store session.Store
}

// Open returns the sessions of a session type: a file store under
// env.StateDir ([server] state_dir) — or, with env.CheckOnly, a store in
// memory, so that validating a configuration creates no file — and a
// manager keyed by env.SecretKey with the given idle timeout and lifetime.
// Cookies are Secure when the request came over https, directly or as a
// trusted proxy says (peer.Secure).
func Open(env auth.Env, idle, lifetime time.Duration) (*Sessions, error) {
	var store session.Store
	if env.CheckOnly {
		store = session.NewMemoryStore(env.Clock())
	} else {
		if env.StateDir == "" {
			return nil, errors.New("sessionauth: no state directory for sessions ([server] state_dir)")
		}
		fs, err := session.OpenFileStore(env.StateDir, env.Clock())
		if err != nil {
			return nil, fmt.Errorf("sessionauth: %w", err)
		}
		store = fs
	}
	mgr, err := session.NewManager(session.Options{
		Store:       store,
		Key:         env.SecretKey,
		IdleTimeout: idle,
		Lifetime:    lifetime,
		Secure:      peer.Secure,
		Now:         env.Clock(),
		Logger:      env.Log(),
	})
	s := &Sessions{Manager: mgr, store: store}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sessionauth: %w", err)
	}
	return s, nil
}

// Close writes the store's pending changes and releases it.
func (s *Sessions) Close() error {
	if c, ok := s.store.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
