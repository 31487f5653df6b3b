package main

import (
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set.
// A request allocates a few kilobytes that are garbage when it is
// answered, while the data that lives on (sessions, the catalog's
// listing, caches) is small: with Go's default of 100 the collector ran
// every few thousand requests and took about 7% of a loaded server's CPU
// (docs/performance.md). At 400 it runs a quarter as often, for a heap
// that grows to about five times the live data between collections
// instead of twice: a few megabytes more for a typical instance.
const defaultGCPercent = 400

// tuneGC sets the collector's target to defaultGCPercent unless the
// operator chose one with GOGC (GOMEMLIMIT still applies either way).
func tuneGC(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(defaultGCPercent)
}
