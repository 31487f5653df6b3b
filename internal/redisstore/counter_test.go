package redisstore

import (
	"context"
	"fmt"
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

// TestCounterCheckFromCache: a check of a key never blocked is answered
// from the client-side cache (Redis runs no script for it); a block is
// seen at once by the instance that set it and, with Redis's
// invalidation, by an instance whose cache held the key unblocked; a
// refusal is recorded and the block's end reported as before.
func TestCounterCheckFromCache(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	a, b := open(t, srv.Config(), nil), open(t, srv.Config(), nil)
	clock := clocktest.New(time.Now().Add(time.Hour).Truncate(time.Millisecond))
	o := throttle.Options{Max: 2, Window: time.Minute, Block: 10 * time.Minute, Wait: -1}
	ka, kb := a.Counter("token.addr", o).(*Counter), b.Counter("token.addr", o).(*Counter)
	ka.now, kb.now = clock.Now, clock.Now
	ctx := context.Background()
	const addr = "192.0.2.7"

	scripts := func() int {
		t.Helper()
		info, err := a.rd().Do(ctx, a.rd().B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:calls="); ok {
				fmt.Sscan(strings.SplitN(rest, ",", 2)[0], &n)
			}
		}
		return n
	}
	check := func(k *Counter, what string) throttle.Verdict {
		t.Helper()
		v, err := k.Check(ctx, addr)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}

	for _, k := range []*Counter{ka, kb, ka, kb} {
		if v := check(k, "unblocked"); !v.OK {
			t.Fatalf("unblocked: %+v", v)
		}
	}
	before := scripts()
	for range 10 {
		if v := check(kb, "unblocked, cached"); !v.OK {
			t.Fatalf("unblocked, cached: %+v", v)
		}
	}
	if n := scripts() - before; n != 0 {
		t.Fatalf("10 checks of an unblocked key ran %d scripts; want 0 (the cache answers)", n)
	}

	// One failure, below the limit: still answered OK.
	v, err := ka.Acquire(ctx, addr)
	if err != nil || !v.OK {
		t.Fatalf("first attempt: %+v, %v", v, err)
	}
	if _, err := ka.Fail(ctx, v.Slot); err != nil {
		t.Fatal(err)
	}
	if v := check(ka, "one failure"); !v.OK {
		t.Fatalf("one failure: %+v", v)
	}
	// The second blocks: the instance that recorded it refuses at once,
	// the other once Redis's invalidation has reached its cache.
	v, err = ka.Acquire(ctx, addr)
	if err != nil || !v.OK {
		t.Fatalf("second attempt: %+v, %v", v, err)
	}
	if blocked, err := ka.Fail(ctx, v.Slot); err != nil || !blocked {
		t.Fatalf("second failure: blocked %v, %v", blocked, err)
	}
	if v := check(ka, "blocked, this instance"); v.OK || !v.FirstRefusal || v.RetryAfter < 9*time.Minute {
		t.Fatalf("blocked, on the instance that blocked: %+v; want refused for about 10 minutes, first refusal", v)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := check(kb, "blocked, other instance")
		if !v.OK {
			if v.FirstRefusal {
				t.Fatalf("other instance: %+v; the refusal is not the first", v)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the other instance still admits the address 5 s after the block: its cache was not invalidated")
		}
		time.Sleep(time.Millisecond)
	}
	// The block ends: reported once, then the key is clear again.
	clock.Advance(10*time.Minute + 30*time.Second)
	if v := check(kb, "block over"); !v.OK || v.BlockEnded != 2 {
		t.Fatalf("block over: %+v; want OK with the 2 refusals reported", v)
	}
	if v := check(ka, "block over, again"); !v.OK || v.BlockEnded != 0 {
		t.Fatalf("block over, again: %+v; want OK, nothing more to report", v)
	}
}
