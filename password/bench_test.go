package password

import (
	"context"
	"testing"
)

// The two benchmarks below check the committed cost-12 htpasswd hash with
// its right password: once through the cache (the cost a Basic client pays
// on every request after its first) and once with the cache disabled (what
// every request would cost without it, and what every wrong guess costs).
//
//	go test -run '^$' -bench 'BenchmarkCheck' -benchtime 10x ./password/

func BenchmarkCheckCached(b *testing.B) {
	h := readHash(b, "htpasswd-2y.txt")
	pw := []byte("correct horse battery staple")
	v := NewVerifier(VerifierOptions{})
	ctx := context.Background()
	if ok, err := v.Check(ctx, h, pw); !ok || err != nil {
		b.Fatalf("priming Check = %v, %v", ok, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := v.Check(ctx, h, pw); !ok || err != nil {
			b.Fatalf("Check = %v, %v", ok, err)
		}
	}
}

func BenchmarkCheckUncached(b *testing.B) {
	h := readHash(b, "htpasswd-2y.txt")
	pw := []byte("correct horse battery staple")
	v := NewVerifier(VerifierOptions{CacheSize: -1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := v.Check(ctx, h, pw); !ok || err != nil {
			b.Fatalf("Check = %v, %v", ok, err)
		}
	}
}

// BenchmarkCheckCachedParallel measures the cached path under contention:
// every goroutine goes through the cache's one mutex.
func BenchmarkCheckCachedParallel(b *testing.B) {
	h := readHash(b, "htpasswd-2y.txt")
	pw := []byte("correct horse battery staple")
	v := NewVerifier(VerifierOptions{})
	ctx := context.Background()
	if ok, err := v.Check(ctx, h, pw); !ok || err != nil {
		b.Fatalf("priming Check = %v, %v", ok, err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if ok, err := v.Check(ctx, h, pw); !ok || err != nil {
				b.Errorf("Check = %v, %v", ok, err)
				return
			}
		}
	})
}

func BenchmarkCheckPlain(b *testing.B) {
	m := NewMatcher(false, NewVerifier(VerifierOptions{}))
	pw := []byte("correct horse battery staple")
	for b.Loop() {
		m.Match(context.Background(), "correct horse battery staple", pw)
	}
}
