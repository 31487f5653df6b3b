package throttle

import (
	"context"
	"testing"
)

// TestSwap: attempts start with the counter in use; a slot taken before
// Set goes back to the counter that gave it, and the new counter starts
// with the new limits and nothing counted.
func TestSwap(t *testing.T) {
	ctx := context.Background()
	oldL, newL := New(Options{Max: 5}), New(Options{Max: 1})
	sw := NewSwap(Local(oldL))
	v, err := sw.Acquire(ctx, "k")
	if err != nil || !v.OK {
		t.Fatalf("Acquire: %+v %v", v, err)
	}
	sw.Set(Local(newL))
	if LimiterOf(sw) != newL {
		t.Fatal("LimiterOf does not see the counter in use")
	}
	if _, err := sw.Fail(ctx, v.Slot); err != nil {
		t.Fatal(err)
	}
	if oldL.InFlight("k") != 0 || oldL.Failures("k") != 1 {
		t.Errorf("old counter: in flight %d, failures %d; want 0 and 1", oldL.InFlight("k"), oldL.Failures("k"))
	}
	if newL.Failures("k") != 0 {
		t.Errorf("the new counter counted the old slot's failure")
	}
	v, _ = sw.Acquire(ctx, "k")
	sw.Fail(ctx, v.Slot)
	if v, _ := sw.Check(ctx, "k"); v.OK {
		t.Errorf("one failure does not block with the new Max = 1")
	}
	if n, _ := sw.Clear(ctx); n != 1 {
		t.Errorf("Clear lifted %d blocks, want 1", n)
	}
}
