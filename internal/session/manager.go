package session

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Defaults of Options.
const (
	DefaultCookieName     = "backupweb_session"
	DefaultFormCookieName = "backupweb_csrf"
	DefaultIdleTimeout    = 30 * time.Minute
	DefaultLifetime       = 12 * time.Hour
)

// maxTouchInterval bounds how often Load writes activity to the store: at
// most once per minute per session (less for idle timeouts under four
// minutes, see touchInterval).
const maxTouchInterval = time.Minute

// Sizes of the random values, in bytes.
const (
	idLen         = 32 // session id: 256 bits from crypto/rand
	csrfSecretLen = 32 // per-session CSRF secret
)

// Options configure a Manager. Zero fields take the documented defaults;
// Store and Key are required.
type Options struct {
	// Store keeps the session records. Required.
	Store Store
	// Key is the secret key (BACKUP_SECRET_KEY), at least MinKeyLen bytes.
	// It is used as is (hexadecimal text is not decoded) and only as HKDF
	// input: every use gets its own derived key. Changing it without
	// PreviousKey ends every session and invalidates every token and
	// sealed value.
	Key []byte
	// PreviousKey (BACKUP_SECRET_KEY_PREVIOUS), when set, is the key in
	// force before a rotation, at least MinKeyLen bytes and not Key: what
	// was made under it (sessions, CSRF tokens, form cookies, sealed
	// values, credential fingerprints) is still accepted, and nothing new
	// is made under it. A stored session keeps the key that made it
	// until Reseal puts it under Key (see Load). Default: none.
	PreviousKey []byte
	// CookieName names the session cookie. Default "backupweb_session".
	CookieName string
	// FormCookieName names the pre-session CSRF cookie of the login form.
	// Default "backupweb_csrf".
	FormCookieName string
	// IdleTimeout ends a session unused for that long. Default 30 minutes.
	// Precision: activity is recorded at most once per minute, so a session
	// may end up to one minute before IdleTimeout has passed since its last
	// request (never after).
	IdleTimeout time.Duration
	// Renewal says which requests count as activity that renews the idle
	// deadline. Default RenewNavigation: top-level navigations only, so
	// a page's background polling does not keep its session alive.
	Renewal Renewal
	// Lifetime ends a session that long after it began, whatever its
	// activity. Default 12 hours.
	Lifetime time.Duration
	// Secure reports whether r came over https (directly or as told by a
	// trusted proxy); cookies then carry the Secure flag. Default: r.TLS != nil.
	Secure func(r *http.Request) bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// CookieDomain, when set, is the Domain of every cookie set over https
	// (which then carries the __Secure- prefix rather than __Host-, since
	// a __Host- cookie cannot name a domain). Over plain http it is not
	// used.
	CookieDomain string
	// MaxPerUser bounds the live sessions of one user, for stores that
	// implement UserLimiter: Start ends the user's oldest sessions beyond
	// it. Default DefaultMaxPerUser (20); negative: no bound.
	MaxPerUser int
	// Type names the authentication type whose sessions this manager
	// keeps ("flask-login", "oauth"). Start records it in every session and
	// Load refuses a session recorded with another type, or with none, so a
	// session made by one type is never accepted by another that shares the
	// store and the secret key. Default "" (sessions of any type, for
	// callers that keep one kind only).
	Type string
	// Logger receives store failures that do not fail the request (a missed
	// activity refresh, a failed removal of an expired session). Default:
	// discard. Nothing logged ever holds a session id, token or key.
	Logger *slog.Logger
	// Observer is told when sessions start and end. Nil: nobody is.
	Observer Observer
}

// DefaultMaxPerUser is the default of Options.MaxPerUser.
const DefaultMaxPerUser = 20

// Manager creates, loads and revokes sessions, and issues the CSRF tokens and
// sealed values that go with them. It is safe for concurrent use.
//
// It identifies and never refuses: Load reports whether a valid session came
// with the request, and what to do without one (redirect, 401) is the
// caller's decision.
type Manager struct {
	store      Store
	toucher    Toucher        // store as Toucher, nil when it lacks the ability
	gens       Generations    // store as Generations, nil when it lacks the ability
	index      Indexer        // store as Indexer, nil when it lacks the ability
	standing   StandingFinder // store as StandingFinder, nil when it lacks the ability
	shared     sharedFinder   // store when it is a *FileStore or *MemoryStore, else nil
	verified   *verifiedCache // record versions that checked, when shared is nil
	cookie     string
	formCookie string
	idle       time.Duration
	lifetime   time.Duration
	touch      time.Duration
	renewal    Renewal
	obs        Observer // nil: nobody
	secure     func(*http.Request) bool
	now        func() time.Time
	log        *slog.Logger
	typ        string
	maxPerUser int
	domain     string

	*keyset         // the current key's: everything new is made under it
	prev    *keyset // the previous key's, read only; nil without one
}

// Session is a live session as Load or Start return it. Its fields are the
// caller's copy: changing them changes nothing stored. The session id is
// deliberately absent: it only ever travels in the cookie.
type Session struct {
	Data
	Created, LastSeen time.Time

	expires time.Time
	csrf    []byte
	key     string
	ks      *keyset  // the key the stored record verified under
	m       *Manager // the manager that made or loaded it (CSRFToken)
}

// Expires returns when the session ends if no further request comes: the
// earlier of the idle and the absolute deadline.
func (s *Session) Expires() time.Time { return s.expires }

// NewManager checks o and returns a manager. It refuses a missing store, a
// key shorter than MinKeyLen, negative durations and an invalid cookie name.
func NewManager(o Options) (*Manager, error) {
	if o.Store == nil {
		return nil, errors.New("session: no store given")
	}
	if len(o.Key) < MinKeyLen {
		return nil, fmt.Errorf("session: secret key must be at least %d bytes (make one with `backupweb gen-secret`)", MinKeyLen)
	}
	if len(o.PreviousKey) > 0 && len(o.PreviousKey) < MinKeyLen {
		return nil, fmt.Errorf("session: the previous secret key must be at least %d bytes", MinKeyLen)
	}
	if len(o.PreviousKey) > 0 && string(o.PreviousKey) == string(o.Key) {
		return nil, errors.New("session: the previous secret key is the current one")
	}
	if o.IdleTimeout < 0 || o.Lifetime < 0 {
		return nil, errors.New("session: idle timeout and lifetime must not be negative")
	}
	m := &Manager{
		store:      o.Store,
		cookie:     cmp.Or(o.CookieName, DefaultCookieName),
		formCookie: cmp.Or(o.FormCookieName, DefaultFormCookieName),
		idle:       o.IdleTimeout,
		lifetime:   o.Lifetime,
		renewal:    o.Renewal,
		secure:     o.Secure,
		now:        o.Now,
		log:        o.Logger,
		typ:        o.Type,
		maxPerUser: cmp.Or(o.MaxPerUser, DefaultMaxPerUser),
		obs:        o.Observer,
		domain:     o.CookieDomain,
	}
	m.toucher, _ = o.Store.(Toucher)
	m.gens, _ = o.Store.(Generations)
	m.index, _ = o.Store.(Indexer)
	m.standing, _ = o.Store.(StandingFinder)
	// Only the package's own stores themselves: a type that embeds one
	// and overrides Find must have its Find called.
	switch s := o.Store.(type) {
	case *FileStore:
		m.shared = s
	case *MemoryStore:
		m.shared = s
	default:
		m.verified = new(verifiedCache)
	}
	for _, name := range []string{m.cookie, m.formCookie} {
		if !validCookieName(name) {
			return nil, fmt.Errorf("session: invalid cookie name %q", name)
		}
	}
	if m.cookie == m.formCookie {
		return nil, errors.New("session: the session and form cookies need different names")
	}
	if m.idle == 0 {
		m.idle = DefaultIdleTimeout
	}
	if m.lifetime == 0 {
		m.lifetime = DefaultLifetime
	}
	m.touch = min(maxTouchInterval, m.idle/4)
	if m.secure == nil {
		m.secure = func(r *http.Request) bool { return r.TLS != nil }
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if m.keyset, err = newKeyset(o.Key); err != nil {
		return nil, err
	}
	if len(o.PreviousKey) > 0 {
		if m.prev, err = newKeyset(o.PreviousKey); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// CookieName returns the session cookie's name.
func (m *Manager) CookieName() string { return m.cookie }

// FormCookieName returns the name of the login form's CSRF cookie, which a
// login handler may clear once the session has started.
func (m *Manager) FormCookieName() string { return m.formCookie }

// Load returns the session named by r's cookie. ok=false, with no error,
// when there is no cookie, the cookie is malformed or unknown, or the session
// has expired (idle or absolute); an expired session is also deleted from the
// store. err reports a store failure. Load never writes a response.
//
// Activity is recorded for a request that renews the session under
// Options.Renewal (by default a top-level navigation, see IsNavigation),
// when the stored LastSeen is at least one touch interval old (one minute,
// or a quarter of IdleTimeout if that is shorter), so most requests cost
// one HMAC and one store lookup and write nothing. Other requests are
// admitted without moving the idle deadline. A failed refresh is logged
// and does not fail the request.
func (m *Manager) Load(r *http.Request) (*Session, bool, error) {
	key, ok := m.keyFromRequest(r)
	if !ok {
		return nil, false, nil
	}
	ctx := r.Context()
	rec, found, checked, st, err := m.find(ctx, key)
	prevKey := ""
	if err == nil && !found && m.prev != nil {
		// Made under the previous key: kept under the store key it
		// gave. Not there either: another request may just have moved
		// it to the current key's (moveToCurrent), so look there again.
		prevKey, _ = m.prevKeyFromRequest(r)
		if rec, found, checked, st, err = m.find(ctx, prevKey); err == nil && found {
			key, checked = prevKey, false
		} else if err == nil {
			rec, found, checked, st, err = m.find(ctx, key)
			prevKey = ""
		}
	}
	if st.User != rec.Username {
		st = Standing{}
	}
	if err != nil {
		return nil, false, fmt.Errorf("session: load: %w", err)
	}
	if !found {
		return nil, false, nil
	}
	ks := m.keyset
	if !checked || m.prev != nil {
		// With a previous key the record's own key is not cached: each
		// read says which of the two it verifies under.
		if ks = m.intact(ctx, key, &rec); ks == nil {
			return nil, false, nil
		}
		if m.shared != nil {
			m.shared.markIntact(key, rec.MAC)
		}
	}
	if rec.Type != m.typ {
		// Made by another authentication type (or before sessions
		// recorded their type): not ours to accept. Left in the store,
		// which may be shared, until it expires.
		return nil, false, nil
	}
	if m.gens != nil {
		// The user's sessions were ended since this one was made:
		// refused, whether or not the ending found it.
		g := st.Gen
		if st.User == "" {
			if g, err = m.gens.UserGeneration(ctx, rec.Username); err != nil {
				return nil, false, fmt.Errorf("session: load: %w", err)
			}
		}
		if rec.Gen < g {
			if err := m.store.Delete(ctx, key); err != nil {
				m.log.Warn("session: removing an ended session failed", "err", err)
			} else {
				m.ended(ctx, "revoked", 1)
			}
			return nil, false, nil
		}
	}
	if m.index != nil {
		// Taken out of its user's index by hand (or the index was
		// lost): refused, so that it does not outlive the count of
		// max_sessions_per_user unseen.
		indexed := st.Indexed
		if st.User == "" {
			if indexed, err = m.index.Indexed(ctx, key, rec.Username); err != nil {
				return nil, false, fmt.Errorf("session: load: %w", err)
			}
		}
		if !indexed {
			m.log.Warn("session: a session its user's index does not name is refused (the index was changed by hand, or lost)", "user", rec.Username)
			if err := m.store.Delete(ctx, key); err != nil {
				m.log.Warn("session: removing a session outside its user's index failed", "err", err)
			} else {
				m.ended(ctx, "revoked", 1)
			}
			return nil, false, nil
		}
	}
	now := m.now()
	if m.expired(rec, now) {
		if err := m.store.Delete(ctx, key); err != nil {
			m.log.Warn("session: removing an expired session failed", "err", err)
		} else {
			m.ended(ctx, "expired", 1)
		}
		return nil, false, nil
	}
	if key == prevKey && ks == m.keyset {
		// Under the previous key's store key but already sealed under
		// the current key (Reseal): every instance reading it holds
		// both keys now, so it moves to the current key's store key.
		key = m.moveToCurrent(ctx, r, prevKey, &rec)
	}
	if now.Sub(rec.LastSeen) >= m.touch && m.renewal.Renews(r) {
		rec.LastSeen = now
		rec.Expires = m.deadline(rec.Created, now)
		// A record keeps the key it verified under until Reseal: an
		// instance that holds only that key must keep reading it.
		rec.MAC = ks.sealRecord(key, &rec)
		if m.toucher != nil {
			err = m.toucher.Touch(ctx, key, rec.LastSeen, rec.Expires, rec.MAC)
		} else {
			err = m.store.Commit(ctx, key, rec)
		}
		if err != nil {
			m.log.Warn("session: recording activity failed", "err", err)
		}
	}
	s := m.newSession(key, rec)
	s.ks = ks
	return s, true, nil
}

// find looks key up, through the shared path of the package's own stores
// (checked: the record's MAC is known to hold) or the store's Find.
func (m *Manager) find(ctx context.Context, key string) (rec Record, found, checked bool, st Standing, err error) {
	if m.shared != nil {
		// The package's own stores: no copy of the record's bytes,
		// which Load only reads, and the MAC of a record held in
		// memory is checked once, not at every request.
		rec, found, checked, err = m.shared.findShared(key)
		return rec, found, checked, st, err
	}
	if m.standing != nil && m.gens != nil && m.index != nil {
		rec, found, st, err = m.standing.FindStanding(ctx, key)
		return rec, found, false, st, err
	}
	rec, found, err = m.store.Find(ctx, key)
	return rec, found, false, st, err
}

// moveToCurrent moves rec, found under the previous key's store key
// prevKey and sealed under the current key, to the current key's store key
// for r's session id, and returns the key it is under afterwards. It
// writes the new record before deleting the old, so a request reading
// meanwhile finds one of the two (Load looks at the current key's again
// after missing both). A failure leaves it where it was, logged.
func (m *Manager) moveToCurrent(ctx context.Context, r *http.Request, prevKey string, rec *Record) string {
	key, ok := m.keyFromRequest(r)
	if !ok {
		return prevKey
	}
	moved := *rec
	moved.MAC = m.sealRecord(key, &moved)
	if err := m.store.Commit(ctx, key, moved); err != nil {
		m.log.Warn("session: moving a session to the current secret key failed", "err", err)
		return prevKey
	}
	if err := m.store.Delete(ctx, prevKey); err != nil {
		m.log.Warn("session: removing a session moved to the current secret key failed", "err", err)
	}
	*rec = moved
	return key
}

// Start begins a session for d with a brand-new id, sets the session cookie
// on w and returns the session. Any session named by r's cookie is deleted
// first, so the id always changes at login (no session fixation). d is
// copied. The cookie has no Max-Age: it lasts until the browser closes, and
// the server ends the session earlier when it idles or reaches Lifetime.
func (m *Manager) Start(w http.ResponseWriter, r *http.Request, d Data) (*Session, error) {
	if d.Username == "" {
		return nil, errors.New("session: start: empty user name")
	}
	ctx := r.Context()
	for _, key := range m.keysFromRequest(r) {
		if err := m.store.Delete(ctx, key); err != nil {
			return nil, fmt.Errorf("session: start: revoke previous session: %w", err)
		}
	}
	id := make([]byte, idLen)
	rand.Read(id)
	csrf := make([]byte, csrfSecretLen)
	rand.Read(csrf)
	now := m.now()
	rec := Record{Data: d, Created: now, LastSeen: now, CSRF: csrf, Expires: m.deadline(now, now)}
	rec.Type = m.typ
	if m.gens != nil {
		// A revocation of the user between this read and the commit
		// below leaves a session of an older generation: refused.
		g, err := m.gens.UserGeneration(ctx, d.Username)
		if err != nil {
			return nil, fmt.Errorf("session: start: %w", err)
		}
		rec.Gen = g
	}
	key := m.storeKey(id)
	rec.MAC = m.sealRecord(key, &rec)
	if err := m.store.Commit(ctx, key, rec); err != nil {
		return nil, fmt.Errorf("session: start: %w", err)
	}
	if ul, ok := m.store.(UserLimiter); ok && m.maxPerUser > 0 {
		if n, err := ul.LimitUser(ctx, d.Username, m.maxPerUser); err != nil {
			m.log.Warn("session: ending a user's oldest sessions failed", "err", err)
		} else if n > 0 {
			m.log.Info("session: ended a user's oldest sessions beyond the limit", "user", d.Username, "ended", n, "max_per_user", m.maxPerUser)
			m.ended(ctx, "limit", n)
		}
	}
	if m.obs != nil {
		m.obs.SessionStarted(m.typ)
	}
	m.SetCookie(w, r, m.cookie, encodeID(id), 0)
	return m.newSession(key, rec), nil
}

// Destroy revokes the session named by r's cookie, if any, and clears the
// cookie. After it returns without error, replaying the old cookie loads
// nothing. The cookie is cleared even when the store fails.
func (m *Manager) Destroy(w http.ResponseWriter, r *http.Request) error {
	m.ClearCookie(w, r, m.cookie)
	keys := m.keysFromRequest(r)
	if len(keys) == 0 {
		return nil
	}
	for _, key := range keys {
		if err := m.store.Delete(r.Context(), key); err != nil {
			return fmt.Errorf("session: destroy: %w", err)
		}
	}
	m.ended(r.Context(), "logout", 1)
	return nil
}

// Revoke ends the session s, which Load returned, without touching the
// cookie: for a request whose session is no longer good enough (its user's
// password changed) and that Identify refuses without writing a response.
func (m *Manager) Revoke(ctx context.Context, s *Session) error {
	if err := m.store.Delete(ctx, s.key); err != nil {
		return fmt.Errorf("session: revoke: %w", err)
	}
	m.ended(ctx, "revoked", 1)
	return nil
}

// Fingerprint returns a keyed fingerprint of a credential (a user's stored
// password hash): HMAC-SHA256 under a key derived from the secret key, in
// base64url. Kept in a session as Data.Cred, it binds the session to the
// credential it was made with without storing the credential; comparing it
// with the fingerprint of the user's current credential tells whether the
// password changed since, across restarts. Compare with
// subtle.ConstantTimeCompare.
func (m *Manager) Fingerprint(credential string) string {
	return base64.RawURLEncoding.EncodeToString(m.credMAC.sum(nil, "cred\x00", []byte(credential)))
}

// KeyCheck returns a keyed fingerprint of the secret key itself, safe to
// keep beside the stored sessions: a later start with another key sees a
// different value and can say that the stored sessions are no longer
// valid. It reveals nothing of the key.
func (m *Manager) KeyCheck() string {
	return m.keyset.keyCheck()
}

// PreviousKeyCheck is KeyCheck of the previous key; ok is false without
// one. Stored sessions made under it are still valid.
func (m *Manager) PreviousKeyCheck() (string, bool) {
	if m.prev == nil {
		return "", false
	}
	return m.prev.keyCheck(), true
}

func (ks *keyset) keyCheck() string {
	return base64.RawURLEncoding.EncodeToString(ks.credMAC.sum(nil, "key-check\x00", nil))
}

// PreviousFingerprint is Fingerprint under the previous key; ok is false
// without one. A session made before the rotation carries it, and stays
// good while the credential is unchanged.
func (m *Manager) PreviousFingerprint(credential string) (string, bool) {
	if m.prev == nil {
		return "", false
	}
	return base64.RawURLEncoding.EncodeToString(m.prev.credMAC.sum(nil, "cred\x00", []byte(credential))), true
}

// DeleteUser ends every session of username, for stores that implement
// UserDeleter; with others it returns an error wrapping errors.ErrUnsupported.
func (m *Manager) DeleteUser(ctx context.Context, username string) error {
	ud, ok := m.store.(UserDeleter)
	if !ok {
		return fmt.Errorf("session: delete user: the store cannot find sessions by user: %w", errors.ErrUnsupported)
	}
	n, err := ud.DeleteUser(ctx, username)
	if err != nil {
		return fmt.Errorf("session: delete user: %w", err)
	}
	m.ended(ctx, "user removed", n)
	return nil
}

// expired reports whether rec has ended at now under the manager's current
// settings or under the Expires it was stored with, whichever is earlier.
func (m *Manager) expired(rec Record, now time.Time) bool {
	return rec.expiredAt(now) || !now.Before(m.deadline(rec.Created, rec.LastSeen))
}

// deadline is when a session created at created and last seen at lastSeen
// ends: the earlier of the idle and the absolute deadline.
func (m *Manager) deadline(created, lastSeen time.Time) time.Time {
	idle := lastSeen.Add(m.idle)
	abs := created.Add(m.lifetime)
	if idle.Before(abs) {
		return idle
	}
	return abs
}

// newSession builds the caller's view of rec, which the caller owns.
func (m *Manager) newSession(key string, rec Record) *Session {
	return &Session{Data: rec.Data, Created: rec.Created, LastSeen: rec.LastSeen, expires: rec.Expires, csrf: rec.CSRF, key: key, m: m}
}

// intact returns the keyset under which rec, found under key, carries its
// MAC: the current key's, or the previous key's. A record that carries
// neither is refused (nil: no session, never a grant), deleted so that it
// is logged once rather than at every request, and logged at warning
// level without its key.
func (m *Manager) intact(ctx context.Context, key string, rec *Record) *keyset {
	if ks := m.verifyRecord(key, rec); ks != nil {
		return ks
	}
	reason := "its MAC does not match (changed, copied from another key, or made with a secret key this instance does not hold)"
	if len(rec.MAC) == 0 {
		reason = "it carries no MAC (written by hand, or before stored sessions were authenticated)"
	}
	m.log.Warn("session: refused a stored session record that fails its check", "store", fmt.Sprintf("%T", m.store), "user", rec.Username, "reason", reason)
	if err := m.store.Delete(ctx, key); err != nil {
		m.log.Warn("session: removing a refused session record failed", "err", err)
	}
	return nil
}
