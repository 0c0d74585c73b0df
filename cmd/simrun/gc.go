package main

import "runtime/debug"

// gcPercent is simrun's garbage-collector target (GOGC) unless the
// environment sets one. A world makes about a megabyte of short-lived
// garbage per seed over a live heap of a few megabytes, so Go's default of
// 100 collects every few seeds, and each cycle's fixed costs (stopping the
// world, scanning stacks, write barriers while it marks) become a large share
// of a seed. Letting the heap grow to five times the live data between
// cycles costs tens of megabytes per worker and buys the throughput the
// docs/performance.md reports. The library (package sim) leaves
// the collector alone: only the command, which owns the process, tunes it.
const gcPercent = 400

// tuneGC sets the collector's target to gcPercent unless getenv("GOGC")
// names one, and reports whether it did.
func tuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(gcPercent)
	return true
}
