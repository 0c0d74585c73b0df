package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
)

// TestBenchTableInterrupted: a bench interrupted before its last presets
// (fewer failing counts than presets) prints the presets it ran and the
// total, instead of indexing past the counts.
func TestBenchTableInterrupted(t *testing.T) {
	var b strings.Builder
	presets := []engine.Preset{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	rows := []benchRow{{preset: "a", before: 100, after: 5, took: time.Millisecond}}
	writeBenchTable(&b, presets, []int{7}, rows, 20, time.Minute)
	out := b.String()
	if !strings.Contains(out, "a ") || strings.Contains(out, "\nb ") || !strings.Contains(out, "all") {
		t.Fatalf("table:\n%s", out)
	}
}
