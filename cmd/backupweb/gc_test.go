package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: without GOGC the collector's target becomes
// defaultGCPercent; a GOGC the operator set (even "100" or "off") is left
// as the runtime read it.
func TestTuneGC(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"GOGC unset", nil, defaultGCPercent},
		{"GOGC set", map[string]string{"GOGC": "100"}, 77},
		{"GOGC off", map[string]string{"GOGC": "off"}, 77},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := debug.SetGCPercent(77) // what the runtime read, as far as tuneGC can tell
			defer debug.SetGCPercent(before)
			tuneGC(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if got := debug.SetGCPercent(77); got != tt.want {
				t.Errorf("GC percent %d, want %d", got, tt.want)
			}
		})
	}
}
