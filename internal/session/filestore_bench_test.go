package session

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkFileStoreLogin10k measures what one login costs the file store
// (a Commit, which is written through) with 10,000 live sessions.
func BenchmarkFileStoreLogin10k(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := OpenFileStore(b.TempDir(), func() time.Time { return now })
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rec := func(i int) Record {
		return Record{Data: Data{Username: fmt.Sprintf("user%d", i%500), Type: "flask-login", Cred: "fingerprint-of-the-hash-xxxxxxxxxxxxxxxxxxxx"},
			Created: now, LastSeen: now, CSRF: make([]byte, 32), Expires: now.Add(time.Hour)}
	}
	ctx := context.Background()
	for i := range 10_000 {
		s.mu.Lock()
		s.t.put(fmt.Sprintf("key-%043d", i), rec(i))
		s.mu.Unlock()
	}
	if err := s.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	i := 10_000
	for b.Loop() {
		if err := s.Commit(ctx, fmt.Sprintf("key-%043d", i), rec(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
