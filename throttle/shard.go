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
	// prev and next link the shard's entries, most recent failure first.
	prev, next *entry
}

// shard is one lock's worth of keys: a map for lookup and an intrusive
// doubly linked list, ordered by last failure, for O(1) eviction.
type shard struct {
	mu      sync.Mutex
	entries map[string]*entry
	head    *entry // most recent failure
	tail    *entry // oldest failure
}

// touch moves e (new or already listed) to the front of the list.
func (s *shard) touch(e *entry) {
	if s.head == e {
		return
	}
	s.unlink(e)
	e.next = s.head
	if s.head != nil {
		s.head.prev = e
	}
	s.head = e
	if s.tail == nil {
		s.tail = e
	}
}

// unlink takes e out of the list; e may be unlisted.
func (s *shard) unlink(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else if s.head == e {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else if s.tail == e {
		s.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// remove forgets e.
func (s *shard) remove(e *entry) {
	s.unlink(e)
	delete(s.entries, e.key)
}

// trim drops entries from the old end of the list: those that no longer
// matter (at most a few per call, so the cost stays O(1)) and then as many
// as needed to hold at most limit entries, whatever their state.
func (s *shard) trim(now time.Duration, limit int) {
	for range 2 {
		if s.tail == nil || s.tail == s.head || now < s.tail.forgetAt {
			break
		}
		s.remove(s.tail)
	}
	for len(s.entries) > limit && s.tail != nil {
		s.remove(s.tail)
	}
}
