package throttle

import "context"

// Counter is where attempts are counted: in this process (Local) or in a
// store several instances share. Its methods are those of Limiter, with a
// context and an error, since a shared store can fail to answer; a caller
// that gets an error refuses the attempt (fail closed) rather than letting
// it through uncounted.
//
// An attempt goes: Check (blocked?), then, unless it can be answered
// without a verdict (a cached verified credential), Acquire a slot, check
// the credentials, and Release the slot (success, or no verdict) or Fail
// it (a wrong credential).
type Counter interface {
	// Check reports whether key is blocked, taking no slot (see
	// Limiter.Check).
	Check(ctx context.Context, key string) (Verdict, error)
	// Acquire takes a slot of key for an attempt, waiting a bounded time
	// for one (see Limiter.Acquire).
	Acquire(ctx context.Context, key string) (Verdict, error)
	// Release gives back a slot (see Limiter.Release).
	Release(ctx context.Context, s Slot) error
	// Fail turns a slot into a recorded failure and reports whether that
	// blocked its key (see Limiter.Fail).
	Fail(ctx context.Context, s Slot) (blocked bool, err error)
	// Reset forgets key's failures and blocks (see Limiter.Reset).
	Reset(ctx context.Context, key string) error
	// Clear lifts every block and forgets every count, and returns how
	// many blocks it lifted (see Limiter.Clear).
	Clear(ctx context.Context) (int, error)
}

// Local returns l as a Counter: counting in this process, never failing
// (Acquire's error is its context's). A nil l allows everything.
func Local(l *Limiter) Counter { return local{l} }

type local struct{ l *Limiter }

func (c local) Check(_ context.Context, key string) (Verdict, error) { return c.l.Check(key), nil }

func (c local) Acquire(ctx context.Context, key string) (Verdict, error) {
	return c.l.Acquire(ctx, key)
}

func (c local) Release(_ context.Context, s Slot) error {
	c.l.Release(s)
	return nil
}

func (c local) Fail(_ context.Context, s Slot) (bool, error) { return c.l.Fail(s), nil }

func (c local) Reset(_ context.Context, key string) error {
	c.l.Reset(key)
	return nil
}

func (c local) Clear(context.Context) (int, error) { return c.l.Clear(), nil }

// LimiterOf returns the Limiter under a Counter made by Local, or nil:
// for tests and diagnostics.
func LimiterOf(c Counter) *Limiter {
	if sw, ok := c.(*Swap); ok {
		c = sw.Current()
	}
	if lc, ok := c.(local); ok {
		return lc.l
	}
	return nil
}
