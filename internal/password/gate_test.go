package password

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGateSize(t *testing.T) {
	want := max(1, runtime.GOMAXPROCS(0)/2)
	tests := []struct{ n, want int }{
		{-1, want},
		{0, want},
		{1, 1},
		{3, 3},
	}
	for _, tt := range tests {
		if got := NewGate(tt.n).Size(); got != tt.want {
			t.Errorf("NewGate(%d).Size() = %d, want %d", tt.n, got, tt.want)
		}
	}
	if g := NewGateWait(1, 0); g.maxWait != DefaultGateWait {
		t.Errorf("NewGateWait(1, 0) waits %v, want %v", g.maxWait, DefaultGateWait)
	}
}

func TestGateLimitsConcurrency(t *testing.T) {
	const size, callers = 2, 6
	g := NewGate(size)
	var active, peak, ran atomic.Int64
	entered, release := make(chan struct{}, callers), make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			err := g.Do(context.Background(), func() {
				n := active.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				entered <- struct{}{}
				<-release
				active.Add(-1)
				ran.Add(1)
			})
			if err != nil {
				t.Errorf("Do: %v", err)
			}
		})
	}
	await(entered, size) // the gate is full
	if p := peak.Load(); p != size {
		t.Fatalf("peak = %d with the gate full, want %d", p, size)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p > size {
		t.Fatalf("%d computations ran at once through a gate of %d", p, size)
	}
	if r := ran.Load(); r != callers {
		t.Fatalf("%d of %d callers ran", r, callers)
	}
}

func TestGateBusy(t *testing.T) {
	tests := []struct {
		name    string
		maxWait time.Duration
		ctx     func() (context.Context, context.CancelFunc)
		wantCtx error // also wrapped, or nil
	}{
		{"context already ended", time.Hour, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline while waiting", time.Hour, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Millisecond)
		}, context.DeadlineExceeded},
		{"wait limit", time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewGateWait(1, tt.maxWait)
			held, unblock := make(chan struct{}), make(chan struct{})
			go g.Do(context.Background(), func() { close(held); <-unblock })
			<-held
			defer close(unblock)

			ctx, cancel := tt.ctx()
			defer cancel()
			ran := false
			err := g.Do(ctx, func() { ran = true })
			if !errors.Is(err, ErrBusy) {
				t.Fatalf("Do = %v, want ErrBusy", err)
			}
			if tt.wantCtx != nil && !errors.Is(err, tt.wantCtx) {
				t.Fatalf("Do = %v, want it to wrap %v", err, tt.wantCtx)
			}
			if tt.wantCtx == nil && isContextErr(err) {
				t.Fatalf("Do = %v blames a context that did not end", err)
			}
			if ran {
				t.Fatal("fn ran although the gate refused")
			}
		})
	}
}

func TestGateEndedContextRefusedEvenWhenFree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := NewGate(1).Do(ctx, func() { ran = true }); !errors.Is(err, ErrBusy) || ran {
		t.Fatalf("Do = %v, ran = %v; want ErrBusy without running", err, ran)
	}
}

func TestGateReleasesSlotAfterPanic(t *testing.T) {
	g := NewGate(1)
	func() {
		defer func() { _ = recover() }()
		_ = g.Do(context.Background(), func() { panic("boom") })
	}()
	if err := g.Do(context.Background(), func() {}); err != nil {
		t.Fatalf("slot not released after a panic: %v", err)
	}
}
