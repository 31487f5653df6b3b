package throttle

import (
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
