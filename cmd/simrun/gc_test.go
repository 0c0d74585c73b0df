package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: simrun raises GOGC to gcPercent, but an explicit GOGC in the
// environment wins.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	if tuneGC(func(k string) string { return map[string]string{"GOGC": "50"}[k] }) {
		t.Error("tuneGC overrode GOGC=50 from the environment")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, the target changed to %d", got)
	}
	if !tuneGC(func(string) string { return "" }) {
		t.Error("tuneGC did nothing without GOGC")
	}
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("target %d after tuneGC, want %d", got, gcPercent)
	}
}
