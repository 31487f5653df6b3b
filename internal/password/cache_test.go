package password

import (
	"testing"
	"time"
)

func TestVerifiedCache(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b, c := cacheKey{1}, cacheKey{2}, cacheKey{3}
	tests := []struct {
		name string
		run  func(*verifiedCache) bool // reports success
	}{
		{"miss", func(vc *verifiedCache) bool {
			hit, _ := vc.get(a, t0)
			return !hit
		}},
		{"hit before expiry, miss at it", func(vc *verifiedCache) bool {
			vc.add(a, t0, 0)
			h1, _ := vc.get(a, t0.Add(time.Minute-1))
			h2, _ := vc.get(a, t0.Add(time.Minute))
			return h1 && !h2 && vc.len() == 0
		}},
		{"re-adding refreshes expiry without growing", func(vc *verifiedCache) bool {
			vc.add(a, t0, 0)
			vc.add(a, t0.Add(30*time.Second), 0)
			hit, _ := vc.get(a, t0.Add(80*time.Second))
			return hit && vc.len() == 1
		}},
		{"least recently used evicted", func(vc *verifiedCache) bool {
			vc.add(a, t0, 0)
			vc.add(b, t0, 0)
			vc.get(a, t0)
			vc.add(c, t0, 0)
			ha, _ := vc.get(a, t0)
			hb, _ := vc.get(b, t0)
			hc, _ := vc.get(c, t0)
			return ha && !hb && hc && vc.len() == 2
		}},
		{"add after purge ignored", func(vc *verifiedCache) bool {
			_, gen := vc.get(a, t0)
			vc.purge()
			vc.add(a, t0, gen)
			_, gen2 := vc.get(a, t0)
			return vc.len() == 0 && gen2 == gen+1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.run(newVerifiedCache(2, time.Minute)) {
				t.Fatal("unexpected cache behaviour")
			}
		})
	}
}
