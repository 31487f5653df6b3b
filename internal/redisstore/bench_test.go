package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit/redistest"
)

// BenchmarkFindCached is a session read answered from the client-side
// cache, under a request's cancelable context: what every signed-in request
// costs with store = redis, network aside.
func BenchmarkFindCached(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	s := open(b, srv.Config(), nil).SessionStore()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Commit(ctx, "k", record("alice", time.Now(), time.Hour)); err != nil {
		b.Fatal(err)
	}
	s.Find(ctx, "k")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := s.Find(ctx, "k"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
