// Package secretkey holds the service's secret keys as one value: the
// current key (BACKUP_SECRET_KEY), under which everything is written, and
// an optional previous key (BACKUP_SECRET_KEY_PREVIOUS), under which what
// was made before a rotation is still read. Every package that keys or
// seals something takes a Keys and tries the current key first, then the
// previous one; a value that opens under neither is refused, never read as
// empty.
//
// It derives nothing itself beyond Derive's per-purpose keys: each package
// keeps its own labels, so that two uses never share a key.
package secretkey

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
)

// MinLen is the shortest secret key accepted, in bytes (the contract's
// rule for BACKUP_SECRET_KEY: 32 characters; `backupweb gen-secret` makes
// 64 hexadecimal ones).
const MinLen = 32

// Keys is the current secret key and, during a rotation, the previous one.
// The zero value holds no key. It is a plain value, safe to copy and to
// share between goroutines.
type Keys struct {
	// Current is the key everything is written under.
	Current []byte
	// Previous, when not nil, is accepted for reading what was made
	// under it; nothing is written under it.
	Previous []byte
}

// New checks current and previous (nil or empty: no previous key) and
// returns them as Keys: each at least MinLen bytes, and two different
// keys. The errors name the key by its environment variable and never
// include it.
func New(current, previous []byte) (Keys, error) {
	if len(current) < MinLen {
		return Keys{}, fmt.Errorf("secretkey: BACKUP_SECRET_KEY is %d bytes, at least %d are needed", len(current), MinLen)
	}
	if len(previous) == 0 {
		return Keys{Current: current}, nil
	}
	if len(previous) < MinLen {
		return Keys{}, fmt.Errorf("secretkey: BACKUP_SECRET_KEY_PREVIOUS is %d bytes, at least %d are needed", len(previous), MinLen)
	}
	if subtle.ConstantTimeCompare(current, previous) == 1 {
		return Keys{}, errors.New("secretkey: BACKUP_SECRET_KEY_PREVIOUS is the same as BACKUP_SECRET_KEY; set it to the key in force before the rotation, or leave it unset")
	}
	return Keys{Current: current, Previous: previous}, nil
}

// HasPrevious reports whether a previous key is held.
func (k Keys) HasPrevious() bool { return len(k.Previous) > 0 }

// All returns the keys to try when reading: the current one, then the
// previous one when held.
func (k Keys) All() [][]byte {
	if k.HasPrevious() {
		return [][]byte{k.Current, k.Previous}
	}
	return [][]byte{k.Current}
}

// Derive returns the 32-byte key for label (HKDF-SHA256, no salt) of each
// key of All, in the same order.
func (k Keys) Derive(label string) ([][]byte, error) {
	all := k.All()
	out := make([][]byte, 0, len(all))
	for _, secret := range all {
		d, err := hkdf.Key(sha256.New, secret, nil, label, 32)
		if err != nil {
			return nil, fmt.Errorf("secretkey: derive %q: %w", label, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// Count is what a Resealer did with the records of one kind.
type Count struct {
	// Kind names the records ("sessions", "TOTP secrets", ...).
	Kind string
	// Resealed were under the previous key and are now under the
	// current one; Current were under it already.
	Resealed, Current int
	// Refused open under neither key: left as they are, refused when
	// read.
	Refused int
	// Stuck open under a key but cannot be resealed (a keyed hash of a
	// value nobody keeps, such as a recovery code made before codes were
	// sealed): they stop opening once their key is dropped.
	Stuck int
}

// Resealer is a store of records sealed or MAC'd under the secret key
// that can put every one of them under the current key: `backupweb
// rotate-secret` runs each store the configuration names through it, and
// after it the previous key can be dropped. Reseal must be idempotent (a
// second run finds every record current) and must leave a record that
// opens under neither key as it is, counted as Refused, never rewritten
// as empty.
type Resealer interface {
	Reseal(ctx context.Context, keys Keys) ([]Count, error)
}
