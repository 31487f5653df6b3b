package session

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/backupweb/backupweb/internal/attrs"
)

// Data is what a session holds about its user.
type Data struct {
	// Username names the signed-in user. Never empty in a live session.
	Username string `json:"username"`
	// Type is the authentication type that made the session; the manager
	// sets it (see Options.Type) and refuses a session of another type.
	Type string `json:"type,omitempty"`
	// Cred is the keyed fingerprint of the credential the user signed in
	// with (Manager.Fingerprint of their stored password hash), empty for
	// types without one. A type that sets it refuses the session once the
	// user's current credential has another fingerprint.
	Cred string `json:"cred,omitempty"`
	// Attrs holds provider-specific facts such as "email", "name" or
	// "provider". It cannot be changed in place, so the stores, the
	// manager and every handler share it without a copy.
	Attrs attrs.Map `json:"attrs,omitzero"`
	// Client is the client address and Agent the browser (User-Agent,
	// shortened) the session was made from, shown to its user on the
	// account page and by `backupweb session list`. Display only.
	Client string `json:"client,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

// Record is what a Store keeps for one session. It is JSON-serialisable so a
// store may write it anywhere; it holds no session id (the store's key is a
// keyed hash of the id) and nothing a browser could present as a cookie.
type Record struct {
	Data
	// Created is when the session began; the absolute lifetime counts from it.
	Created time.Time `json:"created"`
	// LastSeen is the last recorded activity, refreshed by the manager at
	// most once per touch interval (see Manager.Load).
	LastSeen time.Time `json:"last_seen"`
	// CSRF is the per-session secret from which CSRF tokens are computed. It
	// is useless without the server's derived CSRF key.
	CSRF []byte `json:"csrf"`
	// Expires is when the record may be dropped: the earlier of the idle
	// deadline and the absolute deadline, as computed at the last commit.
	Expires time.Time `json:"expires"`
	// MAC authenticates the record and the store key it is kept under
	// (HMAC-SHA256 under a key derived from the secret key, see
	// recordmac.go). The manager sets it at every write (Commit and Touch)
	// and refuses a record whose MAC does not match; stores keep it as
	// they keep the rest.
	MAC []byte `json:"mac,omitempty"`
	// Gen is the generation of its user (see Generations) the session
	// was made under; the MAC covers it. The manager refuses a record
	// whose Gen is older than its user's generation in the store.
	Gen uint64 `json:"gen,omitempty"`
}

// clone returns a copy of r that shares no slice with it (Attrs cannot
// be changed: it is shared).
func (r Record) clone() Record {
	r.CSRF = bytes.Clone(r.CSRF)
	r.MAC = bytes.Clone(r.MAC)
	return r
}

// expiredAt reports whether the record's Expires has passed at now.
func (r Record) expiredAt(now time.Time) bool {
	return !now.Before(r.Expires)
}

// Store keeps session records under a key. The key is a keyed hash of the
// session id (HMAC-SHA256 under a key derived from the secret key, base64url
// encoded), so a leaked store does not yield usable cookies, and changing the
// secret key orphans every stored session.
//
// Contract for implementations:
//   - Find returns ok=false and no error for an unknown key, and may do the
//     same for a record whose Expires has passed. An error means the store
//     could not answer (network, disk); the manager then reports the error
//     rather than treating the user as signed out.
//   - Commit inserts or replaces; rec.Expires tells when the record may be
//     dropped. Commit and Delete are durable before they return, as far as
//     the store is durable at all: a revoked session must stay revoked after
//     a crash.
//   - Records given to Commit and returned by Find share no maps or slices
//     with what the store keeps: callers may modify what they receive.
//   - All methods are safe for concurrent use.
//
// Optional abilities are separate interfaces found by type assertion:
// Toucher (cheap activity refresh that cannot resurrect a deleted session),
// UserDeleter, and io.Closer for stores that hold resources or buffered
// writes (the program closes the store on shutdown).
type Store interface {
	Find(ctx context.Context, key string) (Record, bool, error)
	Commit(ctx context.Context, key string, rec Record) error
	Delete(ctx context.Context, key string) error
}

// Toucher is implemented by stores that can record activity on an existing
// session without rewriting it: Touch sets LastSeen, Expires and MAC of the
// record under key if, and only if, it still exists (the MAC covers the two
// times, so the three change together). Unlike Commit it never creates
// a record, so a request that loaded a session just before a logout cannot
// bring the session back. Touch may be written behind (not yet durable when
// it returns): losing a few activity refreshes in a crash only makes idle
// expiry a little earlier.
//
// Without Toucher the manager refreshes activity with Commit, which leaves
// that narrow window open; shared stores should implement it (for Redis,
// SET with the XX option).
type Toucher interface {
	Touch(ctx context.Context, key string, lastSeen, expires time.Time, mac []byte) error
}

// Pinger is implemented by stores that can tell whether they answer right
// now (a store over the network may be unreachable); readiness checks ask.
type Pinger interface {
	Ping(ctx context.Context) error
}

// UserLimiter is implemented by stores that can bound the sessions of one
// user: LimitUser ends the oldest sessions of username until at most keep
// remain, and returns how many ended. Like Delete, it is durable on
// return. Oldest is by Created to the millisecond (what Redis's index
// keeps); sessions created in the same millisecond end in the order of
// their store keys, the smaller (bytewise) first: which one a limit ends
// is the same in every store and on every instance.
type UserLimiter interface {
	LimitUser(ctx context.Context, username string, keep int) (int, error)
}

// UserDeleter is implemented by stores that can end every session of one
// user, for example when an account is removed from the user file. It
// returns how many sessions ended. Like Delete, it is durable on return.
//
// A store that also implements Generations moves the user's generation
// forward first, whether or not it finds any session of theirs: every
// session made before is then refused, whatever the store's records or
// index of the user's sessions hold, and the deletion of the records it
// finds is only tidying.
type UserDeleter interface {
	DeleteUser(ctx context.Context, username string) (int, error)
}

// Generations is implemented by stores that keep, with each user, a
// generation: a number that DeleteUser moves forward and nothing moves
// back. A session carries the generation it was made under (Record.Gen)
// and the manager refuses it once its user's generation has moved past
// it, so ending a user's sessions does not depend on finding them. A user
// never ended has generation 0.
type Generations interface {
	UserGeneration(ctx context.Context, username string) (uint64, error)
}

// Indexer is implemented by stores that keep, beside the records, an
// index of each user's sessions that something outside the service could
// change (a Redis sorted set): Indexed reports whether username's index
// names the session under key. The manager refuses, and deletes, a session
// that verifies but that its user's index does not name, so that it can
// neither escape the count of UserLimiter nor hide from the listings.
type Indexer interface {
	Indexed(ctx context.Context, key, username string) (bool, error)
}

// Standing is what a StandingFinder read with a session's record: its
// user's generation (Generations) and whether the user's index names it
// (Indexer), read for User; User is empty when they were not read.
type Standing struct {
	User    string
	Gen     uint64
	Indexed bool
}

// StandingFinder is implemented by Generations and Indexer stores that
// can read a session's record and its Standing in one step (one look-up
// in a client-side cache, or one round trip), when they know the
// record's user from an earlier read. The manager uses a Standing only
// when its User is the user of the record found, and otherwise asks
// Generations and Indexer, so a store may leave it empty whenever it
// does not know or could not read it.
type StandingFinder interface {
	FindStanding(ctx context.Context, key string) (Record, bool, Standing, error)
}

// ErrClosed is returned by a store used after Close.
var ErrClosed = errors.New("session: store is closed")

// errNoExpiry refuses a record that would never expire: the zero value must
// not mean "forever".
var errNoExpiry = errors.New("session: record has no expiry time")

// sweepInterval is how often a store walks all records to drop expired ones.
// Sweeps piggyback on commits, so an idle store does no work.
const sweepInterval = time.Minute

// table is the in-memory map shared by MemoryStore and FileStore. It is not
// safe for concurrent use: the owning store locks around it. Records are
// stored as private copies and never modified in place, so a shallow copy of
// the map is a consistent snapshot.
type table struct {
	recs map[string]Record
	// intact marks the records whose MAC the manager has checked: a key
	// maps to the first byte of the MAC slice the record carried then
	// (markIntact). A record put or touched since carries a new slice (a
	// copy), so an old mark no longer matches and the record is checked
	// again. Nothing outside the package's code changes a record in
	// memory; a record read from the state file at start is unmarked.
	intact    map[string]*byte
	lastSweep time.Time
	// gens holds the users' generations (see Generations) that are not
	// 0. Never swept: a generation outlives every session.
	gens map[string]uint64
}

func newTable() table {
	return table{recs: make(map[string]Record)}
}

// find returns a copy of the live record under key.
func (t *table) find(key string, now time.Time) (Record, bool) {
	rec, ok := t.recs[key]
	if !ok || rec.expiredAt(now) {
		return Record{}, false
	}
	return rec.clone(), true
}

// findShared is find without the copy of the record's byte slices (CSRF,
// MAC), which stay the table's: the caller reads them and never changes
// them in place. The table never does either (put stores copies, touch
// replaces the MAC with a copy). checked reports whether the manager has
// found this very MAC right before (markIntact).
func (t *table) findShared(key string, now time.Time) (rec Record, ok, checked bool) {
	rec, ok = t.recs[key]
	if !ok || rec.expiredAt(now) {
		return Record{}, false, false
	}
	checked = len(rec.MAC) > 0 && t.intact[key] == &rec.MAC[0]
	return rec, true, checked
}

// markIntact records that the MAC mac, found under key by findShared,
// checked right; it does nothing if the record has been replaced or
// touched since (another MAC slice).
func (t *table) markIntact(key string, mac []byte) {
	rec, ok := t.recs[key]
	if !ok || len(mac) == 0 || len(rec.MAC) == 0 || &rec.MAC[0] != &mac[0] {
		return
	}
	if t.intact == nil {
		t.intact = make(map[string]*byte)
	}
	t.intact[key] = &mac[0]
}

// markIntactLocked is a store's markIntact: t.markIntact under the
// store's lock mu.
func markIntactLocked(mu *sync.RWMutex, t *table, key string, mac []byte) {
	mu.Lock()
	t.markIntact(key, mac)
	mu.Unlock()
}

// sharedFinder is a store of this package whose records the manager may
// read without copying their byte slices (table.findShared), and whose
// records it checks once per MAC (table.markIntact): Load reads CSRF and
// MAC and replaces, never modifies, them. The manager uses it only for a
// *FileStore or *MemoryStore itself, never a type embedding one (whose
// own Find would be bypassed).
type sharedFinder interface {
	findShared(key string) (rec Record, ok, checked bool, err error)
	markIntact(key string, mac []byte)
}

// put stores a private copy of rec under key and returns the record it
// replaced, if any.
func (t *table) put(key string, rec Record) (old Record, existed bool) {
	old, existed = t.recs[key]
	t.recs[key] = rec.clone()
	delete(t.intact, key)
	return old, existed
}

// touch updates LastSeen, Expires and MAC of the record under key, if
// present.
func (t *table) touch(key string, lastSeen, expires time.Time, mac []byte) bool {
	rec, ok := t.recs[key]
	if !ok {
		return false
	}
	rec.LastSeen, rec.Expires, rec.MAC = lastSeen, expires, bytes.Clone(mac)
	t.recs[key] = rec
	delete(t.intact, key)
	return true
}

// remove deletes key and reports whether it was present.
func (t *table) remove(key string) bool {
	_, ok := t.recs[key]
	delete(t.recs, key)
	delete(t.intact, key)
	return ok
}

// generation returns username's generation.
func (t *table) generation(username string) uint64 { return t.gens[username] }

// removeUser moves username's generation forward, deletes every record of
// username and returns how many.
func (t *table) removeUser(username string) int {
	if t.gens == nil {
		t.gens = make(map[string]uint64)
	}
	t.gens[username]++
	n := 0
	for k, rec := range t.recs {
		if rec.Username == username {
			delete(t.recs, k)
			delete(t.intact, k)
			n++
		}
	}
	return n
}

// oldestOfUser returns the keys of username's records beyond the keep most
// recently created ones, oldest first.
func (t *table) oldestOfUser(username string, keep int) []string {
	type kc struct {
		key     string
		created time.Time
	}
	var mine []kc
	for k, rec := range t.recs {
		if rec.Username == username {
			mine = append(mine, kc{k, rec.Created})
		}
	}
	if len(mine) <= keep {
		return nil
	}
	// Oldest first, to the millisecond, then by key (see UserLimiter).
	slices.SortFunc(mine, func(a, b kc) int {
		if c := cmp.Compare(a.created.UnixMilli(), b.created.UnixMilli()); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	keys := make([]string, 0, len(mine)-keep)
	for _, m := range mine[:len(mine)-keep] {
		keys = append(keys, m.key)
	}
	return keys
}

// sweep drops expired records and returns how many.
func (t *table) sweep(now time.Time) int {
	t.lastSweep = now
	n := 0
	for k, rec := range t.recs {
		if rec.expiredAt(now) {
			delete(t.recs, k)
			delete(t.intact, k)
			n++
		}
	}
	return n
}

// sweepIfDue sweeps when sweepInterval has passed since the last sweep.
func (t *table) sweepIfDue(now time.Time) int {
	if now.Sub(t.lastSweep) < sweepInterval {
		return 0
	}
	return t.sweep(now)
}

// snapshot returns a shallow copy of the records (safe: see table).
func (t *table) snapshot() map[string]Record {
	return maps.Clone(t.recs)
}
