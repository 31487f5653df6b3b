package acmecert

import (
	"bytes"
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/backupweb/backupweb/internal/secretkey"
)

// Store is what SharedCache needs of a shared store (redisstore.Client's
// ACME methods): plain records by name, and a lock per name held by a
// token until it is released or its time runs out. Every method fails
// with an error when the store cannot answer; a missing record is nil
// and no error.
type Store interface {
	ACMEGet(ctx context.Context, name string) ([]byte, error)
	// ACMEPut stores val under name; ttl zero: no expiry.
	ACMEPut(ctx context.Context, name string, val []byte, ttl time.Duration) error
	ACMEDelete(ctx context.Context, name string) error
	// ACMELock takes the lock of name for token for ttl unless another
	// token holds it, and reports whether it did; the same token takes it
	// again (its time starting again).
	ACMELock(ctx context.Context, name, token string, ttl time.Duration) (bool, error)
	// ACMEUnlock releases the lock of name if token holds it.
	ACMEUnlock(ctx context.Context, name, token string) error
	// ACMENames lists the names of every record.
	ACMENames(ctx context.Context) ([]string, error)
}

// labelSeal is the HKDF label of the key that seals the records.
const labelSeal = "backupweb/acme/v1 cache-seal"

// LockTTL is how long the lock an instance takes to order a certificate
// or make the account key holds at most: past it (an instance that died
// mid-order), another instance takes it.
const LockTTL = 3 * time.Minute

// challengeTTL bounds the life of a challenge's record (autocert deletes
// it once the validation is done).
const challengeTTL = time.Hour

// SharedCache is an autocert.Cache in a shared store, for several
// instances serving the same names. Every record is sealed (AES-256-GCM,
// a key derived from the secret key, the record's name as associated
// data): the store sees no private key, and a record altered or copied
// under another name does not open and is an error, never a miss.
//
// One instance orders: on a miss of a certificate or of the account key,
// and when the stored certificate is due for renewal, the instance that
// takes the name's lock answers "miss" to autocert (which orders, then
// stores, which releases the lock); the others wait for the stored record
// to appear or change, and read it. A waiter whose holder's lock ran out
// takes it in turn. Challenge records are shared without a lock, so that
// any instance answers the CA's validation.
type SharedCache struct {
	st          Store
	aeads       []cipher.AEAD // current key first
	log         *slog.Logger
	renewBefore time.Duration
	now         func() time.Time
	poll        time.Duration

	mu   sync.Mutex
	held map[string]string // name -> token of the lock this instance holds
}

var (
	_ autocert.Cache     = (*SharedCache)(nil)
	_ secretkey.Resealer = (*SharedCache)(nil)
)

// NewSharedCache returns the cache in st, sealed under keys; renewBefore
// is the Manager's (zero: DefaultRenewBefore).
func NewSharedCache(st Store, keys secretkey.Keys, renewBefore time.Duration, log *slog.Logger) (*SharedCache, error) {
	derived, err := keys.Derive(labelSeal)
	if err != nil {
		return nil, fmt.Errorf("acme: %w", err)
	}
	c := &SharedCache{st: st, log: log, renewBefore: renewBefore, now: time.Now, poll: 200 * time.Millisecond, held: map[string]string{}}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.renewBefore <= 0 {
		c.renewBefore = DefaultRenewBefore
	}
	for _, k := range derived {
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("acme: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("acme: %w", err)
		}
		c.aeads = append(c.aeads, aead)
	}
	return c, nil
}

// accountKey is autocert's name of the account key; legacyAccountKey its
// name in older versions of autocert.
const (
	accountKey       = "acme_account+key"
	legacyAccountKey = "acme_account.key"
)

// locked reports whether a miss of name is ordered under the lock: the
// account key and certificates (NAME, NAME+rsa), not challenges.
func locked(name string) bool {
	switch name {
	case accountKey:
		return true
	case legacyAccountKey:
		return false // read once after a miss of accountKey, never written
	}
	rest, _ := strings.CutSuffix(name, "+rsa")
	return !strings.Contains(rest, "+") && strings.Contains(rest, ".")
}

// Get returns the record of name; see SharedCache for the lock.
func (c *SharedCache) Get(ctx context.Context, name string) ([]byte, error) {
	data, err := c.get(ctx, name)
	if err != nil {
		return nil, err
	}
	if !locked(name) {
		if data == nil {
			return nil, autocert.ErrCacheMiss
		}
		return data, nil
	}
	if data != nil && !c.due(name, data) {
		return data, nil
	}
	// A miss, or a certificate due for renewal: one instance orders.
	old := data
	for {
		got, err := c.lock(ctx, name)
		if err != nil {
			return nil, err
		}
		if got {
			// Another instance may have stored the name between the
			// read above and this lock (and released its lock): read
			// again, so that it is not ordered twice.
			data, err := c.get(ctx, name)
			if err != nil || data == nil || c.due(name, data) {
				if err != nil {
					c.release(ctx, name)
				}
				return nil, cmp.Or(err, autocert.ErrCacheMiss)
			}
			c.release(ctx, name)
			return data, nil
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("acme: waited for another instance to store %q: %w", name, ctx.Err())
			c.log.Error("acme: shared certificate store", "name", name, "err", err)
			return nil, err
		case <-time.After(c.poll):
		}
		data, err := c.get(ctx, name)
		if err != nil {
			return nil, err
		}
		if data != nil && !bytes.Equal(data, old) && !c.due(name, data) {
			return data, nil
		}
	}
}

// Put stores data under name, sealed, and releases the name's lock when
// this instance holds it.
func (c *SharedCache) Put(ctx context.Context, name string, data []byte) error {
	var ttl time.Duration
	if !locked(name) && name != legacyAccountKey {
		ttl = challengeTTL
	}
	nonce := make([]byte, c.aeads[0].NonceSize())
	rand.Read(nonce)
	sealed := c.aeads[0].Seal(nonce, nonce, data, ad(name))
	if err := c.st.ACMEPut(ctx, name, sealed, ttl); err != nil {
		c.log.Error("acme: cannot store in the shared store", "name", name, "err", err)
		return fmt.Errorf("acme: store %q: %w", name, err)
	}
	c.release(ctx, name)
	return nil
}

// release gives the name's lock back when this instance holds it.
func (c *SharedCache) release(ctx context.Context, name string) {
	c.mu.Lock()
	token, ok := c.held[name]
	delete(c.held, name)
	c.mu.Unlock()
	if ok {
		if err := c.st.ACMEUnlock(ctx, name, token); err != nil {
			c.log.Warn("acme: cannot release the lock (it runs out by itself)", "name", name, "err", err)
		}
	}
}

// Delete removes the record of name.
func (c *SharedCache) Delete(ctx context.Context, name string) error {
	if err := c.st.ACMEDelete(ctx, name); err != nil {
		return fmt.Errorf("acme: delete %q: %w", name, err)
	}
	return nil
}

// get reads and opens the record of name: nil for none; an error when
// the store fails or the record does not open (logged: fail closed).
func (c *SharedCache) get(ctx context.Context, name string) ([]byte, error) {
	raw, err := c.st.ACMEGet(ctx, name)
	if err != nil {
		c.log.Error("acme: cannot read the shared store", "name", name, "err", err)
		return nil, fmt.Errorf("acme: read %q: %w", name, err)
	}
	if raw == nil {
		return nil, nil
	}
	if pt, i := c.open(name, raw); i >= 0 {
		return pt, nil
	}
	err = fmt.Errorf("acme: the stored record %q does not open under the secret key (altered, or sealed under another key)", name)
	c.log.Error("acme: shared certificate store", "name", name, "err", err)
	return nil, err
}

// lock tries to take the lock of name for this instance: with the token
// it holds already when it failed to order before (autocert tries again
// a minute later), so that it does not wait on itself.
func (c *SharedCache) lock(ctx context.Context, name string) (bool, error) {
	c.mu.Lock()
	token, ok := c.held[name]
	c.mu.Unlock()
	if !ok {
		var b [16]byte
		rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	}
	ok, err := c.st.ACMELock(ctx, name, token, LockTTL)
	if err != nil {
		c.log.Error("acme: cannot take the ordering lock", "name", name, "err", err)
		return false, fmt.Errorf("acme: lock %q: %w", name, err)
	}
	if ok {
		c.mu.Lock()
		c.held[name] = token
		c.mu.Unlock()
	}
	return ok, nil
}

// due reports whether data, the record of a certificate, holds one that
// autocert renews now: within renewBefore (capped at 30 days, as
// autocert does) of its end. The account key is never due.
func (c *SharedCache) due(name string, data []byte) bool {
	if name == accountKey {
		return false
	}
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return true // no certificate: order one
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		leaf, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return true
		}
		return !c.now().Before(leaf.NotAfter.Add(-min(c.renewBefore, 30*24*time.Hour)))
	}
}

// ad is the associated data of the record of name.
func ad(name string) []byte { return []byte("acme\x00" + name) }

// Reseal puts every record under the current key of keys (rotate-secret):
// a record that opens under the previous key is sealed again under the
// current one; one that opens under neither is left as it is and counted
// Refused.
func (c *SharedCache) Reseal(ctx context.Context, keys secretkey.Keys) ([]secretkey.Count, error) {
	k, err := NewSharedCache(c.st, keys, c.renewBefore, c.log)
	if err != nil {
		return nil, err
	}
	n := secretkey.Count{Kind: "ACME certificates and account key (redis)"}
	names, err := c.st.ACMENames(ctx)
	if err != nil {
		return nil, fmt.Errorf("acme: list the records: %w", err)
	}
	for _, name := range names {
		raw, err := c.st.ACMEGet(ctx, name)
		if err != nil {
			return []secretkey.Count{n}, fmt.Errorf("acme: read %q: %w", name, err)
		}
		if raw == nil {
			continue // gone since the listing (a challenge)
		}
		data, which := k.open(name, raw)
		switch which {
		case 0:
			n.Current++
		case -1:
			n.Refused++
		default:
			if err := k.Put(ctx, name, data); err != nil {
				return []secretkey.Count{n}, err
			}
			n.Resealed++
		}
	}
	return []secretkey.Count{n}, nil
}

// open opens raw, the record of name: the data and the index of the key
// that opened it (0 the current one), or -1 when none does.
func (c *SharedCache) open(name string, raw []byte) ([]byte, int) {
	n := c.aeads[0].NonceSize()
	if len(raw) <= n {
		return nil, -1
	}
	for i, a := range c.aeads {
		if pt, err := a.Open(nil, raw[:n], raw[n:], ad(name)); err == nil {
			return pt, i
		}
	}
	return nil, -1
}
