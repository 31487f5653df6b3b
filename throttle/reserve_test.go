package throttle

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func TestReserveHoldsUnderConcurrency(t *testing.T) {
	c := newClock()
	l := New(Options{Max: 5, Window: time.Minute, Now: c.Now})
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, no   int
		barrier  = make(chan struct{})
		verdicts []Verdict
	)
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-barrier
			v := l.Reserve("k")
			mu.Lock()
			defer mu.Unlock()
			if v.OK {
				ok++
				verdicts = append(verdicts, v)
			} else {
				no++
			}
		}()
	}
	close(barrier)
	wg.Wait()
	if ok != 5 || no != 95 {
		t.Fatalf("%d attempts went ahead and %d were refused; want 5 and 95", ok, no)
	}
	first := 0
	for range 3 {
		if v := l.Reserve("k"); v.FirstRefusal {
			first++
		}
	}
	if first != 0 {
		t.Fatal("FirstRefusal must be reported once per block")
	}
}

func TestReserveRelease(t *testing.T) {
	c := newClock()
	l := New(Options{Max: 3, Window: time.Minute, Now: c.Now})
	// Successes taken back are never held against the key.
	for range 10 {
		v := l.Reserve("k")
		if !v.OK {
			t.Fatal("a key whose attempts all succeed was blocked")
		}
		l.Release(v)
	}
	// Two failures, then a success whose reservation would have blocked
	// the key: the release lifts that block, the two failures stay.
	l.Reserve("k")
	l.Reserve("k")
	v := l.Reserve("k")
	if ok, _ := l.Allow("k"); ok {
		t.Fatal("the third reservation must block while in flight")
	}
	l.Release(v)
	if ok, _ := l.Allow("k"); !ok {
		t.Fatal("releasing the reservation that blocked must lift the block")
	}
	if v := l.Reserve("k"); !v.OK {
		t.Fatal("after the release one more attempt may go ahead")
	}
	if v := l.Reserve("k"); v.OK || !v.FirstRefusal {
		t.Fatalf("the failures before the success still count: %+v", v)
	}
}

func TestBlockEndedAndClear(t *testing.T) {
	c := newClock()
	l := New(Options{Max: 2, Window: time.Minute, Now: c.Now})
	l.Reserve("k")
	l.Reserve("k")
	for i := range 4 {
		if v := l.Reserve("k"); v.OK || v.FirstRefusal != (i == 0) {
			t.Fatalf("refusal %d: %+v", i, v)
		}
	}
	c.Advance(time.Hour)
	if v := l.Reserve("k"); !v.OK || v.BlockEnded != 4 {
		t.Fatalf("after the block: %+v, want BlockEnded 4", v)
	}
	l.Reserve("other")
	l.Reserve("other")
	l.Reserve("k")
	if n := l.ClearBlocks(); n != 2 {
		t.Fatalf("ClearBlocks = %d, want 2", n)
	}
	if ok, _ := l.Allow("k"); !ok {
		t.Fatal("a cleared key is still blocked")
	}
}

// TestFloodCannotLiftABlock fills a full table with new keys: the blocked
// key stays blocked, clean keys are forgotten instead, and the flood is
// signalled once.
func TestFloodCannotLiftABlock(t *testing.T) {
	c := newClock()
	full := 0
	l := New(Options{Max: 2, Window: time.Hour, MaxKeys: 100, Now: c.Now, OnFull: func() { full++ }})
	l.Reserve("attacker")
	l.Reserve("attacker")
	if ok, _ := l.Allow("attacker"); ok {
		t.Fatal("not blocked")
	}
	for i := range 10_000 {
		l.Reserve(fmt.Sprintf("flood-%d", i))
	}
	if ok, _ := l.Allow("attacker"); ok {
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
