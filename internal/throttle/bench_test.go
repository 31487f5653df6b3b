package throttle

import (
	"fmt"
	"testing"
)

// BenchmarkAllow measures the check a limit on begins makes (Rate.Take,
// through allow), from all CPUs at once, against a limiter tracking 10,000
// keys.
func BenchmarkAllow(b *testing.B) {
	l := New(Options{})
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprint("ip:198.51.100.", i)
		l.record(keys[i])
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.allow(keys[i%len(keys)])
			i++
		}
	})
}

// BenchmarkFail measures recording a failure, evictions included, with the
// limiter at its bound.
func BenchmarkFail(b *testing.B) {
	l := New(Options{MaxKeys: 1024})
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprint("user:", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.record(keys[i%len(keys)])
		i++
	}
}
