package catalog

import (
	"context"
	"io"
	"time"
)

// limiter is a token bucket over bytes: reads may run ahead of rate by
// at most burst bytes, then wait. A zero rate waits never.
type limiter struct {
	rate   float64 // bytes per second; 0: unlimited
	burst  float64
	tokens float64
	last   time.Time
	clock  func() time.Time
	sleep  func(context.Context, time.Duration) error
}

// minBurst is the least a bucket holds: one piece of a read.
const minBurst = 64 << 10

// newLimiter returns a bucket of rate bytes per second, full, over clock
// and sleep (nil: the real ones).
func newLimiter(rate int64, clock func() time.Time, sleep func(context.Context, time.Duration) error) *limiter {
	if clock == nil {
		clock = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	l := &limiter{rate: float64(rate), clock: clock, sleep: sleep}
	l.burst = max(l.rate/10, minBurst)
	l.tokens = l.burst
	l.last = clock()
	return l
}

func (l *limiter) now() time.Time { return l.clock() }

// take spends n bytes, waiting until the bucket holds them.
func (l *limiter) take(ctx context.Context, n int) error {
	if l.rate <= 0 {
		return nil
	}
	now := l.clock()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	if l.tokens >= 0 {
		return nil
	}
	return l.sleep(ctx, time.Duration(-l.tokens/l.rate*float64(time.Second)))
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// limitedReader reads r in pieces of at most minBurst bytes, each paid
// for in lim before the next, and tells read of each.
type limitedReader struct {
	ctx  context.Context
	r    io.Reader
	lim  *limiter
	read func(int)
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > minBurst {
		p = p[:minBurst]
	}
	n, err := l.r.Read(p)
	if n > 0 {
		if l.read != nil {
			l.read(n)
		}
		if werr := l.lim.take(l.ctx, n); werr != nil {
			return n, werr
		}
	}
	return n, err
}
