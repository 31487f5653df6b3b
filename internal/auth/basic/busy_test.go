package basic

import (
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// TestWaitingForOthers: when attempts in flight hold every slot of the
// address, a right request waits for their verdicts and gets in as soon
// as one is given back; when none comes in time it is answered 429 with a
// Retry-After, and neither is logged as a refused attempt.
func TestWaitingForOthers(t *testing.T) {
	logs := &logtest.Buffer{}
	p, err := New(Config{Username: "api", Password: "pw", Throttling: passwordauth.Throttling{MaxFailures: 2}}, auth.Deps{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	lim := throttle.LimiterOf(p.limiter)
	const addr = "192.0.2.1"
	a, b := lim.TryAcquire(addr), lim.TryAcquire(addr)
	if !a.OK || !b.OK {
		t.Fatal("could not take the slots")
	}
	identify := func() (bool, error) {
		r := httptest.NewRequest("GET", "/api/me", nil)
		r.RemoteAddr = addr + ":4000"
		r.SetBasicAuth("api", "pw")
		_, ok, err := p.Identify(r)
		return ok, err
	}
	done := make(chan error, 1)
	go func() {
		ok, err := identify()
		if err == nil && !ok {
			err = errors.New("not admitted")
		}
		done <- err
	}()
	for lim.Waiting(addr) == 0 {
		time.Sleep(time.Millisecond) // lining the request up, not timing it
	}
	lim.Release(a.Slot)
	if err := <-done; err != nil {
		t.Fatalf("the waiting right request: %v", err)
	}
	// Both slots taken again and nothing given back: refused after the
	// wait, as busy, not as a failure.
	a = lim.TryAcquire(addr)
	_, err = identify()
	var th refusal.Throttled
	if !errors.As(err, &th) || th.RetryAfter() <= 0 {
		t.Fatalf("with every slot held throughout: %v, want a Throttled error with a Retry-After", err)
	}
	if strings.Contains(logs.String(), "auth refused") {
		t.Fatalf("waiting or busy attempts were logged as refused:\n%s", logs)
	}
	if lim.Failures(addr) != 0 {
		t.Fatal("a busy attempt was counted as a failure")
	}
}
