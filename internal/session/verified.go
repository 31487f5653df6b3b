package session

import (
	"encoding/binary"
	"sync"
)

// A record read from another package's store (Redis) comes back at every
// request: checking its MAC each time costs an HMAC over the whole record,
// the largest part of a signed-in request. The manager checks it once per
// version instead: verifiedCache keeps, per store key, the canonical
// encoding (appendRecord, which holds every field the manager decides
// with and the store key itself) and the MAC of the last record that
// checked there, with the key it checked under. A record found later
// whose encoding and MAC are, byte for byte, those is the record that
// checked: the HMAC is deterministic, so computing it again could only
// give the same answer. Anything else, the smallest change of any field
// or of the MAC, or a record copied from another store key, misses and is
// checked in full, and refused if it fails. An entry never grants a
// session by itself: the store must still hold the record (a revoked or
// ended session is not found), and the generation, index and deadline
// checks run at every request as before.

// maxVerified bounds verifiedCache: emptied when full, after which each
// session is checked in full once more at its next request.
const maxVerified = 10_000

// verifiedCache is the set of record versions that checked. The zero
// value is empty and ready; it is safe for concurrent use.
type verifiedCache struct {
	mu sync.RWMutex
	m  map[string]verifiedEntry
}

// verifiedEntry is one record version that checked under store key: its
// encoding followed by its MAC, and the keyset the MAC was made with.
type verifiedEntry struct {
	enc []byte
	ks  *keyset
}

// lookup returns the keyset rec's version checked under, when enc (the
// canonical encoding of rec under key) and mac are those of the version
// that last checked under key; nil otherwise. The comparison takes a time
// that depends on the lengths only.
func (c *verifiedCache) lookup(key string, enc, mac []byte) *keyset {
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || len(e.enc) != len(enc)+len(mac) || len(mac) == 0 {
		return nil
	}
	n := len(enc)
	if !equalWords(e.enc[:n], enc) || !equalWords(e.enc[n:], mac) {
		return nil
	}
	return e.ks
}

// equalWords reports whether a and b are equal, in a time that depends
// on their lengths only, as subtle.ConstantTimeCompare, eight bytes at a
// step: a record is a few hundred bytes, compared at every request.
func equalWords(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	var diff uint64
	for len(a) >= 8 {
		diff |= binary.LittleEndian.Uint64(a) ^ binary.LittleEndian.Uint64(b)
		a, b = a[8:], b[8:]
	}
	for i := range a {
		diff |= uint64(a[i] ^ b[i])
	}
	return diff == 0
}

// add records that the version of encoding enc with MAC mac checked under
// key with ks. It keeps copies: the caller's buffers are reused.
func (c *verifiedCache) add(key string, enc, mac []byte, ks *keyset) {
	b := make([]byte, 0, len(enc)+len(mac))
	b = append(append(b, enc...), mac...)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxVerified {
		c.m = make(map[string]verifiedEntry)
	}
	c.m[key] = verifiedEntry{enc: b, ks: ks}
	c.mu.Unlock()
}

// len returns how many record versions are known to have checked.
func (c *verifiedCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
