package login

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/userstate"
)

// countingState counts the factor records read through a store.
type countingState struct {
	userstate.Store
	reads atomic.Int64
}

func (s *countingState) Factors(ctx context.Context, user string) (*factors.Record, error) {
	s.reads.Add(1)
	return s.Store.Factors(ctx, user)
}

// TestSignedInRequestReadsNoFactorRecord: factors are read at the sign-in;
// the requests of the session that follows ask only the user's status.
func TestSignedInRequestReadsNoFactorRecord(t *testing.T) {
	counting := &countingState{}
	h := newFactorHarness(t, SecondFactorRequired, func(c *Config) {
		c.wrapState = func(s userstate.Store) userstate.Store {
			counting.Store = s
			return counting
		}
	})
	h.enrol("alice")
	before := counting.reads.Load()
	b := h.passwordGiven("alice")
	if r := b.secondFactor(h.code(), "/"); r.status != http.StatusSeeOther {
		t.Fatalf("the code: %d", r.status)
	}
	if counting.reads.Load() == before {
		t.Fatal("the sign-in read no factor record: the count does not see the store")
	}
	before = counting.reads.Load()
	for range 20 {
		if s := b.apiStatus(); s != http.StatusOK {
			t.Fatalf("signed in: %d", s)
		}
	}
	if n := counting.reads.Load() - before; n != 0 {
		t.Fatalf("20 signed-in requests read %d factor records, want 0", n)
	}
}
