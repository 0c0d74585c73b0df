//go:build !unix

package main

import "time"

// processStart stands in for the process's CPU time where getrusage is
// missing: there shrink -bench counts wall time.
var processStart = time.Now()

// cpuTime returns the wall time since the process started (no getrusage
// here).
func cpuTime() time.Duration { return time.Since(processStart) }
