// Package throttle slows down password guessing: it counts authentication
// failures per key (a client address, a user name, or both joined) and
// blocks a key that fails too often, telling the caller how long until it may
// try again, for a 429 answer with Retry-After.
//
// How it counts. Each key has a failure count that rises by one per failure
// and drains continuously at Max per Window (with the defaults, 10 per 15
// minutes: one every 90 seconds). A failure that brings the count to Max
// blocks the key for Block and empties the count. So Max failures in quick
// succession block at once, a failure is always forgotten within Window, and
// failures slower than Max per Window are never blocked (that rate is the
// most a patient guesser gets).
//
// Backoff. A key that is blocked again before it has been forgotten is
// blocked twice as long as the previous time (15 minutes, 30, 60, ...), up to
// MaxBlock. A key is forgotten entirely, past blocks included, once Window
// has passed with its count at zero and no block.
//
// Attempts in flight. An attempt whose verdict is not known yet (a
// password being checked) holds a slot of its key while it is in flight
// (Acquire): a key's slots are its recorded failures plus its attempts in
// flight, and never more than Max. The verdict settles the slot: a success
// gives it back (Release), a failure turns it into a recorded failure
// (Fail), and only recorded failures reaching Max block the key. So however
// many attempts arrive at once, at most Max wrong verdicts are given before
// the key is blocked, and right attempts never block it. An attempt that
// finds every slot taken waits (bounded by Options.Wait and MaxWait, and by
// its context) for earlier verdicts instead of being refused at once; if
// none frees a slot in time it is refused as Busy, which says nothing about
// its credentials.
//
// What it does not do: it does not decide what a key is (the caller chooses,
// knowing that a user-name key lets anyone lock that user out and an address
// key is shared behind a NAT), does not persist across restarts, and never
// delays an attempt except to wait for a slot.
package throttle

import (
	"crypto/sha256"
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
)

// Defaults of Options, applied to zero or negative fields.
const (
	DefaultMax      = 10
	DefaultWindow   = 15 * time.Minute
	DefaultBlock    = DefaultWindow
	DefaultMaxBlock = 24 * time.Hour
	DefaultMaxKeys  = 100000
	// DefaultWait is Options.Wait's default: about two bcrypt checks at
	// the recommended cost on a busy machine.
	DefaultWait = time.Second
)

// longest caps Window, Block and MaxBlock so that time arithmetic cannot overflow.
const longest = 100 * 365 * 24 * time.Hour

// maxKeyLen bounds the memory a key takes: longer keys are replaced by
// their SHA-256 digest.
const maxKeyLen = 128

// Options configures New. The zero value gives the defaults.
type Options struct {
	// Max is the number of failures, in quick succession, that blocks a
	// key. Default DefaultMax (10).
	Max int
	// Window is the time the failure count takes to drain from Max to
	// zero; no failure is remembered longer than Window (unless its key is
	// blocked). Default DefaultWindow (15 minutes).
	Window time.Duration
	// Block is how long a key is refused the first time it reaches Max.
	// Default: Window (DefaultBlock, 15 minutes, with the default Window).
	Block time.Duration
	// MaxBlock caps the doubling of Block for a key that keeps failing.
	// Default DefaultMaxBlock (24 hours); a value below Block means Block
	// (no backoff).
	MaxBlock time.Duration
	// MaxKeys bounds the number of keys tracked. When full, the key whose
	// last failure is oldest is forgotten first, among keys not blocked. Default DefaultMaxKeys
	// (100,000, a few tens of megabytes at most).
	MaxKeys int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Wait is how long Acquire waits for a slot of a key whose slots are
	// all taken without any of them being given back: the patience for
	// the next verdict of an attempt in flight. Each slot given back or
	// failure recorded starts it again. Default DefaultWait; callers that
	// know their check's cost pass about twice that (see
	// password.CheckTime). Negative: Acquire never waits.
	Wait time.Duration
	// MaxWait bounds Acquire's whole wait, however many verdicts arrive
	// meanwhile. Default ten times Wait.
	MaxWait time.Duration
	// OnFull, when set, is called once, the first time a key that still
	// mattered is forgotten because MaxKeys were tracked: a flood of new
	// keys (addresses, user names) is itself worth an operator's look.
	// Keys that were not blocked are forgotten first; a blocked key only
	// when every tracked key is blocked.
	OnFull func()
}

// Limiter tracks failures per key. It is safe for concurrent use; every
// operation is O(1) under the mutex of one of its shards. A nil *Limiter
// allows everything and records nothing, which is how callers switch
// throttling off.
type Limiter struct {
	max      int
	window   time.Duration
	interval time.Duration // window / max: how fast one failure drains
	limit    time.Duration // interval * max: the count of Max, as time
	block    time.Duration
	maxBlock time.Duration
	now      func() time.Time
	base     time.Time // origin of the durations held in entries
	seed     maphash.Seed
	shards   []shard
	perShard int
	onFull   func()
	fullOnce sync.Once
	wait     time.Duration
	maxWait  time.Duration
	waiters  Notifier
}

// New returns a Limiter configured by o.
func New(o Options) *Limiter {
	l := &Limiter{
		max:      o.Max,
		window:   o.Window,
		block:    o.Block,
		maxBlock: o.MaxBlock,
		now:      o.Now,
		seed:     maphash.MakeSeed(),
		onFull:   o.OnFull,
	}
	if l.max <= 0 {
		l.max = DefaultMax
	}
	if l.window <= 0 {
		l.window = DefaultWindow
	}
	if l.block <= 0 {
		l.block = l.window
	}
	if l.maxBlock <= 0 {
		l.maxBlock = DefaultMaxBlock
	}
	l.window = min(l.window, longest)
	l.block = min(l.block, longest)
	l.maxBlock = min(max(l.maxBlock, l.block), longest)
	if l.now == nil {
		l.now = time.Now
	}
	l.wait, l.maxWait = WaitBounds(o.Wait, o.MaxWait)
	l.interval = max(l.window/time.Duration(l.max), 1)
	l.limit = l.interval * time.Duration(l.max)
	l.base = l.now()

	maxKeys := o.MaxKeys
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	n := 1
	if maxKeys >= 1024 {
		n = 16
	}
	l.shards = make([]shard, n)
	l.perShard = maxKeys / n
	for i := range l.shards {
		l.shards[i].entries = make(map[string]*entry)
	}
	return l
}

// locked returns key as counted (normalised), its shard, locked for the
// caller to unlock, and the time now.
func (l *Limiter) locked(key string) (string, *shard, time.Duration) {
	key = l.normalise(key)
	s := l.shardOf(key)
	now := l.clock()
	s.mu.Lock()
	return key, s, now
}

// allow reports whether key may try now, without counting anything. When
// it may not, retryAfter is how long until it may.
func (l *Limiter) allow(key string) (ok bool, retryAfter time.Duration) {
	if l == nil {
		return true, 0
	}
	key, s, now := l.locked(key)
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || now >= e.blockedUntil {
		return true, 0
	}
	return false, e.blockedUntil - now
}

// record records a failed attempt by key that held no slot, blocking it
// if this failure brings its count to Max. A failure recorded while the
// key is blocked is ignored.
func (l *Limiter) record(key string) {
	if l == nil {
		return
	}
	key, s, now := l.locked(key)
	defer s.mu.Unlock()
	if e := s.entries[key]; e != nil && now < e.blockedUntil {
		return
	}
	l.fail(s, s.entries[key], key, now)
}

// fail counts one failure of key (entry e, nil when untracked) at now and
// reports whether it blocked the key. The shard's lock must be held and
// the key must not be blocked.
func (l *Limiter) fail(s *shard, e *entry, key string, now time.Duration) (blocked bool) {
	switch {
	case e == nil:
		e = &entry{key: key}
		s.entries[key] = e
	case now >= e.forgetAt:
		s.unlink(e)
		*e = entry{key: key, inflight: e.inflight}
	}
	e.tat = max(e.tat, now) + l.interval
	// The count is (tat-now)/interval rounded up: time that passed between
	// quick failures drains a fraction of one, which must not save the key.
	if e.tat-now > l.limit-l.interval {
		e.strikes++
		e.blockedUntil = now + l.blockFor(e.strikes)
		e.tat = now
		blocked = true
	}
	e.forgetAt = max(e.tat, e.blockedUntil) + l.window
	if e.inflight == 0 {
		s.touch(e, now) // an entry with attempts in flight stays out of the lists: it cannot be evicted
	}
	before := s.evicted
	s.trim(now, l.perShard)
	if s.evicted > before && l.onFull != nil {
		l.fullOnce.Do(l.onFull)
	}
	return blocked
}

// Len returns the number of keys tracked, some of which may have expired
// and not yet been dropped.
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	return n
}

// blockFor returns the block of a key's n-th consecutive block: Block
// doubled n-1 times, at most MaxBlock.
func (l *Limiter) blockFor(n int) time.Duration {
	d := l.block
	for i := 1; i < n && d < l.maxBlock; i++ {
		if d > l.maxBlock/2 {
			return l.maxBlock
		}
		d *= 2
	}
	return min(d, l.maxBlock)
}

// clock returns the current time as a duration since l.base, which keeps
// the monotonic reading of time.Now and makes comparisons plain integers.
func (l *Limiter) clock() time.Duration {
	return l.now().Sub(l.base)
}

// normalise bounds the size of a key.
func (l *Limiter) normalise(key string) string {
	if len(key) <= maxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "\x00sha256:" + string(sum[:])
}

func (l *Limiter) shardOf(key string) *shard {
	if len(l.shards) == 1 {
		return &l.shards[0]
	}
	return &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
}

// AddrKey is the key of a client address: the address itself for IPv4,
// its /64 prefix for IPv6, since one IPv6 client commonly holds a whole
// /64 and could otherwise spread its guesses over 2^64 keys.
func AddrKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return a.String()
}

// Settings returns the options l works with: defaults filled in, bounds
// applied (MaxKeys, Now and OnFull aside). A Counter kept elsewhere uses
// it to count by the same rules.
func (l *Limiter) Settings() Options {
	return Options{Max: l.max, Window: l.window, Block: l.block, MaxBlock: l.maxBlock, Wait: l.wait, MaxWait: l.maxWait}
}
