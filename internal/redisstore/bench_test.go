package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// benchStore returns a store of a redis-server of its own holding
// alice's session "k", and a request's cancelable context.
func benchStore(b *testing.B) (*Store, context.Context) {
	srv := redistest.Start(b, redistest.Options{})
	s := open(b, srv.Config(), nil).SessionStore().(*Store)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if err := s.Commit(ctx, "k", record("alice", time.Now(), time.Hour)); err != nil {
		b.Fatal(err)
	}
	return s, ctx
}

// BenchmarkFindCached is a session read answered from the client-side
// cache, under a request's cancelable context: what every signed-in request
// costs with store = redis, network aside.
func BenchmarkFindCached(b *testing.B) {
	s, ctx := benchStore(b)
	s.Find(ctx, "k")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := s.Find(ctx, "k"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkSessionReadCached is the three reads of a signed-in request
// (the record, its entry in the user's index, the user's generation),
// answered from the client-side cache, by parallel requests.
func BenchmarkSessionReadCached(b *testing.B) {
	s, ctx := benchStore(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok, err := s.Find(ctx, "k"); !ok || err != nil {
				b.Error(ok, err)
				return
			}
			if ok, err := s.Indexed(ctx, "k", "alice"); !ok || err != nil {
				b.Error("indexed", ok, err)
				return
			}
			if _, err := s.UserGeneration(ctx, "alice"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSessionStandingCached is BenchmarkSessionReadCached as the
// session manager reads with store = redis: the three reads in one.
func BenchmarkSessionStandingCached(b *testing.B) {
	s, ctx := benchStore(b)
	s.FindStanding(ctx, "k")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, ok, st, err := s.FindStanding(ctx, "k")
			if !ok || err != nil || st.User != "alice" || !st.Indexed {
				b.Error(ok, err, st)
				return
			}
		}
	})
}
