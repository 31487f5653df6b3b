package throttle

import (
	"context"
	"time"
)

// Verdict is the answer of Check and Acquire.
type Verdict struct {
	// OK tells whether the attempt may go ahead. From Acquire it then
	// holds Slot until its verdict is known.
	OK bool
	// RetryAfter is, when !OK, how long until the key may try again;
	// callers answer it in a Retry-After header, in whole seconds rounded
	// up.
	RetryAfter time.Duration
	// FirstRefusal is true, when !OK and not Busy, for the first attempt
	// refused since the key was blocked: log that one, not every refusal
	// of a flood.
	FirstRefusal bool
	// BlockEnded, when above zero, says that a block of the key ended
	// since the key's last attempt, and how many attempts it refused: the
	// line that closes the one FirstRefusal opened.
	BlockEnded int
	// Busy, when !OK, tells that the key is not blocked: its slots were
	// all taken by recorded failures and attempts in flight for as long as
	// the attempt could wait. It says nothing about the attempt's
	// credentials: it is not a refused attempt to log, and nothing was
	// counted.
	Busy bool
	// Slot, when OK from Acquire, is the slot the attempt holds: give it
	// back with Release when the attempt succeeds (or gets no verdict),
	// turn it into a recorded failure with Fail when it fails.
	Slot Slot
}

// MaxCheck is the longest an attempt may hold a slot: callers check
// credentials under a deadline of MaxCheck (the bcrypt gate's wait and a
// check take a few seconds at most), and counters kept in a store lease
// slots for longer, so that a lease never runs out under a live check
// while one held by a process that stopped is freed.
const MaxCheck = 25 * time.Second

// Slot is one attempt's hold on a slot of a key.
type Slot struct {
	// Key is the key as counted (bounded in length).
	Key string
	// ID tells the slots of one key apart where the count is kept in a
	// store (a lease); empty for a Limiter.
	ID string
	// from is the counter that gave the slot, when a Swap did: the slot
	// goes back there, even after a newer counter took its place.
	from Counter
}

// Held reports whether s is a slot at all (a zero Slot is none).
func (s Slot) Held() bool { return s.Key != "" }

// Check reports whether key may make an attempt now, without taking a
// slot: what a caller asks before it answers from a cache of verified
// credentials, which needs no slot but must still respect a block. A
// refusal is counted for FirstRefusal and BlockEnded; it does not lengthen
// the block.
func (l *Limiter) Check(key string) Verdict {
	if l == nil {
		return Verdict{OK: true}
	}
	key, s, now := l.locked(key)
	defer s.mu.Unlock()
	return l.state(s.entries[key], now)
}

// state is Check on entry e (nil when untracked) at now, under its shard's
// lock.
func (l *Limiter) state(e *entry, now time.Duration) Verdict {
	if e == nil || now >= e.forgetAt {
		return Verdict{OK: true} // nothing, or nothing that still matters
	}
	if now < e.blockedUntil {
		e.refused++
		return Verdict{RetryAfter: e.blockedUntil - now, FirstRefusal: e.refused == 1}
	}
	v := Verdict{OK: true}
	if e.refused > 0 {
		v.BlockEnded, e.refused = e.refused, 0
	}
	return v
}

// TryAcquire takes a slot of key for an attempt if one is free now: a
// blocked key is refused (not Busy), a key whose slots are all taken is
// refused Busy, with RetryAfter the time until its recorded failures
// drain enough to free one (a second when attempts in flight hold them
// all). It never waits; Acquire does.
func (l *Limiter) TryAcquire(key string) Verdict {
	if l == nil {
		return Verdict{OK: true}
	}
	key, s, now := l.locked(key)
	defer s.mu.Unlock()
	e := s.entries[key]
	v := l.state(e, now)
	if !v.OK {
		return v
	}
	n, used := 0, time.Duration(0)
	if e != nil {
		n, used = e.inflight, max(e.tat-now, 0)
	}
	// The recorded count is used/interval rounded up (see fail); a slot is
	// free while that count plus the attempts in flight is below Max.
	if n < l.max {
		room := time.Duration(l.max-1-n) * l.interval
		if used <= room {
			if e == nil {
				e = &entry{key: key}
				s.entries[key] = e
			}
			if e.inflight == 0 {
				s.unlink(e)
			}
			e.inflight++
			v.Slot = Slot{Key: key}
			return v
		}
		return Verdict{Busy: true, RetryAfter: used - room, BlockEnded: v.BlockEnded}
	}
	return Verdict{Busy: true, RetryAfter: time.Second, BlockEnded: v.BlockEnded}
}

// Acquire takes a slot of key for an attempt, waiting for one when they
// are all taken: until an attempt in flight gives one back or fails (each
// such verdict starts the patience Options.Wait again), within
// Options.MaxWait and while ctx lasts. A key blocked meanwhile is refused
// at once. The error is ctx's when it ended first.
func (l *Limiter) Acquire(ctx context.Context, key string) (Verdict, error) {
	if l == nil {
		return Verdict{OK: true}, nil
	}
	nk := l.normalise(key)
	return Await(ctx, &l.waiters, nk, l.wait, l.maxWait, 0, func() (Verdict, error) {
		return l.TryAcquire(nk), nil
	})
}

// Release gives back the slot of an attempt that succeeded, or that got no
// verdict (its check could not be made). Whatever happened to the key
// meanwhile (a Reset, a Clear, a block of others' failures), the slot is
// given back and nothing else changes.
func (l *Limiter) Release(sl Slot) {
	if l == nil || !sl.Held() {
		return
	}
	l.settle(sl.Key, false)
}

// Fail records the failure of the attempt holding sl: its slot becomes a
// recorded failure, which blocks the key if it brings the count to Max.
// It reports whether it did.
func (l *Limiter) Fail(sl Slot) (blocked bool) {
	if l == nil || !sl.Held() {
		return false
	}
	return l.settle(sl.Key, true)
}

// settle ends the attempt in flight of key, recording a failure when
// failed, and wakes the attempts waiting for a slot of key.
func (l *Limiter) settle(key string, failed bool) (blocked bool) {
	s := l.shardOf(key)
	now := l.clock()
	s.mu.Lock()
	e := s.entries[key]
	if e != nil && e.inflight > 0 {
		e.inflight--
		switch {
		case failed && now >= e.blockedUntil:
			blocked = l.fail(s, e, key, now)
		case e.inflight > 0:
		case now >= e.forgetAt && e.refused == 0:
			s.remove(e)
		default:
			s.touch(e, now)
		}
	}
	s.mu.Unlock()
	l.waiters.Wake(key)
	return blocked
}

// Reset forgets the failures and blocks of key, past blocks included:
// call it after a successful login. Attempts in flight keep their slots
// until their verdicts.
func (l *Limiter) Reset(key string) {
	if l == nil {
		return
	}
	key = l.normalise(key)
	s := l.shardOf(key)
	s.mu.Lock()
	if e := s.entries[key]; e != nil {
		l.forget(s, e)
	}
	s.mu.Unlock()
	l.waiters.Wake(key)
}

// forget drops e, or when attempts are in flight, everything of it but
// them. The shard's lock must be held.
func (l *Limiter) forget(s *shard, e *entry) {
	if e.inflight == 0 {
		s.remove(e)
		return
	}
	*e = entry{key: e.key, inflight: e.inflight}
}

// Clear lifts every block and forgets every count, past blocks included,
// and returns how many blocks it lifted: what an operator does (SIGHUP) to
// let locked-out users in without a restart. Attempts in flight keep their
// slots until their verdicts.
func (l *Limiter) Clear() int {
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
				n++
			}
			l.forget(s, e)
		}
		s.mu.Unlock()
	}
	l.waiters.WakeAll()
	return n
}

// InFlight returns the number of attempts in flight for key.
func (l *Limiter) InFlight(key string) int {
	if l == nil {
		return 0
	}
	key = l.normalise(key)
	s := l.shardOf(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[key]; e != nil {
		return e.inflight
	}
	return 0
}

// Failures returns the recorded failure count of key now, rounded up as
// the limit counts it (0 while blocked: a block empties the count).
func (l *Limiter) Failures(key string) int {
	if l == nil {
		return 0
	}
	key, s, now := l.locked(key)
	defer s.mu.Unlock()
	e := s.entries[key]
	if e == nil || e.tat <= now {
		return 0
	}
	return int((e.tat - now + l.interval - 1) / l.interval)
}

// Waiting returns the number of attempts waiting in Acquire for a slot of
// key, so tests can line attempts up without sleeping.
func (l *Limiter) Waiting(key string) int {
	if l == nil {
		return 0
	}
	return l.waiters.Waiting(l.normalise(key))
}
