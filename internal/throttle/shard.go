package throttle

import (
	"sync"
	"time"
)

// entry is what a Limiter remembers about one key. Times are durations
// since the Limiter's base.
type entry struct {
	key string
	// tat is when the failure count will have drained to zero; the count
	// now is (tat-now)/interval.
	tat time.Duration
	// blockedUntil is the end of the current or last block.
	blockedUntil time.Duration
	// strikes counts the key's blocks since it was last forgotten.
	strikes int
	// forgetAt is when the entry no longer affects anything.
	forgetAt time.Duration
	// refused counts the attempts refused during the current or last
	// block, until the block is reported over (Verdict.BlockEnded).
	refused int
	// inflight counts the attempts holding a slot of the key (Acquire)
	// whose verdict is not known yet. While it is above zero the entry is
	// in no list, so neither eviction nor expiry can forget the slots.
	inflight int
	// prev and next link the entries of one of the shard's lists, most
	// recent failure first; inBlocked tells which list, listed whether e is
	// in one.
	prev, next        *entry
	inBlocked, listed bool
}

// shard is one lock's worth of keys: a map for lookup and two intrusive
// doubly linked lists, each ordered by last failure (most recent first):
// one for keys that were not blocked at their last failure, one for keys
// that were. Eviction takes from the first list while it has entries, so
// filling the table with new keys cannot lift a block (see trim).
type shard struct {
	mu      sync.Mutex
	entries map[string]*entry
	lists   [2]list // [0]: clean keys, [1]: blocked keys
	// evicted counts live keys dropped because the shard was full.
	evicted int
}

// list is one doubly linked list of entries.
type list struct {
	head *entry // most recent failure
	tail *entry // oldest failure
}

// touch moves e (new or already listed) to the front of the list its state
// at now belongs to.
func (s *shard) touch(e *entry, now time.Duration) {
	s.unlink(e)
	e.inBlocked = now < e.blockedUntil
	l := &s.lists[0]
	if e.inBlocked {
		l = &s.lists[1]
	}
	e.next = l.head
	if l.head != nil {
		l.head.prev = e
	}
	l.head = e
	if l.tail == nil {
		l.tail = e
	}
	e.listed = true
}

// unlink takes e out of its list; e may be unlisted.
func (s *shard) unlink(e *entry) {
	if !e.listed {
		return
	}
	l := &s.lists[0]
	if e.inBlocked {
		l = &s.lists[1]
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next, e.listed = nil, nil, false
}

// remove forgets e.
func (s *shard) remove(e *entry) {
	s.unlink(e)
	delete(s.entries, e.key)
}

// trim drops entries from the old ends of the lists: those that no longer
// matter (at most a few per call, so the cost stays O(1)), then as many as
// needed to hold at most limit entries — clean keys first, and a blocked
// key only when no clean key is left.
func (s *shard) trim(now time.Duration, limit int) {
	for i := range s.lists {
		for range 2 {
			t := s.lists[i].tail
			if t == nil || t == s.lists[i].head || now < t.forgetAt {
				break
			}
			s.remove(t)
		}
	}
	for len(s.entries) > limit {
		t := s.lists[0].tail
		if t == nil {
			t = s.lists[1].tail
		}
		if t == nil {
			return
		}
		s.remove(t)
		s.evicted++
	}
}
