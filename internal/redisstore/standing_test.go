package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// TestFindStanding: the record's first read leaves the standing unread
// (its user is not known yet); later reads give the user's generation and
// index entry as Redis has them, through every change another client
// makes; a generation that is not a number leaves the standing unread
// (the manager then reads it alone, and refuses); and a record that
// changed user is read with its standing left out.
func TestFindStanding(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c, other := open(t, srv.Config(), nil), open(t, srv.Config(), nil)
	s := c.SessionStore().(*Store)
	ctx := context.Background()
	rd := other.rd()
	do := func(args ...string) {
		t.Helper()
		if err := rd.Do(ctx, rd.B().Arbitrary(args[0]).Keys(args[1]).Args(args[2:]...).Build()).Error(); err != nil {
			t.Fatal(args, err)
		}
	}
	if err := s.Commit(ctx, "k", record("alice", time.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, st, err := s.FindStanding(ctx, "k"); !ok || err != nil || st != (session.Standing{}) {
		t.Fatalf("first read: %v %v %+v", ok, err, st)
	}
	for _, step := range []struct {
		name   string
		change []string
		want   session.Standing
	}{
		{"as written", nil, session.Standing{User: "alice", Indexed: true}},
		{"the generation moved", []string{"SET", other.key("g", "alice"), "5"}, session.Standing{User: "alice", Gen: 5, Indexed: true}},
		{"taken out of the index", []string{"ZREM", other.key("u", "alice"), "k"}, session.Standing{User: "alice", Gen: 5}},
		{"put back", []string{"ZADD", other.key("u", "alice"), "1", "k"}, session.Standing{User: "alice", Gen: 5, Indexed: true}},
		{"a generation that is not a number", []string{"SET", other.key("g", "alice"), "x"}, session.Standing{}},
	} {
		if step.change != nil {
			do(step.change...)
		}
		waitUntil(t, func() bool {
			_, ok, st, err := s.FindStanding(ctx, "k")
			return ok && err == nil && st == step.want
		})
		t.Logf("%s: %+v", step.name, step.want)
	}
	if _, err := s.UserGeneration(ctx, "alice"); err == nil {
		t.Fatal("a generation that is not a number was read")
	}
	// The record now names bob: read with no standing (that read was
	// alice's), then with bob's.
	do("SET", other.key("g", "alice"), "5")
	if err := s.Commit(ctx, "k", record("bob", time.Now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	var last session.Standing
	waitUntil(t, func() bool {
		rec, ok, st, err := s.FindStanding(ctx, "k")
		last = st
		return ok && err == nil && rec.Username == "bob" && st.User == "bob"
	})
	if last.User != "bob" || last.Gen != 0 {
		t.Fatalf("bob's standing: %+v", last)
	}
}
