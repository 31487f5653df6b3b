package throttle

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TestSlotsHoldUnderConcurrency: 100 attempts at once take at most Max
// slots; the others are Busy, not refused for failures; once the Max
// attempts in flight fail, the key is blocked and the first refusal is
// reported once.
func TestSlotsHoldUnderConcurrency(t *testing.T) {
	l := New(Options{Max: 5, Window: time.Minute, Wait: -1, Now: newClock().Now})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		slots   []Slot
		busy    int
		barrier = make(chan struct{})
	)
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-barrier
			v := l.TryAcquire("k")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case v.OK:
				slots = append(slots, v.Slot)
			case v.Busy && !v.FirstRefusal:
				busy++
			default:
				t.Errorf("refused as if blocked: %+v", v)
			}
		}()
	}
	close(barrier)
	wg.Wait()
	if len(slots) != 5 || busy != 95 {
		t.Fatalf("%d attempts took a slot and %d were busy; want 5 and 95", len(slots), busy)
	}
	if ok, _ := l.allow("k"); !ok {
		t.Fatal("attempts in flight blocked the key: only recorded failures may")
	}
	blocked := 0
	for _, s := range slots {
		if l.Fail(s) {
			blocked++
		}
	}
	if blocked != 1 || l.InFlight("k") != 0 {
		t.Fatalf("%d failures started a block (want 1), %d still in flight", blocked, l.InFlight("k"))
	}
	first := 0
	for range 3 {
		if v := l.TryAcquire("k"); v.OK || v.Busy {
			t.Fatalf("blocked key: %+v", v)
		} else if v.FirstRefusal {
			first++
		}
	}
	if first != 1 {
		t.Fatalf("FirstRefusal reported %d times, want once", first)
	}
}

// TestRightAttemptsNeverCount: bursts of attempts that all succeed leave
// the count at zero, and a success gives its slot back even when others'
// failures blocked the key or a Clear came in between.
func TestRightAttemptsNeverCount(t *testing.T) {
	l := New(Options{Max: 3, Window: time.Minute, Wait: -1, Now: newClock().Now})
	for range 10 {
		var held []Slot
		for range 3 {
			v := l.TryAcquire("k")
			if !v.OK {
				t.Fatalf("free key refused: %+v", v)
			}
			held = append(held, v.Slot)
		}
		for _, s := range held {
			l.Release(s)
		}
	}
	if n, f := l.InFlight("k"), l.Failures("k"); n != 0 || f != 0 {
		t.Fatalf("after bursts of successes: %d in flight, %d failures; want 0 and 0", n, f)
	}
	// Three in flight; two fail and one more... the third succeeds after
	// a Clear and after the key was blocked by others.
	a, b, c := l.TryAcquire("k").Slot, l.TryAcquire("k").Slot, l.TryAcquire("k").Slot
	l.Fail(a)
	l.Clear()
	l.Fail(b)
	l.Release(c)
	if n, f := l.InFlight("k"), l.Failures("k"); n != 0 || f != 1 {
		t.Fatalf("%d in flight and %d failures, want 0 and 1 (the failure after the clear)", n, f)
	}
	// Slots are never lost to eviction: a flood of new keys leaves the
	// attempt in flight counted.
	small := New(Options{Max: 2, Window: time.Hour, MaxKeys: 10, Wait: -1, Now: newClock().Now})
	s := small.TryAcquire("held").Slot
	for i := range 1000 {
		small.record(fmt.Sprint("flood-", i))
	}
	if small.InFlight("held") != 1 {
		t.Fatal("a flood of new keys forgot an attempt in flight")
	}
	small.Release(s)
	if small.InFlight("held") != 0 {
		t.Fatal("the slot was not given back")
	}
}

// TestAcquireWaits: with every slot taken by attempts in flight, Acquire
// waits for a verdict instead of refusing; it gives up Busy when none
// comes within Wait, and at once when its context ends.
func TestAcquireWaits(t *testing.T) {
	l := New(Options{Max: 2, Window: time.Minute, Wait: time.Minute, Now: newClock().Now})
	ctx := context.Background()
	a, _ := l.Acquire(ctx, "k")
	b, _ := l.Acquire(ctx, "k")
	got := make(chan Verdict)
	go func() {
		v, err := l.Acquire(ctx, "k")
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	for l.Waiting("k") == 0 {
		time.Sleep(time.Millisecond) // lining up, not timing
	}
	l.Release(a.Slot)
	c := <-got
	if !c.OK {
		t.Fatalf("the waiting attempt did not get the slot given back: %+v", c)
	}
	// A failure that blocks the key refuses waiters at once.
	go func() {
		v, _ := l.Acquire(ctx, "k")
		got <- v
	}()
	for l.Waiting("k") == 0 {
		time.Sleep(time.Millisecond)
	}
	l.Fail(b.Slot)
	l.Fail(c.Slot)
	if v := <-got; v.OK || v.Busy {
		t.Fatalf("took a slot of a full key: %+v", v)
	}
	// Context ended: the wait ends with its error.
	cctx, cancel := context.WithCancel(ctx)
	full := New(Options{Max: 1, Window: time.Minute, Wait: time.Minute, Now: newClock().Now})
	full.Acquire(ctx, "k")
	go func() {
		for full.Waiting("k") == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if _, err := full.Acquire(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire after the context ended: %v", err)
	}
	// Patience: no verdict within Wait, Busy with a Retry-After.
	short := New(Options{Max: 1, Window: time.Minute, Wait: 20 * time.Millisecond, Now: newClock().Now})
	short.Acquire(ctx, "k")
	if v, err := short.Acquire(ctx, "k"); err != nil || v.OK || !v.Busy || v.RetryAfter <= 0 {
		t.Fatalf("no verdict came: %+v, %v; want Busy with RetryAfter", v, err)
	}
}

func TestBlockEndedAndClear(t *testing.T) {
	c := newClock()
	l := New(Options{Max: 2, Window: time.Minute, Now: c.Now})
	l.record("k")
	l.record("k")
	for i := range 4 {
		if v := l.Check("k"); v.OK || v.FirstRefusal != (i == 0) {
			t.Fatalf("refusal %d: %+v", i, v)
		}
	}
	c.Advance(90 * time.Second)
	if v := l.Check("k"); !v.OK || v.BlockEnded != 4 {
		t.Fatalf("after the block: %+v, want BlockEnded 4", v)
	}
	l.record("other")
	l.record("other")
	l.record("k")
	if n := l.Clear(); n != 1 {
		t.Fatalf("Clear = %d, want 1", n)
	}
	if ok, _ := l.allow("other"); !ok || l.Failures("k") != 0 {
		t.Fatal("Clear must lift every block and forget every count")
	}
}

// TestFloodCannotLiftABlock fills a full table with new keys: the blocked
// key stays blocked, clean keys are forgotten instead, and the flood is
// signalled once.
func TestFloodCannotLiftABlock(t *testing.T) {
	c := newClock()
	full := 0
	l := New(Options{Max: 2, Window: time.Hour, MaxKeys: 100, Now: c.Now, OnFull: func() { full++ }})
	l.record("attacker")
	l.record("attacker")
	if ok, _ := l.allow("attacker"); ok {
		t.Fatal("not blocked")
	}
	for i := range 10_000 {
		l.record(fmt.Sprintf("flood-%d", i))
	}
	if ok, _ := l.allow("attacker"); ok {
		t.Fatal("a flood of new keys lifted the block")
	}
	if full != 1 {
		t.Fatalf("OnFull called %d times, want once", full)
	}
	if n := l.Len(); n > 100 {
		t.Fatalf("tracking %d keys, MaxKeys is 100", n)
	}
	checkList(t, &l.shards[0])
}
func TestAddrKey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
	} {
		if got := AddrKey(netip.MustParseAddr(tt.in)); got != tt.want {
			t.Errorf("AddrKey(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
