package password

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// ErrBusy is returned when a bcrypt computation could not start because the
// Gate stayed full until the caller's context ended or the gate's wait limit
// passed. It is a technical failure, not a verdict on the password: a web
// handler should answer 503 with Retry-After, never 401. When the context
// ended, the returned error also wraps ctx.Err(). It says so by behaviour:
// its Unavailable method reports true (see refusal.ReplyTo).
var ErrBusy error = busyError{}

type busyError struct{}

func (busyError) Error() string {
	return "password: too many password checks at once, try again shortly"
}

// Unavailable reports that the check could not be made for now.
func (busyError) Unavailable() bool { return true }

// DefaultGateWait is how long Gate.Do waits for a free slot, at most, when
// the gate was made by NewGate: long enough to ride out a burst of honest
// logins (an office of twenty people signing in at once needs twenty
// cost-12 checks, about 5 s on one slot of a quiet machine, so twice that),
// short enough that a flood of guesses is refused instead of piling up
// goroutines (the throttle already holds each address to its
// max_failures attempts in flight).
const DefaultGateWait = 10 * time.Second

// Gate caps how many bcrypt computations run at once, so that a flood of
// password guesses cannot occupy every CPU and starve the other requests
// (listing and downloading backups, health checks). Callers over the cap
// wait in Do, bounded by their context and the gate's wait limit.
//
// One Gate is meant to be shared by every Verifier of a process. It does not
// queue fairly (waiters are served in no particular order) and does not
// interrupt a computation that has started: bcrypt cannot be cancelled.
type Gate struct {
	slots   chan struct{}
	maxWait time.Duration
}

// DefaultGateSize is the number of slots of a gate made with n <= 0: half of
// GOMAXPROCS, at least one. On a two-core machine one core computes bcrypt
// while the other stays free for everything else; on one core, bcrypt still
// gets its single slot.
func DefaultGateSize() int {
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// NewGate returns a gate with n slots (n <= 0 means DefaultGateSize) and
// the wait limit DefaultGateWait.
func NewGate(n int) *Gate {
	return NewGateWait(n, DefaultGateWait)
}

// NewGateWait is NewGate with an explicit wait limit; maxWait <= 0 means
// DefaultGateWait, so that waiting is always bounded.
func NewGateWait(n int, maxWait time.Duration) *Gate {
	if n <= 0 {
		n = DefaultGateSize()
	}
	if maxWait <= 0 {
		maxWait = DefaultGateWait
	}
	return &Gate{slots: make(chan struct{}, n), maxWait: maxWait}
}

// Size returns the number of computations the gate lets run at once.
func (g *Gate) Size() int { return cap(g.slots) }

// Do runs fn once a slot is free and returns nil after fn returns. If no
// slot frees before ctx ends or the wait limit passes, it returns an error
// wrapping ErrBusy (and ctx.Err() when the context ended) without running
// fn. A context that has already ended is refused at once, so no CPU is
// spent for a caller who has gone.
func (g *Gate) Do(ctx context.Context, fn func()) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.maxWait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrBusy, ctx.Err())
		case <-t.C:
			return ErrBusy
		}
	}
	defer func() { <-g.slots }()
	fn()
	return nil
}
