package sessionauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/session"
)

// SharedSessions is the ability of the program's shared state
// (auth.Deps.Shared; redisstore.Client) to keep the sessions of every
// instance.
type SharedSessions interface {
	// SessionStore is where the session types keep their sessions.
	SessionStore() session.Store
}

// Sessions are the session manager a session type serves from and the
// store under it, which Close flushes and releases.
type Sessions struct {
	*session.Manager
	store  session.Store
	shared bool // the store is deps.Shared's, which the program closes
}

// OpenSessions returns the sessions of a session type: deps.Shared's store when the
// program shares state with other instances, else a file store under
// deps.StateDir ([server] state_dir); and a manager keyed by deps.SecretKey
// with the given settings (zero values: the defaults).
// Cookies are Secure when the request came over https, directly or as a
// trusted proxy says (peer.Secure).
func OpenSessions(deps auth.Deps, typ string, set Settings) (*Sessions, error) {
	var store session.Store
	switch {
	case deps.Shared != nil:
		ss, ok := deps.Shared.(SharedSessions)
		if !ok {
			return nil, errors.New("the shared state keeps no sessions: the session types need its session store")
		}
		store = ss.SessionStore()
	default:
		if deps.StateDir == "" {
			return nil, errors.New("[server] state_dir is empty; set it to the folder where sessions are kept")
		}
		fs, err := session.OpenFileStore(deps.StateDir, deps.Clock())
		if err != nil {
			return nil, fmt.Errorf("[server] state_dir %s cannot be used: %w; create it for the user backupweb runs as (mode 0700), or set state_dir to a folder it may write", fspath.Show(deps.StateDir), err)
		}
		store = fs
	}
	mgr, err := session.NewManager(session.Options{
		Store:        store,
		Key:          deps.SecretKey,
		PreviousKey:  deps.PreviousSecretKey,
		IdleTimeout:  set.IdleTimeout,
		Renewal:      set.IdleRenewal,
		Lifetime:     set.Lifetime,
		Secure:       peer.Secure,
		Now:          deps.Clock(),
		Logger:       deps.Log(),
		Observer:     deps.Hooks.Sessions,
		Type:         typ,
		MaxPerUser:   set.MaxSessionsPerUser,
		CookieDomain: deps.CookieDomain,
	})
	s := &Sessions{Manager: mgr, store: store, shared: deps.Shared != nil}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sessions: %w", err)
	}
	if !s.shared {
		checkKey(deps, mgr)
	}
	return s, nil
}

// KeyCheckFile is the file in [server] state_dir that holds the secret
// key's fingerprint (session.Manager.KeyCheck, never the key), so that a
// start with another key can say why every user must sign in again.
const KeyCheckFile = "key-check"

// checkKey compares the secret key's fingerprint with the one kept beside
// the stored sessions, logs one warning when they differ (the sessions on
// disk were made under another key and are no longer valid), and records
// the current one. A failure to read or write the file is logged: it costs
// only the warning.
func checkKey(deps auth.Deps, mgr *session.Manager) {
	path := filepath.Join(deps.StateDir, KeyCheckFile)
	want := mgr.KeyCheck()
	old, err := os.ReadFile(path)
	prev, rotating := mgr.PreviousKeyCheck()
	switch {
	case err == nil && strings.TrimSpace(string(old)) == want:
		return
	case err == nil && rotating && strings.TrimSpace(string(old)) == prev:
		// A rotation: the sessions on disk were made under the
		// previous key, which is still accepted. The store is this
		// instance's alone, so they are resealed under the current
		// key now and move to it at their next request.
		n, err := mgr.Reseal(context.Background(), nil)
		if err != nil {
			deps.Log().Warn("auth: resealing the sessions kept in state_dir under the new secret key failed; they stay under BACKUP_SECRET_KEY_PREVIOUS", "state_dir", deps.StateDir, "err", err)
			return
		}
		deps.Log().Info("auth: the secret key was rotated; the sessions kept in state_dir are resealed under the new one", "state_dir", deps.StateDir, "resealed", n.Resealed, "current", n.Current, "refused", n.Refused)
	case err == nil:
		deps.Log().Warn("auth: the sessions kept in state_dir were made under another BACKUP_SECRET_KEY; they are no longer valid and every user must sign in again. Make the key once and keep it (see `backupweb gen-secret`)", "state_dir", deps.StateDir)
	case !errors.Is(err, fs.ErrNotExist):
		deps.Log().Warn("auth: cannot read the secret key's fingerprint", "file", path, "err", err)
	}
	if err := os.WriteFile(path, []byte(want+"\n"), 0o600); err != nil {
		deps.Log().Warn("auth: cannot record the secret key's fingerprint", "file", path, "err", err)
	}
}

// Count returns how many sessions the store holds (expired ones not yet
// swept included), when the store can tell cheaply; ok is false otherwise.
func (s *Sessions) Count() (n int, ok bool) {
	if l, ok := s.store.(interface{ Len() int }); ok {
		return l.Len(), true
	}
	return 0, false
}

// RedirectHosts returns the hosts a login's next may name: deps.RedirectHosts,
// and only when a cookie domain shares the sign-in with
// them (otherwise a login on one host could not serve another).
func RedirectHosts(deps auth.Deps) []string {
	if deps.CookieDomain == "" {
		return nil
	}
	return deps.RedirectHosts
}

// Ready reports whether the session store answers (see session.Pinger).
func (s *Sessions) Ready(ctx context.Context) error {
	if p, ok := s.store.(session.Pinger); ok {
		if err := p.Ping(ctx); err != nil {
			return &auth.NotReady{Part: "the session store does not answer", Err: err}
		}
	}
	return nil
}

// Close writes the store's pending changes and releases it; a shared
// store is left to the program, which closes it once every user is done.
func (s *Sessions) Close() error {
	if c, ok := s.store.(io.Closer); ok && !s.shared {
		return c.Close()
	}
	return nil
}
