package passkey

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/once"
	"github.com/backupweb/backupweb/internal/session"
)

// Kinds of ceremony: a ceremony begun as one kind is never finished as
// another.
const (
	kindRegister = "register" // a signed-in user adds a passkey
	kindLogin    = "login"    // the second step after a right password
	kindDiscover = "discover" // passkey-only sign-in, user not known yet
)

// CeremonyTTL is how long a begun ceremony can be finished: the browser's
// own timeout plus a margin. A ceremony is finished at most once.
const CeremonyTTL = 5 * time.Minute

// ceremonyUser is the user name ceremony records are kept under in the
// session store. It holds a colon, which no user name of the user file can,
// so a ceremony is never counted or ended as anybody's session.
const ceremonyUser = ":webauthn-ceremony"

// attrKey is the record attribute that holds the ceremony, as JSON.
const attrKey = "webauthn"

// ceremony is what the server keeps between the two halves of a WebAuthn
// ceremony: its kind, the user it was begun for ("" for discover), where
// the browser goes after it, and go-webauthn's session data (the
// challenge, the RP id, the allowed credentials).
type ceremony struct {
	Kind string               `json:"kind"`
	User string               `json:"user,omitempty"`
	Next string               `json:"next,omitempty"`
	Data webauthn.SessionData `json:"data"`
	// Stamp is the user's factors stamp when a registration began
	// (Keys.Stamp): the passkey is stored only while it is unchanged.
	Stamp string `json:"stamp,omitempty"`
}

// MaxCeremonies is how many ceremonies one process keeps begun at once
// (and, without a shared spend, how many spent ones it remembers): past
// it, a begin is refused (503 with Retry-After) until the oldest expire.
// The routes that begin ceremonies are rate-limited well below it.
const MaxCeremonies = 10_000

// Ceremonies keeps begun ceremonies server-side, in a session store, so
// that with [server] store = redis a ceremony begun on one instance is
// finished on any other. The browser holds only a random id; the store
// holds the record under a keyed hash of it, with a MAC over the record
// and its key, so a writer of the store can delete a ceremony but never
// make or alter one. Each ceremony is taken once: Take spends its id
// (across instances through spend, when set) before it deletes the
// record, so two racing finishes cannot both use it. Ceremonies have
// tables of their own, never shared with other single-use tokens: at most
// MaxCeremonies begun in this process within CeremonyTTL, and as many
// spent.
type Ceremonies struct {
	store session.Store
	key   []byte
	// prev, during a secret key rotation, is the previous key's: a
	// ceremony begun under it is still finished (see AcceptPrevious).
	prev []byte
	now  func() time.Time
	// begun holds the ceremonies this process began and that have not
	// expired: it bounds them.
	begun *once.Table
	// spend marks a ceremony's store key used for ttl and reports whether
	// it was unused: auth.Shared.SpendOnce when state is shared, else a
	// table of this process.
	spend func(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// NewCeremonies returns ceremonies kept in store, authenticated with key
// (at least 32 bytes, such as session.Manager.PurposeKey("webauthn")). spend
// makes Take single-use across instances (auth.Shared.SpendOnce with a kind
// of its own); nil: single use within this process, which is all a store
// that only this process uses needs. now nil means time.Now.
func NewCeremonies(store session.Store, key []byte, spend func(ctx context.Context, key string, ttl time.Duration) (bool, error), now func() time.Time) (*Ceremonies, error) {
	if store == nil {
		return nil, errors.New("passkey: no store for ceremonies")
	}
	if len(key) < 32 {
		return nil, errors.New("passkey: the ceremony key must be at least 32 bytes")
	}
	if now == nil {
		now = time.Now
	}
	begun, err := once.New(once.Options{Max: MaxCeremonies, Now: now})
	if err != nil {
		return nil, err
	}
	if spend == nil {
		spent, err := once.New(once.Options{Max: MaxCeremonies, Now: now})
		if err != nil {
			return nil, err
		}
		spend = func(_ context.Context, key string, ttl time.Duration) (bool, error) {
			return spent.Spend("spent", key, ttl)
		}
	}
	return &Ceremonies{store: store, key: key, now: now, begun: begun, spend: spend}, nil
}

// AcceptPrevious makes cs finish, besides its own, the ceremonies begun
// under key (the previous secret key's, during a rotation: see
// session.Manager.PreviousPurposeKey). New ones are begun under cs's own
// key only. Call it before cs is used.
func (cs *Ceremonies) AcceptPrevious(key []byte) error {
	if len(key) < 32 {
		return errors.New("passkey: the previous ceremony key must be at least 32 bytes")
	}
	cs.prev = key
	return nil
}

// put keeps c and returns the id the browser must present to take it.
func (cs *Ceremonies) put(ctx context.Context, c ceremony) (string, error) {
	raw := make([]byte, 32)
	rand.Read(raw)
	id := base64.RawURLEncoding.EncodeToString(raw)
	if _, err := cs.begun.Spend("begun", id, CeremonyTTL); err != nil {
		return "", fmt.Errorf("passkey: beginning a ceremony: %w", err)
	}
	body, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("passkey: encoding the ceremony: %w", err)
	}
	now := cs.now()
	key := cs.storeKey(id)
	rec := session.Record{
		Data:    session.Data{Username: ceremonyUser, Type: attrKey, Attrs: attrs.Of(map[string]string{attrKey: string(body)})},
		Created: now, LastSeen: now, Expires: now.Add(CeremonyTTL),
		CSRF: []byte{0},
	}
	rec.MAC = cs.mac(key, rec)
	if err := cs.store.Commit(ctx, key, rec); err != nil {
		return "", fmt.Errorf("passkey: keeping the ceremony: %w", err)
	}
	return id, nil
}

// take returns the ceremony of id and ends it; ok is false when there is
// none: unknown, expired, altered in the store, or taken already.
func (cs *Ceremonies) take(ctx context.Context, id string) (c ceremony, ok bool, err error) {
	if len(id) != 43 {
		return ceremony{}, false, nil
	}
	k := cs.key
	key := cs.storeKey(id)
	rec, found, err := cs.store.Find(ctx, key)
	if err == nil && !found && cs.prev != nil {
		// Begun under the previous key, before a rotation.
		k, key = cs.prev, storeKeyUnder(cs.prev, id)
		rec, found, err = cs.store.Find(ctx, key)
	}
	if err != nil {
		return ceremony{}, false, fmt.Errorf("passkey: reading the ceremony: %w", err)
	}
	if !found {
		return ceremony{}, false, nil
	}
	fresh, err := cs.spend(ctx, key, CeremonyTTL)
	if err != nil {
		return ceremony{}, false, fmt.Errorf("passkey: spending the ceremony: %w", err)
	}
	if err := cs.store.Delete(context.WithoutCancel(ctx), key); err != nil {
		return ceremony{}, false, fmt.Errorf("passkey: ending the ceremony: %w", err)
	}
	if !fresh || !hmac.Equal(rec.MAC, macUnder(k, key, rec)) || !cs.now().Before(rec.Expires) || rec.Username != ceremonyUser {
		return ceremony{}, false, nil
	}
	if err := json.Unmarshal([]byte(rec.Attrs.Get(attrKey)), &c); err != nil {
		return ceremony{}, false, nil
	}
	return c, true, nil
}

// storeKey is where the ceremony of id is kept: a keyed hash, so the store
// never holds an id a browser could present.
func (cs *Ceremonies) storeKey(id string) string { return storeKeyUnder(cs.key, id) }

// storeKeyUnder is storeKey under the ceremony key k.
func storeKeyUnder(k []byte, id string) string {
	m := hmac.New(sha256.New, k)
	m.Write([]byte("key\x00" + id))
	return "webauthn." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// mac authenticates what a ceremony record says and where it is kept.
func (cs *Ceremonies) mac(key string, rec session.Record) []byte { return macUnder(cs.key, key, rec) }

// macUnder is mac under the ceremony key k. The deadline counts to the
// millisecond, which is what a shared store keeps of it (Redis): to the
// nanosecond, a ceremony kept there would never verify.
func macUnder(k []byte, key string, rec session.Record) []byte {
	m := hmac.New(sha256.New, k)
	fmt.Fprintf(m, "mac\x00%s\x00%s\x00%d\x00", key, rec.Username, rec.Expires.UnixMilli())
	m.Write([]byte(rec.Attrs.Get(attrKey)))
	return m.Sum(nil)
}
