package throttle

import (
	"context"
	"sync/atomic"
)

// Swap is a Counter whose counter can be replaced while it is in use: a
// reload of the configuration that changes the limits puts a new counter
// in place (Set), which starts with no count and no block, as a reload
// leaves every counter anyway. A slot goes back to the counter that gave
// it, so attempts in flight during the change settle where they started.
// It is safe for concurrent use.
type Swap struct {
	cur atomic.Pointer[swapped]
}

type swapped struct{ c Counter }

// NewSwap returns a Swap counting with c.
func NewSwap(c Counter) *Swap {
	s := &Swap{}
	s.Set(c)
	return s
}

// Set makes c the counter of every attempt that starts from now on.
func (s *Swap) Set(c Counter) { s.cur.Store(&swapped{c}) }

// Current returns the counter in use.
func (s *Swap) Current() Counter { return s.cur.Load().c }

// Check asks the counter in use.
func (s *Swap) Check(ctx context.Context, key string) (Verdict, error) {
	return s.Current().Check(ctx, key)
}

// Acquire takes a slot of the counter in use; the slot remembers it.
func (s *Swap) Acquire(ctx context.Context, key string) (Verdict, error) {
	c := s.Current()
	v, err := c.Acquire(ctx, key)
	if v.Slot.Held() {
		v.Slot.from = c
	}
	return v, err
}

// Release gives sl back to the counter that gave it.
func (s *Swap) Release(ctx context.Context, sl Slot) error {
	return s.owner(sl).Release(ctx, sl)
}

// Fail records the failure of sl with the counter that gave it.
func (s *Swap) Fail(ctx context.Context, sl Slot) (bool, error) {
	return s.owner(sl).Fail(ctx, sl)
}

// Reset forgets key with the counter in use.
func (s *Swap) Reset(ctx context.Context, key string) error {
	return s.Current().Reset(ctx, key)
}

// Clear clears the counter in use.
func (s *Swap) Clear(ctx context.Context) (int, error) {
	return s.Current().Clear(ctx)
}

// owner is the counter that gave sl: the one in use when sl came from
// elsewhere.
func (s *Swap) owner(sl Slot) Counter {
	if sl.from != nil {
		return sl.from
	}
	return s.Current()
}
