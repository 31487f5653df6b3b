// Package throttletest checks a throttle.Counter against a reference model
// of the counting rules, driving random interleavings of attempts taking
// slots, verdicts, resets, clears and clock steps. The in-memory Limiter
// and the Redis counter are both run through it, so that they count alike.
package throttletest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// Model is the reference: the rules of package throttle written as
// plainly as possible, one key at a time, no shards, lists or eviction.
// Times are durations since the start.
type Model struct {
	Max                    int
	Interval, Window       time.Duration
	Block, MaxBlock, Lease time.Duration // Lease 0: slots never expire
	keys                   map[string]*modelKey
}

type modelKey struct {
	tat, blocked, forget time.Duration
	strikes, refused     int
	slots                map[int]time.Duration // attempt in flight -> lease end
}

func (m *Model) key(k string) *modelKey {
	if m.keys == nil {
		m.keys = map[string]*modelKey{}
	}
	mk := m.keys[k]
	if mk == nil {
		mk = &modelKey{slots: map[int]time.Duration{}}
		m.keys[k] = mk
	}
	return mk
}

// live drops expired slots and, past forget, the key's counts.
func (m *Model) live(mk *modelKey, now time.Duration) {
	for id, end := range mk.slots {
		if m.Lease > 0 && now >= end {
			delete(mk.slots, id)
		}
	}
	if now >= mk.forget {
		mk.tat, mk.blocked, mk.forget, mk.strikes, mk.refused = 0, 0, 0, 0, 0
	}
}

func (m *Model) check(mk *modelKey, now time.Duration) throttle.Verdict {
	m.live(mk, now)
	if now < mk.blocked {
		mk.refused++
		return throttle.Verdict{RetryAfter: mk.blocked - now, FirstRefusal: mk.refused == 1}
	}
	v := throttle.Verdict{OK: true, BlockEnded: mk.refused}
	mk.refused = 0
	return v
}

// Check is Counter.Check.
func (m *Model) Check(k string, now time.Duration) throttle.Verdict { return m.check(m.key(k), now) }

// Acquire is Counter.Acquire without waiting; id names the slot taken.
func (m *Model) Acquire(k string, id int, now time.Duration) throttle.Verdict {
	mk := m.key(k)
	v := m.check(mk, now)
	if !v.OK {
		return v
	}
	failures := 0
	if mk.tat > now {
		failures = int((mk.tat - now + m.Interval - 1) / m.Interval)
	}
	if failures+len(mk.slots) < m.Max {
		mk.slots[id] = now + m.Lease
		return v
	}
	v.OK, v.Busy = false, true
	if len(mk.slots) >= m.Max {
		v.RetryAfter = time.Second
	} else {
		v.RetryAfter = mk.tat - now - time.Duration(m.Max-1-len(mk.slots))*m.Interval
	}
	return v
}

// Release is Counter.Release of slot id.
func (m *Model) Release(k string, id int, now time.Duration) {
	mk := m.key(k)
	m.live(mk, now)
	delete(mk.slots, id)
}

// Fail is Counter.Fail of slot id: a recorded failure, even when the slot's
// lease ran out, unless the key is blocked.
func (m *Model) Fail(k string, id int, now time.Duration) (blocked bool) {
	mk := m.key(k)
	m.live(mk, now)
	delete(mk.slots, id)
	if now < mk.blocked {
		return false
	}
	mk.tat = max(mk.tat, now) + m.Interval
	if mk.tat-now > time.Duration(m.Max-1)*m.Interval {
		mk.strikes++
		d := m.Block
		for i := 1; i < mk.strikes && d < m.MaxBlock; i++ {
			d *= 2
		}
		mk.blocked, mk.tat, blocked = now+min(d, m.MaxBlock), now, true
	}
	mk.forget = max(mk.tat, mk.blocked) + m.Window
	return blocked
}

// Reset is Counter.Reset: counts and blocks go, slots stay.
func (m *Model) Reset(k string) {
	mk := m.key(k)
	mk.tat, mk.blocked, mk.forget, mk.strikes, mk.refused = 0, 0, 0, 0, 0
}

// Clear is Counter.Clear.
func (m *Model) Clear(now time.Duration) int {
	n := 0
	for k := range m.keys {
		if now < m.keys[k].blocked {
			n++
		}
		m.Reset(k)
	}
	return n
}

// InFlight is the number of live slots of k.
func (m *Model) InFlight(k string, now time.Duration) int {
	mk := m.key(k)
	m.live(mk, now)
	return len(mk.slots)
}

// Options are the throttle options the model is run with: small numbers
// so that blocks, drains and backoff all happen within a few hundred
// steps. Subjects must be built with them (Wait -1: Acquire never waits).
func Options(clock *clocktest.Clock) throttle.Options {
	return throttle.Options{Max: 3, Window: 3 * time.Second, Block: 5 * time.Second, MaxBlock: 20 * time.Second, Wait: -1, Now: clock.Now}
}

// Run drives steps random operations against c and the model (built from
// o, with lease the subject's slot lease, 0 for none) and fails t at the
// first difference. inflight, when not nil, reports the subject's own count
// of live slots of a key, compared too.
func Run(t *testing.T, c throttle.Counter, clock *clocktest.Clock, o throttle.Options, lease time.Duration, seed uint64, steps int, inflight func(key string) int) {
	t.Helper()
	ctx := context.Background()
	m := &Model{Max: o.Max, Interval: o.Window / time.Duration(o.Max), Window: o.Window, Block: o.Block, MaxBlock: o.MaxBlock, Lease: lease}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	start := clock.Now()
	now := func() time.Duration { return clock.Now().Sub(start) }
	keys := []string{"192.0.2.1", "alice", "2001:db8::/64"}
	type held struct {
		key  string
		id   int
		slot throttle.Slot
	}
	var (
		slots  []held
		nextID int
		log    []string
	)
	fail := func(format string, args ...any) {
		t.Helper()
		from := max(0, len(log)-15)
		t.Fatalf("seed %d, step %d: %s\nlast steps:\n  %s", seed, len(log), fmt.Sprintf(format, args...), fmt.Sprint(log[from:]))
	}
	steps_ := []time.Duration{time.Millisecond, 250 * time.Millisecond, time.Second, 1500 * time.Millisecond, 5 * time.Second, lease + time.Millisecond}
	for range steps {
		k := keys[rng.IntN(len(keys))]
		switch op := rng.IntN(100); {
		case op < 35:
			nextID++
			want := m.Acquire(k, nextID, now())
			got, err := c.Acquire(ctx, k)
			log = append(log, fmt.Sprintf("acquire %s=%+v", k, got))
			if err != nil {
				fail("Acquire(%s): %v", k, err)
			}
			if got.OK {
				slots = append(slots, held{k, nextID, got.Slot})
			}
			got.Slot = throttle.Slot{}
			if got != want {
				fail("Acquire(%s) = %+v, model %+v", k, got, want)
			}
		case op < 55 && len(slots) > 0:
			i := rng.IntN(len(slots))
			h := slots[i]
			slots = append(slots[:i], slots[i+1:]...)
			log = append(log, "release "+h.key)
			m.Release(h.key, h.id, now())
			if err := c.Release(ctx, h.slot); err != nil {
				fail("Release: %v", err)
			}
		case op < 75 && len(slots) > 0:
			i := rng.IntN(len(slots))
			h := slots[i]
			slots = append(slots[:i], slots[i+1:]...)
			want := m.Fail(h.key, h.id, now())
			got, err := c.Fail(ctx, h.slot)
			log = append(log, fmt.Sprintf("fail %s blocked=%v", h.key, got))
			if err != nil || got != want {
				fail("Fail(%s) = %v, %v; model %v", h.key, got, err, want)
			}
		case op < 82:
			want := m.Check(k, now())
			got, err := c.Check(ctx, k)
			log = append(log, fmt.Sprintf("check %s=%+v", k, got))
			if err != nil || got != want {
				fail("Check(%s) = %+v, %v; model %+v", k, got, err, want)
			}
		case op < 85:
			m.Reset(k)
			log = append(log, "reset "+k)
			if err := c.Reset(ctx, k); err != nil {
				fail("Reset: %v", err)
			}
		case op < 87:
			want := m.Clear(now())
			got, err := c.Clear(ctx)
			log = append(log, fmt.Sprintf("clear=%d", got))
			if err != nil || got != want {
				fail("Clear = %d, %v; model %d", got, err, want)
			}
		default:
			d := steps_[rng.IntN(len(steps_))]
			if lease == 0 && d > 5*time.Second {
				d = time.Millisecond
			}
			clock.Advance(d)
			log = append(log, "advance "+d.String())
		}
		if inflight != nil {
			for _, k := range keys {
				if got, want := inflight(k), m.InFlight(k, now()); got != want {
					fail("%s: %d attempts in flight, model %d", k, got, want)
				}
			}
		}
	}
}
