package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mqttlab/mqttlab/findings"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// violationJSON is one violation as the JSON summary prints it: the whole
// reason (the text summary shortens its lists) and the history indexes of
// the events it rests on.
type violationJSON struct {
	Invariant string `json:"invariant"`
	Step      int    `json:"step"`
	Node      string `json:"node"`
	Reason    string `json:"reason"`
	Events    []int  `json:"events,omitempty"`
	// ExplainedBy names the earlier violation this one follows from.
	ExplainedBy string `json:"explained_by,omitempty"`
}

// listedInText is how many items of a reason's long list (a stuck run's
// undelivered messages) a text line shows.
const listedInText = 5

// statsJSON are a run's counters.
type statsJSON struct {
	Events      int64          `json:"events"`
	Published   int            `json:"published"`
	Accepted    int            `json:"accepted"`
	Delivered   int            `json:"delivered"`
	Duplicates  int            `json:"duplicates"`
	Retransmits int            `json:"retransmits"`
	Crashes     int            `json:"crashes"`
	Faults      map[string]int `json:"faults"`
}

// add adds o's counters to s.
func (s *statsJSON) add(o statsJSON) {
	s.Events += o.Events
	s.Published += o.Published
	s.Accepted += o.Accepted
	s.Delivered += o.Delivered
	s.Duplicates += o.Duplicates
	s.Retransmits += o.Retransmits
	s.Crashes += o.Crashes
	if s.Faults == nil {
		s.Faults = map[string]int{}
	}
	for k, v := range o.Faults {
		s.Faults[k] += v
	}
}

// statsOf converts the sim's counters.
func statsOf(s sim.Stats) statsJSON {
	faults := make(map[string]int, len(s.Faults))
	for _, k := range s.FaultKinds() {
		faults[k] = s.Faults[k]
	}
	return statsJSON{Events: s.Events, Published: s.Published, Accepted: s.Accepted, Delivered: s.Delivered,
		Duplicates: s.Duplicates, Retransmits: s.Retransmits, Crashes: s.Crashes, Faults: faults}
}

// summary is what run and replay print about one run.
type summary struct {
	Seed     uint64 `json:"seed"`
	Profile  string `json:"profile"`
	Preset   string `json:"preset"`
	Scenario string `json:"scenario"`
	Version  string `json:"version"`
	CrashAt  string `json:"crash_at,omitempty"`
	Checksum string `json:"checksum"`
	Quiet    bool   `json:"quiet"`
	statsJSON
	// Judge says what the run is held to; Promised is that set of
	// invariants under the faults that happened, PresetPromises what the
	// preset promises itself.
	Judge          string          `json:"judge"`
	Promised       []string        `json:"promised"`
	PresetPromises []string        `json:"preset_promises"`
	Violations     []violationJSON `json:"violations"`
	// Findings are the violations grouped by cause (package findings),
	// one line each, as simrun live prints them.
	Findings []string `json:"findings,omitempty"`
	// Unpromised are violations of invariants not promised (with -all):
	// informational, they do not fail the run.
	Unpromised []violationJSON `json:"unpromised,omitempty"`
	Replay     string          `json:"replay,omitempty"`
}

// violationsJSON converts model violations.
func violationsJSON(vs []model.Violation) []violationJSON {
	out := make([]violationJSON, 0, len(vs))
	for _, v := range vs {
		out = append(out, violationJSON{Invariant: v.Invariant.String(), Step: v.Step, Node: v.Node, Reason: v.Reason, Events: v.Events, ExplainedBy: v.ExplainedBy})
	}
	return out
}

// checksumHex formats a trace checksum.
func checksumHex(sum uint64) string { return fmt.Sprintf("%016x", sum) }

// summarize builds the summary of a finished run of cfg. With all, the
// violations of unpromised invariants are listed too.
func summarize(cfg sim.Config, r sim.Result, j judge, all bool) summary {
	v := j.judgeRun(r, all)
	s := summary{
		Seed: cfg.Seed, Profile: cfg.Profile, Preset: cfg.Preset.Name, Scenario: cfg.Scenario,
		Version: versionLabel(cfg.Scenario, cfg.Version, cfg.Workload), Checksum: checksumHex(r.Checksum()), Quiet: r.Quiet,
		statsJSON: statsOf(r.Stats), Violations: violationsJSON(v.violations),
		Judge: string(j), Promised: names(v.promised), PresetPromises: names(v.own),
	}
	if cfg.Crash.Exhaustive() {
		s.CrashAt = fmt.Sprintf("%s %d", cfg.Crash.Node, cfg.Crash.K)
	}
	if all {
		s.Unpromised = violationsJSON(v.unpromised)
	}
	if len(v.violations) > 0 {
		h := r.History()
		fs := findings.Group(&h, v.violations)
		for i := range fs {
			s.Findings = append(s.Findings, fs[i].Line(i+1, 200))
		}
	}
	return s
}

// names lists the invariants of a set.
func names(set model.Set) []string {
	out := []string{}
	for _, inv := range set.Members() {
		out = append(out, inv.String())
	}
	return out
}

// writeText prints the summary for a person.
func (s summary) writeText(w io.Writer) {
	fmt.Fprintf(w, "seed %d  profile %s  preset %s  scenario %s  version %s", s.Seed, s.Profile, s.Preset, s.Scenario, s.Version)
	if s.CrashAt != "" {
		fmt.Fprintf(w, "  crash-at %s", s.CrashAt)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "checksum %s  events %d  quiet after heal: %v\n", s.Checksum, s.Events, s.Quiet)
	fmt.Fprintf(w, "messages: published %d  accepted %d  delivered %d  duplicates %d  retransmits %d\n",
		s.Published, s.Accepted, s.Delivered, s.Duplicates, s.Retransmits)
	fmt.Fprintf(w, "crashes %d  faults: %s\n", s.Crashes, faultsText(s.Faults))
	fmt.Fprintf(w, "judged by %s: %s\n", judge(s.Judge).describe(s.Preset), strings.Join(s.Promised, ", "))
	if judge(s.Judge) == judgeSpec && strings.Join(s.PresetPromises, ",") != strings.Join(s.Promised, ",") {
		fmt.Fprintf(w, "  (preset %s itself promises only: %s)\n", s.Preset, strings.Join(s.PresetPromises, ", "))
	}
	if len(s.Violations) == 0 {
		fmt.Fprintln(w, "violations: none")
	} else {
		fmt.Fprintf(w, "findings: %d\n", len(s.Findings))
		for _, f := range s.Findings {
			fmt.Fprintf(w, "  %s\n", f)
		}
		fmt.Fprintf(w, "violations: %d\n", len(s.Violations))
		writeViolations(w, s.Violations)
	}
	if s.Unpromised != nil {
		fmt.Fprintf(w, "unpromised (informational, not failures): %d\n", len(s.Unpromised))
		writeViolations(w, s.Unpromised)
	}
	if s.Replay != "" {
		fmt.Fprintf(w, "replay: %s\n", s.Replay)
	}
}

// writeViolations prints one violation a line.
func writeViolations(w io.Writer, vs []violationJSON) {
	for _, v := range vs {
		fmt.Fprintf(w, "  %s\n", v.text())
	}
}

// faultsText prints faults by kind, sorted, or "none".
func faultsText(faults map[string]int) string {
	keys := sortedKeys(faults)
	if len(keys) == 0 {
		return "none"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, faults[k])
	}
	return strings.Join(parts, ", ")
}

// text formats a violation in one line: invariant, step, node, reason (its
// lists cut to their first few items: the JSON summary and results.jsonl
// keep the whole reason), and the other steps it rests on.
func (v violationJSON) text() string {
	on := ""
	if v.Node != "" {
		on = " on " + v.Node
	}
	s := fmt.Sprintf("%s at step %d%s: %s", v.Invariant, v.Step, on, sim.ShortReason(v.Reason, listedInText))
	if len(v.Events) > 1 {
		s += " (events " + stepsText(v.Events) + ")"
	}
	if v.ExplainedBy != "" {
		s += " (explained by " + v.ExplainedBy + ")"
	}
	return s
}

// stepsText lists history indexes, comma-separated.
func stepsText(steps []int) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ",")
}
