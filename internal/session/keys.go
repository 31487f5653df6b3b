package session

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"hash"
	"sync"
)

// MinKeyLen is the shortest secret key NewManager accepts, in bytes. It
// matches the contract's rule for BACKUP_SECRET_KEY (32 characters); the
// recommended key is 64 hexadecimal characters from `backupweb gen-secret`.
const MinKeyLen = 32

// derivedKeyLen is the size of every derived key: 32 bytes, enough for
// HMAC-SHA256 and AES-256.
const derivedKeyLen = 32

// HKDF info labels, one per purpose. The secret key itself is never used
// directly: each purpose gets its own key, so a weakness in one use (say, a
// token format) cannot be turned against another. The "v1" lets a future
// scheme derive fresh keys without clashing with these.
const (
	labelStoreKey   = "backupweb/session/v1 store-key"
	labelCSRF       = "backupweb/session/v1 csrf"
	labelFormCookie = "backupweb/session/v1 form-cookie"
	labelCredential = "backupweb/session/v1 credential"
	labelSealPrefix = "backupweb/session/v1 seal "
)

// keyring derives purpose keys from the secret key with HKDF-SHA256. It keeps
// only the HKDF pseudorandom key (the extract step's output), not the secret
// itself.
type keyring struct {
	prk []byte
}

// newKeyring runs the HKDF extract step over secret. No salt is used: the
// secret is already high-entropy, and a fixed salt would add nothing.
func newKeyring(secret []byte) (*keyring, error) {
	prk, err := hkdf.Extract(sha256.New, secret, nil)
	if err != nil {
		return nil, fmt.Errorf("session: derive keys: %w", err)
	}
	return &keyring{prk: prk}, nil
}

// derive returns the 32-byte key for label (HKDF expand step). Distinct labels
// give independent keys.
func (k *keyring) derive(label string) ([]byte, error) {
	key, err := hkdf.Expand(sha256.New, k.prk, label, derivedKeyLen)
	if err != nil {
		return nil, fmt.Errorf("session: derive keys: %w", err)
	}
	return key, nil
}

// keyset is every key the Manager derives from one secret key. A Manager
// holds the current key's (embedded, so its pools read as the Manager's
// own) and, during a rotation, the previous key's (Manager.prev), which
// only reads: it checks what was made under the previous key and writes
// nothing new.
type keyset struct {
	keys      *keyring
	credMAC   *macPool // credential fingerprints
	storeMAC  *macPool // session id -> store key
	recordMAC *macPool // authenticates stored records (recordmac.go)
	csrfMAC   *macPool // CSRF secrets and form nonces -> tokens
	formMAC   *macPool // signs the form cookie
	aeads     sync.Map // purpose -> cipher.AEAD, see Seal
}

// newKeyset derives every key of the Manager from secret.
func newKeyset(secret []byte) (*keyset, error) {
	keys, err := newKeyring(secret)
	if err != nil {
		return nil, err
	}
	ks := &keyset{keys: keys}
	for _, p := range []struct {
		label string
		dst   **macPool
	}{{labelStoreKey, &ks.storeMAC}, {labelRecord, &ks.recordMAC}, {labelCSRF, &ks.csrfMAC}, {labelFormCookie, &ks.formMAC}, {labelCredential, &ks.credMAC}} {
		k, err := keys.derive(p.label)
		if err != nil {
			return nil, err
		}
		*p.dst = newMACPool(k)
	}
	return ks, nil
}

// macPool computes HMAC-SHA256 under one key. Building an HMAC state costs
// two block compressions and an allocation, so the states are pooled: the
// per-request path (hashing the session id) then costs one Reset and one
// short message.
type macPool struct {
	pool sync.Pool
}

func newMACPool(key []byte) *macPool {
	mp := &macPool{}
	mp.pool.New = func() any { return &macState{h: hmac.New(sha256.New, key)} }
	return mp
}

// macState is one pooled HMAC state with room for its result, so that a
// MAC computed and used at once (hashed into a store key, compared)
// costs no allocation.
type macState struct {
	h   hash.Hash
	out [sha256.Size]byte
	// id and scratch serve the session id's decoding and its store key's
	// encoding (see keyFromRequest): room for 64 base64 characters.
	id      [idLen]byte
	scratch [64]byte
}

// compute returns HMAC(key, prefix || msg) in s's own array: valid until
// s goes back to the pool.
func (s *macState) compute(prefix string, msg []byte) []byte {
	s.h.Reset()
	if prefix != "" {
		s.h.Write([]byte(prefix))
	}
	s.h.Write(msg)
	return s.h.Sum(s.out[:0])
}

func (mp *macPool) get() *macState  { return mp.pool.Get().(*macState) }
func (mp *macPool) put(s *macState) { mp.pool.Put(s) }

// sum appends HMAC(key, prefix || msg) to dst and returns the result. The
// prefix separates the kinds of message that share one key.
func (mp *macPool) sum(dst []byte, prefix string, msg []byte) []byte {
	s := mp.get()
	dst = append(dst, s.compute(prefix, msg)...)
	mp.put(s)
	return dst
}

// labelPurposePrefix starts the HKDF label of the keys PurposeKey hands out.
const labelPurposePrefix = "backupweb/session/v1 key "

// PurposeKey returns a 32-byte key derived from the secret key for
// purpose alone (HKDF label "backupweb/session/v1 key <purpose>"), for a
// package that signs values of its own beside the sessions (the login's
// device cookies): independent of every key the Manager uses itself, and
// the same across restarts with the same secret key.
func (m *Manager) PurposeKey(purpose string) ([]byte, error) {
	if purpose == "" {
		return nil, fmt.Errorf("session: derive keys: empty purpose")
	}
	return m.keys.derive(labelPurposePrefix + purpose)
}

// PreviousPurposeKey is PurposeKey under the previous secret key, for
// checking what a package signed before a rotation; ok is false without a
// previous key.
func (m *Manager) PreviousPurposeKey(purpose string) (key []byte, ok bool, err error) {
	if m.prev == nil {
		return nil, false, nil
	}
	if purpose == "" {
		return nil, false, fmt.Errorf("session: derive keys: empty purpose")
	}
	key, err = m.prev.keys.derive(labelPurposePrefix + purpose)
	return key, err == nil, err
}

// HasPrevious reports whether the manager holds a previous secret key
// (Options.PreviousKey), which it accepts for reading.
func (m *Manager) HasPrevious() bool { return m.prev != nil }
