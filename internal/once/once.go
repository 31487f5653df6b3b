// Package once remembers single-use tokens (a used TOTP step, a spent
// second-factor pending state, an OAuth state, a passkey ceremony) until
// they expire, and never for less.
//
// A Table holds at most Max tokens. When it is full of tokens that have
// not expired, a new one is refused with a *FullError (answered 503 with
// Retry-After) rather than made room for: forgetting a spent token early
// would let it be used a second time. Memory is bounded by Max; what keeps
// the table from filling is the callers' rate limits on the routes that
// spend.
//
// With Options.File, the table is kept in a file too (written atomically
// after every spend, read at New), so a restart does not forget what was
// spent. A file that cannot be read, or whose content is not what this
// package writes, is an error at New: the caller refuses to start rather
// than accept a token twice.
//
// What it does not do: share tokens between processes (redisstore's
// SpendOnce does, with keys that expire), or keep the tokens themselves:
// only a SHA-256 digest of kind and token is held.
package once

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// DefaultMax is Options.Max's default. Each token costs about a hundred
// bytes in memory and ninety in a file.
const DefaultMax = 10_000

// Options configure New.
type Options struct {
	// Max is how many unexpired tokens the table holds. Default DefaultMax.
	Max int
	// File, when set, is where the table is kept across restarts.
	File string
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Table is a set of spent tokens, each remembered until its own expiry.
// It is safe for concurrent use.
type Table struct {
	max  int
	file string
	now  func() time.Time

	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // digest -> expiry
	// soonest is no later than the earliest expiry in seen (exactly it
	// after a sweep): a full table is not swept again before it, so a
	// flood against a full table costs no more than a map lookup each.
	soonest time.Time
}

// New returns a table configured by o, holding what o.File holds when it
// is set and exists.
func New(o Options) (*Table, error) {
	t := &Table{max: o.Max, file: o.File, now: o.Now, seen: map[[sha256.Size]byte]time.Time{}}
	if t.max <= 0 {
		t.max = DefaultMax
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.file != "" {
		if err := t.load(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// FullError is the refusal of a new token by a full table. It is
// Unavailable (the caller answers 503) and TableFull; RetryIn says when
// the first token of the table expires.
type FullError struct {
	Max   int
	After time.Duration
}

func (e *FullError) Error() string {
	return fmt.Sprintf("once: the table of %d single-use tokens is full until %s from now", e.Max, e.After.Round(time.Second))
}

// Unavailable reports true: the refusal is temporary.
func (e *FullError) Unavailable() bool { return true }

// TableFull reports true: a table of single-use tokens is full.
func (e *FullError) TableFull() bool { return true }

// RetryIn is how long until the table has room again.
func (e *FullError) RetryIn() time.Duration { return e.After }

// Spend marks token of kind used for ttl and reports whether it was unused
// until now. A full table refuses a new token with a *FullError; a token
// already spent is answered false even then. With a file, the spend is
// written before Spend returns true; an error writing it is returned
// (the token stays spent in memory).
func (t *Table) Spend(kind, token string, ttl time.Duration) (bool, error) {
	key := sha256.Sum256([]byte(kind + "\x00" + token))
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if exp, used := t.seen[key]; used && now.Before(exp) {
		return false, nil
	}
	delete(t.seen, key)
	if len(t.seen) >= t.max && !now.Before(t.soonest) {
		t.sweep(now)
	}
	if len(t.seen) >= t.max {
		return false, &FullError{Max: t.max, After: max(t.soonest.Sub(now), time.Second)}
	}
	exp := now.Add(ttl)
	t.seen[key] = exp
	if t.soonest.IsZero() || exp.Before(t.soonest) {
		t.soonest = exp
	}
	if t.file != "" {
		if err := t.save(now); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Spent reports whether token of kind was spent and has not expired,
// without spending it: a page can say a step is over before a form is
// posted that could only fail. Spend alone decides a use.
func (t *Table) Spent(kind, token string) bool {
	key := sha256.Sum256([]byte(kind + "\x00" + token))
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	exp, used := t.seen[key]
	return used && now.Before(exp)
}

// sweep forgets the expired tokens and notes the earliest expiry left.
// The lock must be held.
func (t *Table) sweep(now time.Time) {
	t.soonest = time.Time{}
	for k, exp := range t.seen {
		if !now.Before(exp) {
			delete(t.seen, k)
			continue
		}
		if t.soonest.IsZero() || exp.Before(t.soonest) {
			t.soonest = exp
		}
	}
}

// Len returns how many tokens the table holds, expired ones not yet
// swept included.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.seen)
}
