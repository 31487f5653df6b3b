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
// What it does not do: it does not decide what a key is (the caller chooses,
// knowing that a user-name key lets anyone lock that user out and an address
// key is shared behind a NAT), does not persist across restarts, and does
// not sleep or delay anyone itself.
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

// Verdict is the answer of Reserve.
type Verdict struct {
	// OK tells whether the attempt may go ahead. It has then already been
	// counted as a failure: call Release if it succeeds.
	OK bool
	// RetryAfter is, when !OK, how long until the key may try again;
	// callers put it in a Retry-After header with RetryAfterSeconds.
	RetryAfter time.Duration
	// FirstRefusal is true, when !OK, for the first attempt refused since
	// the key was blocked: log that one, not every refusal of a flood.
	FirstRefusal bool
	// BlockEnded, when above zero, says that a block of the key ended
	// since the key's last attempt, and how many attempts it refused: the
	// line that closes the one FirstRefusal opened.
	BlockEnded int

	// Key and StartedBlock are for the Counter that made the verdict, so
	// that its Release can take the attempt back: the key as counted, and
	// whether this attempt's failure, counted ahead, blocked it.
	Key          string
	StartedBlock bool
}

// Reserve asks whether key may make an attempt now and, when it may, counts
// the attempt as a failure before it is checked: an attempt in flight
// counts like a failed one, so however many attempts arrive at once, no
// more than Max of them are checked inside a window before the key is
// blocked. Call Release with the verdict when the attempt succeeds; a
// failed attempt needs nothing more. A refused attempt is counted for
// Verdict.FirstRefusal and BlockEnded; it does not lengthen the block.
func (l *Limiter) Reserve(key string) Verdict {
	if l == nil {
		return Verdict{OK: true}
	}
	key = l.normalise(key)
	s := l.shardOf(key)
	now := l.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e != nil && now < e.blockedUntil {
		e.refused++
		return Verdict{RetryAfter: e.blockedUntil - now, FirstRefusal: e.refused == 1}
	}
	v := Verdict{OK: true, Key: key}
	if e != nil && e.refused > 0 {
		v.BlockEnded, e.refused = e.refused, 0
	}
	v.StartedBlock = l.fail(s, e, key, now)
	return v
}

// Release takes back the failure Reserve counted for an attempt that
// succeeded. If that failure had blocked the key, the block is lifted as
// if it had never been.
func (l *Limiter) Release(v Verdict) {
	if l == nil || !v.OK || v.Key == "" {
		return
	}
	s := l.shardOf(v.Key)
	now := l.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[v.Key]
	if e == nil {
		return
	}
	if v.StartedBlock && now < e.blockedUntil {
		e.blockedUntil, e.strikes = now, max(e.strikes-1, 0)
		// The count was emptied by the block; the other attempts of the
		// burst that blocked it are still failures.
		e.tat = now + l.limit - l.interval
	} else {
		e.tat = max(now, e.tat-l.interval)
	}
	e.forgetAt = max(e.tat, e.blockedUntil) + l.window
}

// Allow reports whether key may try now, without counting anything. When
// it may not, retryAfter is how long until it may.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if l == nil {
		return true, 0
	}
	key = l.normalise(key)
	s := l.shardOf(key)
	now := l.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || now >= e.blockedUntil {
		return true, 0
	}
	return false, e.blockedUntil - now
}

// Fail records a failed attempt by key that was not reserved, blocking it
// if this failure brings its count to Max. A failure recorded while the
// key is blocked is ignored.
func (l *Limiter) Fail(key string) {
	if l == nil {
		return
	}
	key = l.normalise(key)
	s := l.shardOf(key)
	now := l.clock()
	s.mu.Lock()
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
		*e = entry{key: key, refused: e.refused}
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
	s.touch(e, now)
	before := s.evicted
	s.trim(now, l.perShard)
	if s.evicted > before && l.onFull != nil {
		l.fullOnce.Do(l.onFull)
	}
	return blocked
}

// ClearBlocks lifts every block and forgets the blocked keys entirely, past
// blocks included, and returns how many it lifted: what an operator does
// (SIGHUP) to let a locked-out user in without a restart.
func (l *Limiter) ClearBlocks() int {
	if l == nil {
		return 0
	}
	now := l.clock()
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for _, e := range s.entries {
			if now < e.blockedUntil {
				s.remove(e)
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// Reset forgets key entirely, past blocks included: call it after a
// successful login.
func (l *Limiter) Reset(key string) {
	if l == nil {
		return
	}
	key = l.normalise(key)
	s := l.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[key]; e != nil {
		s.remove(e)
	}
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

// RetryAfterSeconds turns Allow's retryAfter into the whole number of
// seconds for a Retry-After header: rounded up, and at least 1, so that a
// client honouring it never comes back while still blocked.
func RetryAfterSeconds(d time.Duration) int {
	s := (d + time.Second - 1) / time.Second
	return int(max(s, 1))
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
	return Options{Max: l.max, Window: l.window, Block: l.block, MaxBlock: l.maxBlock}
}
