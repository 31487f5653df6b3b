package redisstore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/testkit/throttletest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// TestCounterFollowsTheModel drives random interleavings of attempts
// taking slots, successes, failures, checks, resets, clears and clock
// steps (leases running out included) against the Redis counter, on a
// real redis-server, and against the reference model the in-memory
// Limiter is checked with.
func TestCounterFollowsTheModel(t *testing.T) {
	testCounterFollowsTheModel(t, redistest.Start(t, redistest.Options{}).Config())
}

func testCounterFollowsTheModel(t *testing.T, cfg redistest.Config) {
	c := open(t, cfg, nil)
	for seed := range uint64(12) {
		// Ahead of Redis's own clock, so that keys expire no earlier
		// than the counting says.
		clock := clocktest.New(time.Now().Add(time.Hour).Truncate(time.Millisecond))
		o := throttletest.Options(clock)
		k := c.Counter("model"+strings.Repeat("x", int(seed)), o).(*Counter)
		k.now = clock.Now
		throttletest.Run(t, k, clock, o, SlotLease, seed, 400, func(key string) int {
			n, err := k.InFlight(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			return n
		})
	}
}

// TestCounter: two clients stand for two instances; slots, failures,
// blocks and Clear are shared, and every key expires.
func TestCounter(t *testing.T) { testCounter(t, redistest.Start(t, redistest.Options{}).Config()) }

func testCounter(t *testing.T, cfg redistest.Config) {
	a, b := open(t, cfg, nil), open(t, cfg, nil)
	o := throttle.Options{Max: 4, Window: time.Minute, Block: 10 * time.Minute, Wait: -1}
	ca, cb := a.Counter("basic.addr", o), b.Counter("basic.addr", o)
	ctx := context.Background()
	var slots []throttle.Slot
	for i := range 4 {
		c := []throttle.Counter{ca, cb}[i%2]
		v, err := c.Acquire(ctx, "192.0.2.1")
		if err != nil || !v.OK {
			t.Fatalf("attempt %d: %+v, %v", i+1, v, err)
		}
		slots = append(slots, v.Slot)
	}
	// Four in flight on two instances: the fifth is busy, not refused.
	if v, err := cb.Acquire(ctx, "192.0.2.1"); err != nil || v.OK || !v.Busy {
		t.Fatalf("fifth attempt in flight: %+v, %v; want Busy", v, err)
	}
	for i, s := range slots {
		blocked, err := []throttle.Counter{ca, cb}[i%2].Fail(ctx, s)
		if err != nil || blocked != (i == 3) {
			t.Fatalf("failure %d: blocked %v, %v", i+1, blocked, err)
		}
	}
	v, err := ca.Check(ctx, "192.0.2.1")
	if err != nil || v.OK || v.Busy || v.RetryAfter < 9*time.Minute || !v.FirstRefusal {
		t.Fatalf("after four failures: %+v, %v; want refused for about 10 minutes, first refusal", v, err)
	}
	if v, _ := cb.Acquire(ctx, "192.0.2.1"); v.OK || v.FirstRefusal {
		t.Fatalf("other instance: %+v; want refused, not the first", v)
	}
	if v, _ := a.Counter("flask-login.addr", o).Acquire(ctx, "192.0.2.1"); !v.OK {
		t.Fatal("a counter of another name shares the block")
	}
	// Successes are given back whatever happened meanwhile.
	var held []throttle.Slot
	for range 3 {
		v, _ := ca.Acquire(ctx, "u")
		held = append(held, v.Slot)
	}
	if n, err := cb.Clear(ctx); err != nil || n != 1 {
		t.Fatalf("Clear = %d, %v; want 1", n, err)
	}
	for _, s := range held {
		if err := cb.Release(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := ca.(*Counter).InFlight(ctx, "u"); n != 0 {
		t.Fatalf("%d attempts still in flight after their successes", n)
	}
	if v, _ := ca.Check(ctx, "192.0.2.1"); !v.OK {
		t.Fatalf("after Clear: %+v", v)
	}
	// Every counter key expires.
	for k, d := range keys(t, a) {
		if d < 0 {
			t.Errorf("key %s does not expire", k)
		}
	}
	long := strings.Repeat("x", 500)
	if v, err := ca.Acquire(ctx, long); err != nil || !v.OK || len(v.Slot.Key) > maxKeyLen {
		t.Errorf("long key: %+v, %v", v, err)
	}
}

// TestCounterHoldsUnderConcurrency: 100 attempts at once on two instances
// take exactly Max slots; when they all fail, exactly one blocks.
func TestCounterHoldsUnderConcurrency(t *testing.T) {
	testCounterHoldsUnderConcurrency(t, redistest.Start(t, redistest.Options{}).Config())
}

func testCounterHoldsUnderConcurrency(t *testing.T, cfg redistest.Config) {
	o := throttle.Options{Max: 5, Window: time.Minute, Wait: -1}
	counters := []throttle.Counter{open(t, cfg, nil).Counter("x", o), open(t, cfg, nil).Counter("x", o)}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		slots []throttle.Slot
	)
	for i := range 100 {
		wg.Go(func() {
			v, err := counters[i%2].Acquire(context.Background(), "k")
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			if v.OK {
				slots = append(slots, v.Slot)
			} else if !v.Busy {
				t.Errorf("refused as if blocked: %+v", v)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(slots) != 5 {
		t.Fatalf("%d of 100 parallel attempts on two instances took a slot, want exactly 5", len(slots))
	}
	blocks := 0
	for i, s := range slots {
		if b, _ := counters[i%2].Fail(context.Background(), s); b {
			blocks++
		}
	}
	if blocks != 1 {
		t.Fatalf("%d failures started a block, want 1", blocks)
	}
}

// TestCounterWaits: an attempt waiting for a slot gets the one another
// instance gives back (by polling), and a lease of an instance that
// stopped runs out.
func TestCounterWaits(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	o := throttle.Options{Max: 1, Window: time.Minute, Wait: time.Minute}
	ca, cb := open(t, srv.Config(), nil).Counter("w", o), open(t, srv.Config(), nil).Counter("w", o)
	ctx := context.Background()
	held, _ := ca.Acquire(ctx, "k")
	got := make(chan throttle.Verdict)
	go func() {
		v, err := cb.Acquire(ctx, "k")
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	ca.Release(ctx, held.Slot)
	if v := <-got; !v.OK {
		t.Fatalf("the waiting attempt on the other instance: %+v", v)
	}
	// A crashed instance's slot: the lease runs out on the counter's clock.
	clock := clocktest.New(time.Now().Add(time.Hour))
	k := open(t, srv.Config(), nil).Counter("lease", throttle.Options{Max: 1, Window: time.Minute, Wait: -1}).(*Counter)
	k.now = clock.Now
	if v, _ := k.Acquire(ctx, "k"); !v.OK {
		t.Fatal(v)
	}
	if v, _ := k.Acquire(ctx, "k"); !v.Busy {
		t.Fatalf("second attempt: %+v, want Busy", v)
	}
	clock.Advance(SlotLease)
	if v, _ := k.Acquire(ctx, "k"); !v.OK {
		t.Fatalf("after the lease ran out: %+v", v)
	}
}
