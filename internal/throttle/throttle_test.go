package throttle

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

// fakeClock is an injectable clock that moves only when told.
type fakeClock = clocktest.Clock

func newClock() *fakeClock { return clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) }

// step is one action in a scripted test: advance the clock, record some
// failures or a reset, then check allow.
type step struct {
	advance   time.Duration
	fails     int
	reset     bool
	wantOK    bool
	wantRetry time.Duration
}

func runSteps(t *testing.T, o Options, steps []step) {
	t.Helper()
	clock := newClock()
	o.Now = clock.Now
	l := New(o)
	for i, s := range steps {
		clock.Advance(s.advance)
		if s.reset {
			l.Reset("k")
		}
		for range s.fails {
			l.record("k")
		}
		ok, retry := l.allow("k")
		if ok != s.wantOK || retry != s.wantRetry {
			t.Fatalf("step %d: allow = %v, %v; want %v, %v", i, ok, retry, s.wantOK, s.wantRetry)
		}
	}
}

func TestLimiter(t *testing.T) {
	const m = time.Minute
	tests := []struct {
		name  string
		opts  Options
		steps []step
	}{
		{"fresh key allowed", Options{}, []step{
			{wantOK: true},
		}},
		{"blocks at Max with exact Retry-After", Options{}, []step{
			{fails: 9, wantOK: true},
			{fails: 1, wantOK: false, wantRetry: 15 * m},
			{advance: 5 * m, wantOK: false, wantRetry: 10 * m},
			{advance: 10*m - time.Nanosecond, wantOK: false, wantRetry: time.Nanosecond},
			{advance: time.Nanosecond, wantOK: true},
		}},
		{"count drains: a burst is forgotten after Window", Options{}, []step{
			{fails: 9, wantOK: true},
			{advance: 15 * m, fails: 9, wantOK: true},
			{fails: 1, wantOK: false, wantRetry: 15 * m},
		}},
		{"count drains one failure per Window/Max", Options{}, []step{
			{fails: 9, wantOK: true},
			{advance: 3 * m, fails: 2, wantOK: true}, // 90 s each: 9-2+2 = 9
			{fails: 1, wantOK: false, wantRetry: 15 * m},
		}},
		{"a trickle slower than Max per Window never blocks", Options{Max: 3, Window: 3 * m}, []step{
			{fails: 2, wantOK: true},
			{advance: m, fails: 1, wantOK: true},
			{advance: m, fails: 1, wantOK: true},
			{advance: m, fails: 1, wantOK: true},
			{advance: m, fails: 1, wantOK: true},
		}},
		{"failures while blocked do not extend it", Options{}, []step{
			{fails: 10, wantOK: false, wantRetry: 15 * m},
			{advance: 14 * m, fails: 50, wantOK: false, wantRetry: m},
			{advance: m, wantOK: true},
		}},
		{"backoff doubles then caps", Options{Max: 1, Window: m, Block: 10 * m, MaxBlock: 35 * m}, []step{
			{fails: 1, wantOK: false, wantRetry: 10 * m},
			{advance: 10 * m, fails: 1, wantOK: false, wantRetry: 20 * m},
			{advance: 20 * m, fails: 1, wantOK: false, wantRetry: 35 * m},
			{advance: 35 * m, fails: 1, wantOK: false, wantRetry: 35 * m},
		}},
		{"backoff forgotten after a quiet Window", Options{Max: 1, Window: m, Block: 10 * m}, []step{
			{fails: 1, wantOK: false, wantRetry: 10 * m},
			{advance: 11 * m, fails: 1, wantOK: false, wantRetry: 10 * m},
		}},
		{"backoff kept within the quiet Window", Options{Max: 1, Window: m, Block: 10 * m}, []step{
			{fails: 1, wantOK: false, wantRetry: 10 * m},
			{advance: 11*m - time.Nanosecond, fails: 1, wantOK: false, wantRetry: 20 * m},
		}},
		{"Reset unblocks and forgets backoff", Options{Max: 2}, []step{
			{fails: 2, wantOK: false, wantRetry: 15 * m},
			{reset: true, wantOK: true},
			{fails: 1, wantOK: true},
			{fails: 1, wantOK: false, wantRetry: 15 * m},
		}},
		{"Reset of an unknown key", Options{}, []step{
			{reset: true, wantOK: true},
		}},
		{"Block defaults to a custom Window", Options{Max: 1, Window: 2 * m}, []step{
			{fails: 1, wantOK: false, wantRetry: 2 * m},
		}},
		{"MaxBlock below Block means no backoff", Options{Max: 1, Block: 5 * m, MaxBlock: m}, []step{
			{fails: 1, wantOK: false, wantRetry: 5 * m},
			{advance: 5 * m, fails: 1, wantOK: false, wantRetry: 5 * m},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.opts, tt.steps) })
	}
}

func TestDefaults(t *testing.T) {
	l := New(Options{Max: -1, Window: -1, Block: -1, MaxBlock: -1, MaxKeys: -1})
	if l.max != DefaultMax || l.window != DefaultWindow || l.block != DefaultBlock ||
		l.maxBlock != DefaultMaxBlock || l.perShard*len(l.shards) != DefaultMaxKeys {
		t.Fatalf("defaults: max %d window %v block %v maxBlock %v keys %d",
			l.max, l.window, l.block, l.maxBlock, l.perShard*len(l.shards))
	}
	huge := New(Options{Max: 1, Window: 1 << 62, Block: 1 << 62, MaxBlock: 1 << 62})
	if huge.window != longest || huge.block != longest || huge.maxBlock != longest {
		t.Fatal("huge durations are not capped")
	}
	huge.record("k")
	if ok, retry := huge.allow("k"); ok || retry <= 0 {
		t.Fatalf("huge settings: allow = %v, %v", ok, retry)
	}
}

func TestKeysAreIndependent(t *testing.T) {
	l := New(Options{Max: 1})
	l.record("ip:192.0.2.1")
	if ok, _ := l.allow("ip:192.0.2.1"); ok {
		t.Fatal("failed key allowed")
	}
	if ok, _ := l.allow("ip:192.0.2.2"); !ok {
		t.Fatal("other key blocked")
	}
	long := strings.Repeat("a", 500)
	l.record(long + "1")
	if ok, _ := l.allow(long + "2"); !ok {
		t.Fatal("long keys sharing a prefix share a count")
	}
	if ok, _ := l.allow(long + "1"); ok {
		t.Fatal("long key not tracked")
	}
}

func TestMaxKeys(t *testing.T) {
	for _, maxKeys := range []int{1, 100, 5000} {
		t.Run(fmt.Sprint(maxKeys), func(t *testing.T) {
			clock := newClock()
			l := New(Options{Max: 1, MaxKeys: maxKeys, Now: clock.Now})
			const keys = 20000
			for i := range keys {
				l.record(fmt.Sprint("k", i))
				clock.Advance(time.Millisecond)
			}
			if n := l.Len(); n > maxKeys || n == 0 {
				t.Fatalf("tracking %d keys, bound %d", n, maxKeys)
			}
			if ok, _ := l.allow(fmt.Sprint("k", keys-1)); ok {
				t.Fatal("the most recent key was evicted")
			}
			if ok, _ := l.allow("k0"); !ok {
				t.Fatal("the oldest key survived past the bound")
			}
		})
	}
}

func TestExpiredKeysDropped(t *testing.T) {
	clock := newClock()
	l := New(Options{Max: 5, Window: time.Minute, MaxKeys: 1000, Now: clock.Now})
	for i := range 100 {
		l.record(fmt.Sprint("old", i))
	}
	clock.Advance(2 * time.Minute)
	for i := range 100 {
		l.record(fmt.Sprint("new", i))
	}
	if n := l.Len(); n > 100 {
		t.Fatalf("tracking %d keys; expired ones were not dropped", n)
	}
}

func TestNilLimiter(t *testing.T) {
	var l *Limiter
	l.record("k")
	l.Reset("k")
	if ok, retry := l.allow("k"); !ok || retry != 0 || l.Len() != 0 {
		t.Fatal("a nil Limiter must allow everything")
	}
}

func TestConcurrentUse(t *testing.T) {
	clock := newClock()
	l := New(Options{Max: 5, MaxKeys: 2048, Now: clock.Now})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				key := fmt.Sprint("k", (g*7+i)%300)
				switch i % 5 {
				case 0:
					l.Reset(key)
				case 1:
					clock.Advance(time.Second)
				default:
					if ok, _ := l.allow(key); ok {
						l.record(key)
					}
				}
			}
		})
	}
	wg.Wait()
	if n := l.Len(); n > 300 {
		t.Fatalf("tracking %d keys, only 300 were used", n)
	}
	for i := range l.shards {
		checkList(t, &l.shards[i])
	}
}

// checkList verifies that a shard's lists and map hold the same entries.
func checkList(t *testing.T, s *shard) {
	t.Helper()
	n := 0
	for i := range s.lists {
		var prev *entry
		for e := s.lists[i].head; e != nil; e = e.next {
			if e.prev != prev || s.entries[e.key] != e || e.inBlocked != (i == 1) || !e.listed {
				t.Fatal("shard list is inconsistent")
			}
			prev, n = e, n+1
		}
		if prev != s.lists[i].tail {
			t.Fatal("shard list tail is inconsistent")
		}
	}
	if n != len(s.entries) {
		t.Fatalf("lists hold %d entries, map %d", n, len(s.entries))
	}
}

// TestBlocksWithRealClock makes Max failures in quick succession on the
// real clock: the nanoseconds between them must not keep the key unblocked.
func TestBlocksWithRealClock(t *testing.T) {
	l := New(Options{Max: 3, Window: 10 * time.Minute})
	for range 3 {
		if ok, _ := l.allow("k"); !ok {
			t.Fatal("blocked too early")
		}
		l.record("k")
	}
	if ok, wait := l.allow("k"); ok || wait <= 0 {
		t.Fatalf("not blocked after Max failures: ok=%v wait=%v", ok, wait)
	}
}
