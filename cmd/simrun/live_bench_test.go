package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The live tester's long sensitivity and honesty runs, opt-in as
// benchmarks (one run each):
//
//	go test ./cmd/simrun -run '^$' -bench BenchmarkLive -benchtime 1x -timeout 30m
//
// BenchmarkLiveLegacy2m: our broker and clients with the legacy preset,
// under client kills, cuts and black holes for 2 minutes, must be caught.
func BenchmarkLiveLegacy2m(b *testing.B) {
	benchLive(b, exitViolation, "-broker-preset", "legacy", "-client-preset", "legacy", "-duration", "2m")
}

// BenchmarkLiveFixed10m: the same with the fixed preset for 10 minutes
// must keep every promise.
func BenchmarkLiveFixed10m(b *testing.B) {
	benchLive(b, exitOK, "-duration", "10m")
}

func benchLive(b *testing.B, want int, args ...string) {
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "run")
		base := []string{"live", "-out", dir, "-seed", "1", "-faults", "client-kill,cut,blackhole"}
		var out, errb strings.Builder
		code := run(append(base, args...), &out, &errb)
		if code != want {
			// The run directory goes with b.TempDir: keep its findings,
			// with the whole flow of each, in the log.
			if f, err := os.ReadFile(filepath.Join(dir, "findings.md")); err == nil {
				b.Logf("%s:\n%.60000s", filepath.Join(dir, "findings.md"), f)
			}
			b.Fatalf("exit %d, want %d\n%s\n%s", code, want, out.String(), errb.String())
		}
		b.Log("\n" + out.String())
	}
}
