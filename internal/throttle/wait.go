package throttle

import (
	"context"
	"sync"
	"time"
)

// WaitBounds returns the patience and the whole bound of a wait for a slot
// as Options.Wait and Options.MaxWait say: zero Wait is DefaultWait, a
// negative one no wait at all; zero MaxWait is ten times Wait, and never
// less than Wait. A Counter kept in a store uses it to wait by the same
// rules.
func WaitBounds(wait, maxWait time.Duration) (time.Duration, time.Duration) {
	switch {
	case wait < 0:
		return -1, 0
	case wait == 0:
		wait = DefaultWait
	}
	wait = min(wait, longest/10)
	if maxWait <= 0 {
		maxWait = 10 * wait
	}
	return wait, max(maxWait, wait)
}

// Await runs try until it gives a verdict that is not Busy, waiting in
// between for n to be woken for key (a slot given back or a failure
// recorded by this process), for the verdict's RetryAfter (a count that
// drains), or for poll when above zero (slots given back elsewhere, in a
// shared store). It gives up with the last Busy verdict when no wake-up
// came for patience, or after maxWait in all; a negative patience means
// no wait. ctx ending ends the wait with ctx's error. It is the waiting of
// Limiter.Acquire, exported for Counters kept elsewhere.
func Await(ctx context.Context, n *Notifier, key string, patience, maxWait, poll time.Duration, try func() (Verdict, error)) (Verdict, error) {
	var (
		pt, total *time.Timer
		ended     int
	)
	defer func() {
		if pt != nil {
			pt.Stop()
			total.Stop()
		}
	}()
	for {
		w := n.join(key)
		v, err := try()
		ended += v.BlockEnded
		v.BlockEnded = ended
		if err != nil || !v.Busy || patience < 0 {
			n.leave(key, w)
			return v, err
		}
		if pt == nil {
			pt, total = time.NewTimer(patience), time.NewTimer(maxWait)
		}
		next := v.RetryAfter
		if poll > 0 && (next <= 0 || poll < next) {
			next = poll
		}
		var (
			tick <-chan time.Time
			tt   *time.Timer
		)
		if next > 0 && next < patience {
			tt = time.NewTimer(next)
			tick = tt.C
		}
		select {
		case <-w.ch:
			// A verdict arrived: patience starts again. (Since Go 1.23
			// Reset leaves no stale tick to drain.)
			pt.Reset(patience)
		case <-tick:
		case <-pt.C:
			n.leave(key, w)
			return v, nil
		case <-total.C:
			n.leave(key, w)
			return v, nil
		case <-ctx.Done():
			n.leave(key, w)
			return Verdict{}, ctx.Err()
		}
		if tt != nil {
			tt.Stop()
		}
		n.leave(key, w)
	}
}

// Notifier wakes the attempts of this process waiting for a slot of a key
// when one is given back or a failure is recorded. The zero value is ready
// to use. A Counter kept in a store holds one, so that attempts waiting on
// the same instance wake at once rather than at their next poll.
type Notifier struct {
	mu sync.Mutex
	m  map[string]*waitList
}

// waitList is the waiters of one key: ch is closed to wake them all.
type waitList struct {
	ch chan struct{}
	n  int
}

// join registers a waiter for key. Register before looking at the count,
// so a wake-up in between is not lost.
func (n *Notifier) join(key string) *waitList {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = make(map[string]*waitList)
	}
	w := n.m[key]
	if w == nil {
		w = &waitList{ch: make(chan struct{})}
		n.m[key] = w
	}
	w.n++
	return w
}

// leave unregisters a waiter that joined w.
func (n *Notifier) leave(key string, w *waitList) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w.n--
	if w.n == 0 && n.m[key] == w {
		delete(n.m, key)
	}
}

// Wake wakes every attempt waiting for a slot of key.
func (n *Notifier) Wake(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.m[key]; w != nil {
		close(w.ch)
		delete(n.m, key)
	}
}

// WakeAll wakes every waiting attempt.
func (n *Notifier) WakeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, w := range n.m {
		close(w.ch)
		delete(n.m, k)
	}
}

// Waiting returns the number of attempts waiting for a slot of key.
func (n *Notifier) Waiting(key string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.m[key]; w != nil {
		return w.n
	}
	return 0
}
