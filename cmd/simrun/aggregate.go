package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// shownFailing is how many failing seeds the summary and the replay list
// print; failing.txt lists every one.
const shownFailing = 20

// tally counts seeds and violations.
type tally struct{ seeds, failing, violations int }

// campaignSummary is what a campaign found, computed from the set of its
// records only: it does not depend on workers, order, shards or resumes.
type campaignSummary struct {
	recs        []record // sorted by world, then seed; one per key
	failing     []record // the failing ones, same order
	byInvariant map[string]*tally
	byWorld     map[string]*tally
	total       statsJSON
	// incomplete, if set, says why the records are not the whole campaign
	// (an interrupted run): the summary then never says "violations: none"
	// alone.
	incomplete string
}

// sortRecords orders records by world, then seed.
func sortRecords(recs []record) {
	slices.SortFunc(recs, func(a, b record) int {
		if c := strings.Compare(a.worldKey(), b.worldKey()); c != 0 {
			return c
		}
		switch {
		case a.Seed < b.Seed:
			return -1
		case a.Seed > b.Seed:
			return 1
		}
		return 0
	})
}

// summarizeCampaign builds the summary of a set of records (already
// deduplicated by key).
func summarizeCampaign(recs []record) campaignSummary {
	recs = slices.Clone(recs)
	sortRecords(recs)
	s := campaignSummary{recs: recs, byInvariant: map[string]*tally{}, byWorld: map[string]*tally{}}
	for _, r := range recs {
		w := s.byWorld[r.worldKey()]
		if w == nil {
			w = &tally{}
			s.byWorld[r.worldKey()] = w
		}
		w.seeds++
		s.total.add(r.Stats)
		if !r.failed() {
			continue
		}
		w.failing++
		s.failing = append(s.failing, r)
		counts := r.Violations
		if r.Error != "" {
			counts = map[string]int{"RunError": 1}
		}
		for inv, n := range counts {
			t := s.byInvariant[inv]
			if t == nil {
				t = &tally{}
				s.byInvariant[inv] = t
			}
			t.seeds++
			t.violations += n
		}
	}
	return s
}

// exitStatus is 1 when a seed failed.
func (s campaignSummary) exitStatus() int {
	if len(s.failing) > 0 {
		return exitViolation
	}
	return exitOK
}

// seedRange describes the seeds of the records: count, lowest, highest.
func (s campaignSummary) seedRange() string {
	if len(s.recs) == 0 {
		return "0 seeds"
	}
	lo, hi := s.recs[0].Seed, s.recs[0].Seed
	for _, r := range s.recs {
		lo, hi = min(lo, r.Seed), max(hi, r.Seed)
	}
	return fmt.Sprintf("%d seeds (%d..%d)", len(s.recs), lo, hi)
}

// writeText prints the summary: the same records print the same text.
func (s campaignSummary) writeText(w io.Writer) {
	fmt.Fprintln(w, "== campaign summary ==")
	n := len(s.recs)
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(len(s.failing)) / float64(n)
	}
	fmt.Fprintf(w, "%s, %d failing (%.2f%%)", s.seedRange(), len(s.failing), pct)
	if s.incomplete != "" {
		fmt.Fprintf(w, "; INCOMPLETE: %s", s.incomplete)
	}
	fmt.Fprintln(w)
	t := s.total
	fmt.Fprintf(w, "totals: events %d, published %d, accepted %d, delivered %d, duplicates %d, retransmits %d, crashes %d\n",
		t.Events, t.Published, t.Accepted, t.Delivered, t.Duplicates, t.Retransmits, t.Crashes)
	fmt.Fprintf(w, "faults: %s\n", faultsText(t.Faults))
	fmt.Fprintln(w, "by world:")
	fmt.Fprintf(w, "  %-18s %-8s %-10s %-7s %-6s %8s %8s\n", "preset", "profile", "scenario", "version", "judge", "seeds", "failing")
	for _, k := range sortedKeys(s.byWorld) {
		f := strings.Split(k, "/")
		fmt.Fprintf(w, "  %-18s %-8s %-10s %-7s %-6s %8d %8d\n", f[0], f[1], f[2], f[3], f[4], s.byWorld[k].seeds, s.byWorld[k].failing)
	}
	switch {
	case len(s.byInvariant) == 0 && s.incomplete != "":
		fmt.Fprintf(w, "violations: none in these seeds, but the campaign is INCOMPLETE: %s\n", s.incomplete)
	case len(s.byInvariant) == 0:
		fmt.Fprintln(w, "violations: none")
	default:
		fmt.Fprintln(w, "violations by invariant (-judge spec: what the fixed engine promises under each run's faults; preset: what the run's preset promises):")
		fmt.Fprintf(w, "  %-18s %8s %10s\n", "invariant", "seeds", "violations")
		for _, k := range sortedKeys(s.byInvariant) {
			fmt.Fprintf(w, "  %-18s %8d %10d\n", k, s.byInvariant[k].seeds, s.byInvariant[k].violations)
		}
	}
	s.writeShrunk(w)
	if len(s.failing) > 0 {
		fmt.Fprintf(w, "failing seeds (first %d of %d):\n", min(shownFailing, len(s.failing)), len(s.failing))
		for _, r := range s.failing[:min(shownFailing, len(s.failing))] {
			fmt.Fprintf(w, "  seed %d %s: %s\n", r.Seed, r.Preset, r.finding())
		}
	}
}

// finding describes what a failing record found, in one line.
func (r record) finding() string {
	if r.Error != "" {
		return "run error: " + r.Error
	}
	var parts []string
	for _, k := range sortedKeys(r.Violations) {
		parts = append(parts, fmt.Sprintf("%s x%d", k, r.Violations[k]))
	}
	s := strings.Join(parts, ", ")
	if r.First != nil {
		s += " (first: " + r.First.text() + ")"
	}
	return s + r.shrunkText()
}

// replayCommand is the command that replays a failing record's saved plan.
func (r record) replayCommand() string {
	return replayPrefix + " replay " + absPath(filepath.Join(r.dir, planName(r.Seed))) + judge(r.Judge).flagArg()
}

// shrinkCommand is the command that shrinks a failing record's saved plan.
func (r record) shrinkCommand() string {
	return replayPrefix + " shrink " + absPath(filepath.Join(r.dir, planName(r.Seed))) + judge(r.Judge).flagArg()
}

// writeReplays prints the replay commands of the first failing seeds and
// where the full list is.
func (s campaignSummary) writeReplays(w io.Writer, listPath string) {
	if len(s.failing) == 0 {
		return
	}
	fmt.Fprintln(w, "replay a failing seed:")
	for _, r := range s.failing[:min(shownFailing, len(s.failing))] {
		if m := r.minReplayCommand(); m != "" {
			fmt.Fprintf(w, "  %s   # shrunk: %d ops\n", m, r.MinOps)
		}
		fmt.Fprintf(w, "  %s\n", r.replayCommand())
		if r.MinOps == 0 && r.Error == "" {
			fmt.Fprintf(w, "  %s   # shrink it\n", r.shrinkCommand())
		}
	}
	if listPath != "" {
		fmt.Fprintf(w, "every failing seed's replay command: %s\n", listPath)
	}
}

// writeFailingList writes one line per failing seed: the replay command and
// what it found.
func (s campaignSummary) writeFailingList(w io.Writer) {
	for _, r := range s.failing {
		fmt.Fprintf(w, "%s  # %s\n", r.replayCommand(), r.finding())
	}
}
