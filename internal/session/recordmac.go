package session

import (
	"crypto/hmac"
	"encoding/binary"
	"sync"
	"time"
)

// labelRecord is the HKDF label of the key that authenticates stored
// records (see Manager.sealRecord).
const labelRecord = "backupweb/session/v1 record"

// recordMACPrefix separates record MACs from any other message under the
// same key, and names the encoding, so that a later encoding cannot be
// confused with this one.
const recordMACPrefix = "record/v1\x00"

// A stored record is only as trustworthy as the store. Whoever can write
// the store (a Redis administrator, anyone with write access to the state
// folder) could otherwise copy another user's record onto the key of their
// own session, change the user name, or move a deadline. So every record
// carries a MAC, under a key derived from the secret key, over everything
// the manager decides with (user, type, credential fingerprint, attributes,
// CSRF secret, creation, last activity, deadline) and over the store key
// it is kept under. A writer of the store can still delete a record (which
// is a logout) but cannot make, move or extend one.
//
// The manager checks a record's MAC once per version of the record. A
// record read from another package's store (Redis) is compared, byte for
// byte, with the last version that checked under its store key
// (verified.go). The package's own stores (FileStore, MemoryStore) hold
// their records in memory, changed only by this package's code, and read
// their files at start only: there a record is marked when its MAC checks
// (table.markIntact), and checked again after it was loaded, put or
// touched.
//
// Times enter the MAC at millisecond precision: the Redis store keeps the
// activity and the deadline in milliseconds, and the record must check the
// same after the round trip.

// macBufs holds the scratch buffers the encoding is written into.
var macBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// sealRecord returns the MAC of rec stored under key, under the key of ks
// (the Manager's own: the current secret key's).
func (ks *keyset) sealRecord(key string, rec *Record) []byte {
	bp := macBufs.Get().(*[]byte)
	b := appendRecord(append((*bp)[:0], recordMACPrefix...), key, rec)
	sum := ks.recordMAC.sum(nil, "", b)
	*bp = b[:0]
	macBufs.Put(bp)
	return sum
}

// recordIntact reports whether rec, found under key, carries the MAC this
// manager would give it under the current or the previous secret key. A
// record without one (written before records were authenticated, or by
// hand) is not intact.
func (m *Manager) recordIntact(key string, rec *Record) bool {
	return m.verifyRecord(key, rec) != nil
}

// verifyRecord returns the keyset whose MAC rec, found under key,
// carries: the current key's, else the previous key's, else nil.
func (m *Manager) verifyRecord(key string, rec *Record) *keyset {
	if len(rec.MAC) == 0 {
		return nil
	}
	bp := macBufs.Get().(*[]byte)
	b := appendRecord(append((*bp)[:0], recordMACPrefix...), key, rec)
	var found *keyset
	if m.verified != nil {
		found = m.verified.lookup(key, b, rec.MAC)
	}
	if found == nil {
		found = m.checkMAC(b, rec.MAC)
		if found != nil && m.verified != nil {
			m.verified.add(key, b, rec.MAC, found)
		}
	}
	*bp = b[:0]
	macBufs.Put(bp)
	return found
}

// checkMAC returns the keyset under whose key mac is the record MAC of
// the encoding b: the current key's, else the previous key's, else nil.
func (m *Manager) checkMAC(b, mac []byte) *keyset {
	for _, ks := range []*keyset{m.keyset, m.prev} {
		if ks != nil && ks.macMatches(b, mac) {
			return ks
		}
	}
	return nil
}

// macMatches reports whether mac is the record MAC of the encoding b
// under ks's key.
func (ks *keyset) macMatches(b, mac []byte) bool {
	s := ks.recordMAC.get()
	ok := hmac.Equal(s.compute("", b), mac)
	ks.recordMAC.put(s)
	return ok
}

// appendRecord appends the canonical encoding of (key, rec) to b: every
// variable-length field preceded by its length, attributes in key order,
// times as Unix milliseconds. Two different records never share an
// encoding.
func appendRecord(b []byte, key string, rec *Record) []byte {
	b = appendField(b, key)
	b = appendField(b, rec.Username)
	b = appendField(b, rec.Type)
	b = appendField(b, rec.Cred)
	b = binary.AppendUvarint(b, uint64(rec.Attrs.Len()))
	if rec.Attrs.Len() > 0 {
		var room [8]string // a session's attributes fit: no allocation
		for _, k := range rec.Attrs.AppendNames(room[:0]) {
			b = appendField(b, k)
			b = appendField(b, rec.Attrs.Get(k))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(rec.CSRF)))
	b = append(b, rec.CSRF...)
	b = appendTime(b, rec.Created)
	b = appendTime(b, rec.LastSeen)
	b = appendTime(b, rec.Expires)
	if rec.Client != "" || rec.Agent != "" || rec.Gen != 0 {
		// Added after the rest, and only when set, so that records
		// made before these fields existed keep their MAC.
		b = appendField(b, rec.Client)
		b = appendField(b, rec.Agent)
	}
	if rec.Gen != 0 {
		// After the two fields above, always there then, so no record
		// reads as another: one of generation 0 reads as it did before
		// generations were kept.
		b = binary.AppendUvarint(b, rec.Gen)
	}
	return b
}

func appendField(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTime(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(t.UnixMilli()))
}
