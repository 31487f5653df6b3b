package throttle

import (
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
)

// TestRate: a key gets PerKey begins, then waits one Window; other keys
// go on until the total is reached, which holds every key off and is
// told once.
func TestRate(t *testing.T) {
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	tripped := 0
	r := NewRate(RateOptions{PerKey: 3, Total: 5, Window: time.Minute, Now: clock.Now, OnTotal: func() { tripped++ }})
	for _, tt := range []struct {
		key     string
		advance time.Duration
		ok      bool
	}{
		{"a", 0, true}, {"a", 0, true}, {"a", 0, true},
		{"a", 0, false}, // its own limit
		{"b", 0, true},
		{"c", 0, true}, // the total's fifth
		{"d", 0, false},
		{"a", time.Minute, true}, // both blocks over
		{"d", 0, true},
	} {
		clock.Advance(tt.advance)
		ok, after := r.Take(tt.key)
		if ok != tt.ok || (!ok && after <= 0) {
			t.Fatalf("Take(%q) after %s = %v, %s; want %v", tt.key, tt.advance, ok, after, tt.ok)
		}
	}
	if tripped != 1 {
		t.Errorf("OnTotal called %d times, want once", tripped)
	}
}
