package password

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/singleflight"
)

const (
	// DefaultCacheSize is the number of successful verifications a
	// Verifier remembers when VerifierOptions.CacheSize is 0.
	DefaultCacheSize = 1024
	// DefaultCacheTTL is how long a successful verification is remembered
	// when VerifierOptions.CacheTTL is not set.
	DefaultCacheTTL = 5 * time.Minute
)

// VerifierOptions configures NewVerifier. The zero value is ready to use.
type VerifierOptions struct {
	// Gate caps concurrent bcrypt computations. Nil: a private gate made
	// by NewGate(0); share one gate between verifiers to cap them together.
	Gate *Gate
	// CacheSize bounds the number of remembered successful verifications,
	// the least recently used being evicted first. 0 means
	// DefaultCacheSize (1024); a negative value disables the cache, so that
	// every check computes bcrypt.
	CacheSize int
	// CacheTTL is how long a successful verification is remembered,
	// counted from when it was computed; using it does not extend it.
	// Zero or negative means DefaultCacheTTL (5 minutes).
	CacheTTL time.Duration
	// Now is the clock used for cache expiry. Nil means time.Now.
	Now func() time.Time
	// Observer is told about every check's work (bcrypt, gate, cache).
	// Nil: nobody is.
	Observer Observer
}

// Verifier checks passwords against stored values. It is safe for
// concurrent use.
//
// A correct credential is verified with bcrypt once and then remembered for
// CacheTTL, so that HTTP Basic clients, which send their password with every
// request, do not pay a quarter-second of CPU per request. What it remembers
// is an HMAC-SHA256 tag of (stored hash, password) under a key drawn at
// random when the Verifier is made and never exposed: neither the password
// nor an unkeyed digest of it is kept. Failures are never remembered, so
// every wrong guess pays the full bcrypt cost, through the Gate.
// Concurrent checks of the same (stored hash, password) share one bcrypt
// computation.
//
// A Verifier does not throttle repeated failures and does not know users;
// callers combine it with package throttle and call CheckDecoy for unknown
// user names.
type Verifier struct {
	gate  *Gate
	cache *verifiedCache // nil when disabled
	now   func() time.Time
	obs   Observer  // nil: nobody
	macs  sync.Pool // of *keyMAC, HMAC-SHA256 under the private key
	group singleflight.Group
	// compare is bcrypt.CompareHashAndPassword; tests replace it to count
	// or hold computations.
	compare func(hashed, pw []byte) error
	// joined, when set by a test, runs once a check has joined a
	// computation, so tests can line callers up without sleeping.
	joined func()
}

// NewVerifier returns a Verifier configured by o, with a fresh random cache
// key.
func NewVerifier(o VerifierOptions) *Verifier {
	v := &Verifier{
		gate:    o.Gate,
		now:     o.Now,
		obs:     o.Observer,
		compare: bcrypt.CompareHashAndPassword,
	}
	if v.gate == nil {
		v.gate = NewGate(0)
	}
	if v.now == nil {
		v.now = time.Now
	}
	size, ttl := o.CacheSize, o.CacheTTL
	if size == 0 {
		size = DefaultCacheSize
	}
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if size > 0 {
		v.cache = newVerifiedCache(size, ttl)
	}
	macKey := make([]byte, 32)
	// crypto/rand.Read never fails: on a broken random source the
	// runtime stops the program rather than return predictable bytes.
	_, _ = rand.Read(macKey)
	v.macs.New = func() any { return &keyMAC{h: hmac.New(sha256.New, macKey)} }
	return v
}

// Check reports whether pw matches stored, a bcrypt hash accepted by
// ParseHash; a password longer than MaxLen never matches, even when its
// first 72 bytes are the right password. (Plain stored passwords are
// compared by the plain Matcher, see NewMatcher.)
//
// ok false with a nil error means "no". An error means the check could not
// be made: a malformed stored hash (wrapping ErrMalformedHash), a full gate
// (wrapping ErrBusy) or an ended context (wrapping ctx.Err()); it never
// says whether the password was right.
func (v *Verifier) Check(ctx context.Context, stored string, pw []byte) (ok bool, err error) {
	return v.verify(ctx, stored, pw, true)
}

// CheckDecoy spends on pw the same work as a failed Check against a hash of
// the given cost (same validation, cache lookup, gate and bcrypt), against
// DecoyHash(cost), and reports nothing but technical errors: it is what a
// caller runs for an unknown user name, so that the answer takes as long as
// for a known one. Its first call for a cost also computes the decoy hash;
// call DecoyHash at start-up to keep that out of request time. Plain mode
// needs no decoy: its comparison is already cheap and constant-time.
func (v *Verifier) CheckDecoy(ctx context.Context, cost int, pw []byte) error {
	h, err := decoyHash(cost)
	if err != nil {
		return err
	}
	_, err = v.verify(ctx, h, pw, false)
	return err
}

// Cached reports whether the cache remembers that pw matches stored: a
// lookup only, no bcrypt and no gate. false means "not known", never
// "wrong". A hit is reported to the Observer; a miss is not, since the
// Check that follows it looks again and reports it.
func (v *Verifier) Cached(ctx context.Context, stored string, pw []byte) bool {
	if v.cache == nil || len(pw) > MaxLen {
		return false
	}
	hit, _ := v.cache.get(v.key(stored, pw), v.now())
	if hit {
		if v.obs != nil {
			v.obs.CacheLookup(true)
		}
	}
	return hit
}

// Purge forgets every remembered verification. Call it when the
// configuration or a user file changes, so that a removed or changed
// password stops working at once rather than after CacheTTL. A check that
// is computing during Purge does not add its result afterwards.
func (v *Verifier) Purge() {
	if v.cache != nil {
		v.cache.purge()
	}
}

// verify is Check; remember false keeps a success out of the cache (the
// decoy path).
func (v *Verifier) verify(ctx context.Context, stored string, pw []byte, remember bool) (bool, error) {
	if len(pw) > MaxLen {
		return false, nil
	}
	key := v.key(stored, pw)
	obs := v.obs
	var gen uint64
	if v.cache != nil {
		var hit bool
		hit, gen = v.cache.get(key, v.now())
		if obs != nil {
			obs.CacheLookup(hit)
		}
		if hit {
			return true, nil // only a valid hash that matched can be cached
		}
	}
	if _, err := ParseHash(stored); err != nil {
		return false, err
	}
	// The computation may outlive this call (when ctx ends first), so it
	// works on its own copy of the password.
	own := bytes.Clone(pw)
	compute := func() (any, error) {
		defer clear(own)
		var cmpErr error
		queued := time.Now()
		if err := v.gate.Do(ctx, func() {
			start := time.Now()
			cmpErr = v.compare([]byte(stored), own)
			if obs != nil {
				obs.GateWaited(start.Sub(queued))
				obs.BcryptChecked(time.Since(start))
			}
		}); err != nil {
			return false, err
		}
		switch {
		case cmpErr == nil:
			if remember && v.cache != nil {
				v.cache.add(key, v.now(), gen)
			}
			return true, nil
		case errors.Is(cmpErr, bcrypt.ErrMismatchedHashAndPassword):
			return false, nil
		default:
			return false, fmt.Errorf("password: comparing with the stored hash: %w", cmpErr)
		}
	}
	for {
		ch := v.group.DoChan(string(key[:]), compute)
		if v.joined != nil {
			v.joined()
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("password: check abandoned: %w", ctx.Err())
		case r := <-ch:
			if r.Err != nil {
				// Another caller led this computation and its context
				// ended while waiting for the gate: ours is still live,
				// so try again, leading if nobody else does.
				if ctx.Err() == nil && isContextErr(r.Err) {
					continue
				}
				return false, r.Err
			}
			return r.Val.(bool), nil
		}
	}
}

// key returns the cache key of (stored, pw): HMAC-SHA256 under the
// Verifier's private key of both values, each preceded by its length, so no
// two pairs share an encoding.
func (v *Verifier) key(stored string, pw []byte) (k cacheKey) {
	m := v.macs.Get().(*keyMAC)
	buf := m.buf[:0]
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(stored)))
	buf = append(buf, stored...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(pw)))
	buf = append(buf, pw...)
	m.h.Reset()
	m.h.Write(buf)
	m.h.Sum(k[:0])
	clear(buf) // the password does not stay in the pool
	m.buf = buf[:0]
	v.macs.Put(m)
	return k
}

// keyMAC is one HMAC state of key with its scratch buffer, reused through
// the Verifier's pool so that a cache lookup allocates nothing.
type keyMAC struct {
	h   hash.Hash
	buf []byte
}

// plainEqual compares a plain stored password with pw through their
// SHA-256 digests, so the comparison's time depends on neither their
// contents nor whether their lengths agree.
func plainEqual(stored string, pw []byte) bool {
	a := sha256.Sum256([]byte(stored))
	b := sha256.Sum256(pw)
	return stored != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
