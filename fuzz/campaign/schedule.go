package main

import (
	"slices"
	"time"
)

// minTurn is the shortest turn worth starting: below it the build and the
// baseline coverage pass would take most of the turn.
const minTurn = 2 * time.Second

// scheduler rotates the fuzz targets over the worker slots: each free slot
// gets the target with the least fuzzing time so far, preferring one that is
// not already running; a target that found a crasher or failed gets no
// more turns. It is pure: the campaign loop tells it what happened.
type scheduler struct {
	targets []string
	spent   map[string]time.Duration // time granted to each target so far
	running map[string]int           // turns of each target in progress
	retired map[string]bool          // crashed or failed: no more turns
}

// newScheduler returns a scheduler for the targets, in the given order
// (ties go to the earlier one).
func newScheduler(targets []string) *scheduler {
	return &scheduler{targets: slices.Clone(targets), spent: make(map[string]time.Duration),
		running: make(map[string]int), retired: make(map[string]bool)}
}

// next picks the target of the next turn; false when every target is
// retired.
func (s *scheduler) next() (string, bool) {
	best, found := "", false
	for _, t := range s.targets {
		if s.retired[t] {
			continue
		}
		if !found || s.less(t, best) {
			best, found = t, true
		}
	}
	return best, found
}

// less orders candidates: not running before running, then less time spent.
func (s *scheduler) less(a, b string) bool {
	ra, rb := s.running[a] > 0, s.running[b] > 0
	if ra != rb {
		return !ra
	}
	return s.spent[a] < s.spent[b]
}

// start records a turn of d for t.
func (s *scheduler) start(t string, d time.Duration) {
	s.running[t]++
	s.spent[t] += d
}

// finish records the end of a turn of t; retire stops t for good.
func (s *scheduler) finish(t string, retire bool) {
	s.running[t]--
	if retire {
		s.retired[t] = true
	}
}

// active reports whether any target can still get a turn.
func (s *scheduler) active() bool {
	_, ok := s.next()
	return ok
}

// turnLength is how long the next turn runs: a slice, cut to the time left
// before the deadline; 0 when too little is left to start one.
func turnLength(slice, left time.Duration) time.Duration {
	d := min(slice, left).Truncate(time.Second)
	if d < minTurn {
		return 0
	}
	return d
}

// minShare is the shortest equal share a short campaign gives each target:
// below it a turn of Go's fuzzer is mostly its baseline coverage pass.
const minShare = 5 * time.Second

// turnPlan is how a campaign splits its duration among its targets.
type turnPlan struct {
	slice time.Duration // length of each turn
	// oneEach: the duration is shorter than one turn of -slice per target,
	// so each target gets exactly one turn of slice, an equal share, and
	// those turns are not cut by the deadline (their builds add wall time).
	oneEach bool
	reached int // targets that get a turn (build time aside)
}

// planTurns splits duration among n targets run parallel at once in turns
// of slice. When a turn of slice per target does not fit and the user did
// not set -slice, every target gets one equal turn: duration over the
// rounds of parallel turns it takes, at least minShare. Otherwise the turns
// are slice long, and reached says how many targets the duration can give
// a turn (the caller warns when that is not all of them).
func planTurns(duration, slice time.Duration, sliceSet bool, parallel, n int) turnPlan {
	rounds := (n + parallel - 1) / parallel
	if !sliceSet && time.Duration(rounds)*slice > duration {
		share := (duration / time.Duration(rounds)).Truncate(time.Second)
		if share >= minShare {
			return turnPlan{slice: share, oneEach: true, reached: n}
		}
		slice = minShare
	}
	perSlot := int(duration / slice)
	if duration%slice >= minTurn {
		perSlot++ // the last turn, cut to the time left
	}
	return turnPlan{slice: slice, reached: min(n, perSlot*parallel)}
}
