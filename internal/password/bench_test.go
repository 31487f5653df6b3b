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
	v, check := benchCheck(b, VerifierOptions{})
	if !check(v) { // primes the cache
		b.FailNow()
	}
	b.ReportAllocs()
	for b.Loop() {
		if !check(v) {
			b.FailNow()
		}
	}
}

func BenchmarkCheckUncached(b *testing.B) {
	v, check := benchCheck(b, VerifierOptions{CacheSize: -1})
	b.ReportAllocs()
	for b.Loop() {
		if !check(v) {
			b.FailNow()
		}
	}
}

// BenchmarkCheckCachedParallel measures the cached path under contention:
// every goroutine goes through the cache's one mutex.
func BenchmarkCheckCachedParallel(b *testing.B) {
	v, check := benchCheck(b, VerifierOptions{})
	if !check(v) { // primes the cache
		b.FailNow()
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !check(v) {
				return
			}
		}
	})
}

// benchCheck returns a Verifier made with o and a check of the committed
// cost-12 hash with its right password through it, which marks b failed
// and reports false when the check does not say yes (from any goroutine).
func benchCheck(b *testing.B, o VerifierOptions) (*Verifier, func(*Verifier) bool) {
	h := readHash(b, "htpasswd-2y.txt")
	pw := []byte("correct horse battery staple")
	return NewVerifier(o), func(v *Verifier) bool {
		ok, err := v.Check(context.Background(), h, pw)
		if !ok || err != nil {
			b.Errorf("Check = %v, %v", ok, err)
			return false
		}
		return true
	}
}

func BenchmarkCheckPlain(b *testing.B) {
	m := NewMatcher(false, NewVerifier(VerifierOptions{}))
	pw := []byte("correct horse battery staple")
	for b.Loop() {
		m.Match(context.Background(), "correct horse battery staple", pw)
	}
}
