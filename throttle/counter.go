package throttle

import "context"

// Counter is where failures are counted: in this process (Local) or in a
// store several instances share. Its methods are those of Limiter, with a
// context and an error, since a shared store can fail to answer; a caller
// that gets an error refuses the attempt (fail closed) rather than letting
// it through uncounted.
type Counter interface {
	// Reserve counts an attempt by key ahead of its check (see
	// Limiter.Reserve).
	Reserve(ctx context.Context, key string) (Verdict, error)
	// Release takes back the attempt of a verdict that succeeded (see
	// Limiter.Release).
	Release(ctx context.Context, v Verdict) error
	// Reset forgets key entirely (see Limiter.Reset).
	Reset(ctx context.Context, key string) error
	// ClearBlocks lifts every block and returns how many (see
	// Limiter.ClearBlocks).
	ClearBlocks(ctx context.Context) (int, error)
}

// Local returns l as a Counter: counting in this process, never failing.
// A nil l allows everything.
func Local(l *Limiter) Counter { return local{l} }

type local struct{ l *Limiter }

func (c local) Reserve(_ context.Context, key string) (Verdict, error) { return c.l.Reserve(key), nil }

func (c local) Release(_ context.Context, v Verdict) error {
	c.l.Release(v)
	return nil
}

func (c local) Reset(_ context.Context, key string) error {
	c.l.Reset(key)
	return nil
}

func (c local) ClearBlocks(context.Context) (int, error) { return c.l.ClearBlocks(), nil }
