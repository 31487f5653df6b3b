//go:build race

package benchtest

// RaceEnabled reports whether the race detector is on: allocation counts
// differ then (its instrumentation allocates, sync.Pool drops values at
// random), so tests that count allocations skip.
const RaceEnabled = true
