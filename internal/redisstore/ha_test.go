package redisstore

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestClusterConformance runs the store's whole surface (sessions and
// their index, a user's sessions ended, the failure counters against
// the reference model, single-use tokens, second factors and machine
// tokens) against a real Redis Cluster of three masters with a replica
// each, made by redis-cli --cluster create, with every write that must
// survive a failover confirmed by a replica. A script whose keys were in
// two slots would fail there (CROSSSLOT, or a key not local to the node).
func TestClusterConformance(t *testing.T) {
	cl := redistest.StartCluster(t, redistest.Options{}, 3, 1)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, redistest.Config)
	}{
		{"sessions", testStore},
		{"users", testStoreUsers},
		{"revocation", testRevocationReachesOtherInstances},
		{"spend-once", testSpendOnce},
		{"counter", testCounter},
		{"counter-model", testCounterFollowsTheModel},
		{"counter-concurrency", testCounterHoldsUnderConcurrency},
		{"user-state", testUserStateConformance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cl.Config()
			cfg.Prefix = "cluster-" + tc.name + ":"
			tc.run(t, cfg)
		})
	}
}

// TestSentinelConformance runs the same surface through Redis Sentinel:
// one master, two replicas, three Sentinels.
func TestSentinelConformance(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 2, 3)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, redistest.Config)
	}{
		{"sessions", testStore},
		{"users", testStoreUsers},
		{"spend-once", testSpendOnce},
		{"counter", testCounter},
		{"user-state", testUserStateConformance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := h.Config()
			cfg.Prefix = "sentinel-" + tc.name + ":"
			tc.run(t, cfg)
		})
	}
}

// TestUnconfirmedWritesAre503: against a server with no replica, every
// write that must survive a failover is an error answered 503 (a spend is
// never taken for done), while reads, session refreshes and failure
// counts wait for no replica and succeed.
func TestUnconfirmedWritesAre503(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	plain := open(t, srv.Config(), nil)
	cfg := srv.Config()
	cfg.ReplicasAcked = 1
	cfg.ReplicaTimeout = 20 * time.Millisecond
	c := open(t, cfg, slog.New(slog.DiscardHandler))
	s := c.SessionStore().(*Store)
	ctx := context.Background()
	now := time.Now()
	if err := plain.SessionStore().Commit(ctx, "k0", record("alice", now, time.Hour)); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s succeeded without a replica to confirm it", what)
		}
		if rp := refusal.ReplyTo(err); rp.Status != 503 || !refusal.IsUnavailable(err) {
			t.Fatalf("%s: %v answered %d, want 503", what, err, rp.Status)
		}
	}
	refused("a sign-in", s.Commit(ctx, "k1", record("alice", now, time.Hour)))
	_, err := c.SpendOnce(ctx, "totp", "123456", time.Minute)
	refused("a spend", err)
	if ok, err := c.SpendOnce(ctx, "totp", "123456", time.Minute); ok || err != nil {
		t.Fatalf("the unconfirmed spend, spent again = %v, %v; want refused (it may be on the master)", ok, err)
	}
	refused("a sign-out", s.Delete(ctx, "k0"))
	_, err = s.DeleteUser(ctx, "bob")
	refused("ending a user's sessions", err)

	// Reads and refreshes do not wait.
	if err := plain.SessionStore().Commit(ctx, "k2", record("alice", now, time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Find(ctx, "k2"); !ok || err != nil {
		t.Fatalf("Find = %v, %v", ok, err)
	}
	if err := s.Touch(ctx, "k2", now.Add(time.Minute), now.Add(2*time.Hour), nil); err != nil {
		t.Fatalf("Touch waited for a replica: %v", err)
	}
	k := c.Counter("acked", throttle.Options{Max: 5, Window: time.Minute})
	v, err := k.Acquire(ctx, "x")
	if err != nil || !v.OK {
		t.Fatalf("Acquire = %+v, %v", v, err)
	}
	if _, err := k.Fail(ctx, v.Slot); err != nil {
		t.Fatalf("Fail waited for a replica: %v", err)
	}
}

// TestOpenBeforeSentinels: with every Sentinel down, Open still returns
// a client, whose commands fail as unavailable (503) until the Sentinels
// answer; then it finds the master by itself.
func TestOpenBeforeSentinels(t *testing.T) {
	h := redistest.StartSentinel(t, redistest.Options{}, 1, 1)
	for _, s := range h.Sentinels {
		s.Stop()
	}
	c := open(t, h.Config(), slog.New(slog.DiscardHandler))
	ctx := context.Background()
	err := c.SessionStore().Commit(ctx, "k", record("alice", time.Now(), time.Hour))
	if err == nil || !refusal.IsUnavailable(err) {
		t.Fatalf("Commit with no Sentinel answering = %v, want unavailable", err)
	}
	for _, s := range h.Sentinels {
		s.Start()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := c.SessionStore().Commit(ctx, "k", record("alice", time.Now(), time.Hour))
		if err == nil {
			break
		}
		if !refusal.IsUnavailable(err) || time.Now().After(deadline) {
			t.Fatalf("Commit once the Sentinels answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
