package passwordauth

import (
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/throttle"
)

// spendOnly is shared state that cannot count failures.
type spendOnly struct{}

func (spendOnly) SpendOnce(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}
func (spendOnly) Ping(context.Context) error { return nil }

// counting is shared state that counts failures, and remembers the names
// of the counters asked of it.
type counting struct {
	spendOnly
	names []string
}

func (c *counting) Counter(name string, o throttle.Options) throttle.Counter {
	c.names = append(c.names, name)
	return throttle.Local(throttle.New(o))
}

// TestCounters: without shared state the counters are this process's;
// with shared state they are its own; shared state that counts nothing is
// an error, never counts kept apart by each instance.
func TestCounters(t *testing.T) {
	shared := &counting{}
	tests := []struct {
		name    string
		shared  auth.Shared
		wantErr bool
	}{
		{"local", nil, false},
		{"shared", shared, false},
		{"shared without counters", spendOnly{}, true},
	}
	for _, tt := range tests {
		count, err := Counters(auth.Deps{Shared: tt.shared})
		if tt.wantErr {
			if err == nil || count != nil {
				t.Errorf("%s: Counters gave no error", tt.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		c := count("basic.addr", throttle.Options{Max: 1, Window: time.Minute, Wait: -1})
		ctx := context.Background()
		v, err := c.Acquire(ctx, "192.0.2.1")
		if err != nil || !v.OK {
			t.Fatalf("%s: first attempt: %+v, %v", tt.name, v, err)
		}
		if blocked, err := c.Fail(ctx, v.Slot); !blocked || err != nil {
			t.Errorf("%s: a failure at Max 1: blocked %v, %v", tt.name, blocked, err)
		}
		if v, _ := c.Check(ctx, "192.0.2.1"); v.OK {
			t.Errorf("%s: a failure at Max 1 did not block", tt.name)
		}
	}
	if len(shared.names) != 1 || shared.names[0] != "basic.addr" {
		t.Errorf("the shared state was asked for %v, want [basic.addr]", shared.names)
	}
}
