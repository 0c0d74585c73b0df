package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// shownRuns is how many runs of seeds seedRuns spells out.
const shownRuns = 8

// seedRuns writes seeds compactly, ascending: a run of equal steps as
// "a..b" (step 1) or "a..b step n" (a shard's seeds), a single seed as it
// is; after shownRuns runs, how many seeds are left.
func seedRuns(seeds []uint64) string {
	seeds = slices.Clone(seeds)
	slices.Sort(seeds)
	seeds = slices.Compact(seeds)
	var parts []string
	for i := 0; i < len(seeds); {
		if len(parts) == shownRuns {
			parts = append(parts, fmt.Sprintf("and %d more", len(seeds)-i))
			break
		}
		j, step := i, uint64(0)
		if i+1 < len(seeds) {
			step, j = seeds[i+1]-seeds[i], i+1
			for j+1 < len(seeds) && seeds[j+1]-seeds[j] == step {
				j++
			}
			if j == i+1 && step != 1 { // two seeds apart: the first alone
				j = i
			}
		}
		parts = append(parts, runText(seeds[i], seeds[j], step))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// runText writes the run a..b of the given step.
func runText(a, b, step uint64) string {
	switch {
	case a == b:
		return strconv.FormatUint(a, 10)
	case step == 1:
		return fmt.Sprintf("%d..%d", a, b)
	}
	return fmt.Sprintf("%d..%d step %d", a, b, step)
}
