package userstate

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
)

// labelRecordMAC is the HKDF label of the key that MACs the records a
// shared store keeps, independent of every other key derived from the
// secret key.
const labelRecordMAC = "backupweb/userstate/v1 record-mac"

// RecordKeys MACs the records a shared store writes: under the current
// key, and checked under the current key or any previous one given, so
// that records written before the secret key changed stay readable until
// they are written again. It is safe for concurrent use.
type RecordKeys struct {
	keys [][]byte // current first
}

// NewRecordKeys derives the record keys from the current secret key and
// the previous ones still accepted for reading (none, usually).
func NewRecordKeys(current []byte, previous ...[]byte) (*RecordKeys, error) {
	k := &RecordKeys{}
	for i, secret := range append([][]byte{current}, previous...) {
		if len(secret) == 0 {
			if i == 0 {
				return nil, errors.New("userstate: no secret key")
			}
			continue
		}
		d, err := hkdf.Key(sha256.New, secret, nil, labelRecordMAC, 32)
		if err != nil {
			return nil, fmt.Errorf("userstate: deriving the record key: %w", err)
		}
		k.keys = append(k.keys, d)
	}
	return k, nil
}

// Sum returns the MAC of the record of key (its full name in the store)
// holding parts, under the current key. The key is part of what is
// MAC'd, so a record copied under another key does not check.
func (k *RecordKeys) Sum(key string, parts ...string) []byte {
	return k.sum(k.keys[0], key, parts)
}

// Check reports whether mac is the MAC of the record of key holding
// parts under the current key or a previous one.
func (k *RecordKeys) Check(key string, mac []byte, parts ...string) bool {
	for _, kk := range k.keys {
		if hmac.Equal(mac, k.sum(kk, key, parts)) {
			return true
		}
	}
	return false
}

func (k *RecordKeys) sum(secret []byte, key string, parts []string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(key))
	for _, p := range parts {
		var n [8]byte
		for i := range n {
			n[i] = byte(uint64(len(p)) >> (56 - 8*i))
		}
		m.Write(n[:])
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// CheckCurrent reports whether mac is the MAC of the record of key
// holding parts under the current key (not a previous one): a record a
// rotation has to write again when it is not.
func (k *RecordKeys) CheckCurrent(key string, mac []byte, parts ...string) bool {
	return hmac.Equal(mac, k.sum(k.keys[0], key, parts))
}
