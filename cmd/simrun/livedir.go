package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// liveMarker marks a directory as a live run directory: the tester owns
// what is in it.
const liveMarker = ".simrun-live"

// liveRunFiles are the entries a live run writes into its directory (the
// names of runs from before the marker).
var liveRunFiles = []string{"summary.txt", "violations.txt", "schedule.txt", "history.jsonl", "chart.html",
	"findings.md", "findings.json", "logs", "data"}

// prepareLiveDir readies a live run directory: the tester owns it, so
// a directory of an earlier live run (its marker, or only a live run's
// files) is emptied first and nothing of that run (its broker's and
// clients' data, logs, verdict) reaches the next; an empty or missing
// directory is created. A directory holding anything else is refused
// (a usage error, exit 2) unless force, which clears the live run's files
// and keeps the rest. A directory that cannot be made or cleared is an
// I/O failure (exit 3).
func prepareLiveDir(dir string, seed uint64, force bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return ioFailure(err, "run directory")
	}
	var others []string
	for _, e := range entries {
		if e.Name() != liveMarker && !slices.Contains(liveRunFiles, e.Name()) {
			others = append(others, e.Name())
		}
	}
	owned := exists(filepath.Join(dir, liveMarker)) || len(others) == 0
	if !owned && !force {
		return badUsage("live", "run directory %s holds files no live run wrote (%s): choose another -out, or -force to clear the live run's files in it and keep those",
			dir, strings.Join(others[:min(3, len(others))], ", "))
	}
	for _, e := range entries {
		if owned || e.Name() == liveMarker || slices.Contains(liveRunFiles, e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return ioFailure(err, "clearing the earlier run in %s", dir)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ioFailure(err, "run directory")
	}
	marker := fmt.Sprintf("a live run directory of simrun (seed %d): the next run into it clears it first\n", seed)
	return ioFailure(os.WriteFile(filepath.Join(dir, liveMarker), []byte(marker), 0o644), "run directory")
}
