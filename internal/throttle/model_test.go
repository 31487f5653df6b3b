package throttle_test

import (
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/clocktest"
	"github.com/backupweb/backupweb/internal/testkit/throttletest"
	"github.com/backupweb/backupweb/internal/throttle"
)

// TestLimiterFollowsTheModel drives random interleavings of attempts
// taking slots, successes, failures, checks, resets, clears and clock
// steps against a Limiter and the reference model.
func TestLimiterFollowsTheModel(t *testing.T) {
	for seed := range uint64(40) {
		clock := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		o := throttletest.Options(clock)
		l := throttle.New(o)
		throttletest.Run(t, throttle.Local(l), clock, o, 0, seed, 600, l.InFlight)
	}
}
