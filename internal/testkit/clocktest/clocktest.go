// Package clocktest gives tests a clock that moves only when told to, so
// expiry, throttling and timeouts are tested without sleeping.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a settable clock, safe for concurrent use. Pass its Now method
// wherever a package takes an injectable clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a Clock showing t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
