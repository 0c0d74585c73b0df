package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mqttlab/mqttlab/findings"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/seqchart"
	"github.com/mqttlab/mqttlab/sim"
)

// writeChart writes the sequence chart of a run (-html): its history, the
// violations it is judged by (the first finding's clearest occurrence
// leads the page), its plan and the command that replays it.
func writeChart(path string, s summary, planText string, r sim.Result, j judge, all bool) error {
	v := j.judgeRun(r, all)
	title := fmt.Sprintf("seed %d · preset %s · profile %s · scenario %s · v%s", s.Seed, s.Preset, s.Profile, s.Scenario, s.Version)
	if s.CrashAt != "" {
		title += " · crash-at " + s.CrashAt
	}
	notes := []string{fmt.Sprintf("judged by %s · checksum %s · quiet after heal: %v · faults: %s",
		j.describe(s.Preset), s.Checksum, s.Quiet, faultsText(s.Faults))}
	if len(v.unpromised) > 0 {
		notes = append(notes, fmt.Sprintf("%d violation(s) of invariants not promised here (informational): first %s", len(v.unpromised), v.unpromised[0]))
	}
	h := r.History()
	var b bytes.Buffer
	err := seqchart.Write(&b, seqchart.Run{Title: title, Replay: s.Replay, Plan: planText, Notes: notes,
		History: h, Violations: findingsFirst(findings.Group(&h, v.violations), v.violations)})
	if err != nil {
		return err
	}
	return writeUserFile(path, b.Bytes())
}

// writeLiveChart writes chart.html into a live run's directory: its
// history, the violations of what it promised, its fault schedule and the
// command that reruns the schedule.
func writeLiveChart(dir string, rep *live.Report, replay string) error {
	schedule, _ := os.ReadFile(filepath.Join(dir, "schedule.txt")) // written just before; the chart does without
	var notes []string
	for _, l := range strings.Split(rep.Summary(), "\n") {
		for _, head := range []string{"broker ", "faults ", "messages ", "verdict "} {
			if strings.HasPrefix(l, head) {
				notes = append(notes, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	h, vs, note := chartWindow(rep.History, findingsFirst(rep.Findings, rep.Verdict.Violations), chartMaxEvents)
	if note != "" {
		notes = append(notes, note)
	}
	var b bytes.Buffer
	err := seqchart.Write(&b, seqchart.Run{Title: fmt.Sprintf("live run · seed %d", rep.Seed), Replay: replay,
		Plan: string(schedule), Notes: notes, History: h, Violations: vs})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "chart.html"), b.Bytes(), 0o644)
}

// findingsFirst orders a chart's violations so that the page opens on the
// first finding: its clearest occurrence leads, citing the finding's whole
// flow excerpt; every violation follows as it was.
func findingsFirst(fs []findings.Finding, vs []model.Violation) []model.Violation {
	if len(fs) == 0 {
		return vs
	}
	f := &fs[0]
	lead := f.Occurrences[f.Clearest]
	lead.Events = model.Cite(lead.Step, f.Excerpt...)
	lead.Reason = fmt.Sprintf("finding 1 of %d: %s (%s)", len(fs), f.Title(), findings.Reword(lead.Reason, f.Version))
	return append([]model.Violation{lead}, vs...)
}

// chartMaxEvents bounds the events a live run's chart holds: a longer run
// is charted around its first finding (the page of a 500,000-event run
// would not open).
const chartMaxEvents = 100_000

// chartWindow cuts a history longer than max events to the window of max
// events around the events the first violation cites (the first finding's
// flow, see findingsFirst), and keeps the violations whose step is inside
// it, renumbered; note says what was cut ("" when nothing was).
func chartWindow(h model.History, vs []model.Violation, max int) (model.History, []model.Violation, string) {
	n := len(h.Events)
	if n <= max {
		return h, vs, ""
	}
	lo, hi := 0, 0
	if len(vs) > 0 && len(vs[0].Events) > 0 {
		lo, hi = vs[0].Events[0], vs[0].Events[len(vs[0].Events)-1]
	}
	if span := hi - lo + 1; span < max {
		lo -= (max - span) / 2
	}
	lo = min(n-max, maxInt(0, lo))
	hi = lo + max // exclusive
	var out []model.Violation
	for _, v := range vs {
		if v.Step < lo || v.Step >= hi {
			continue
		}
		v.Step -= lo
		var evs []int
		for _, i := range v.Events {
			if i >= lo && i < hi {
				evs = append(evs, i-lo)
			}
		}
		v.Events = evs
		v.Reason = fmt.Sprintf("%s (history step %d)", v.Reason, v.Step+lo)
		out = append(out, v)
	}
	note := fmt.Sprintf("a window of the history: steps %d to %d of %d, around the first finding (the whole history is history.jsonl; chart steps count from the window's start)", lo, hi-1, n)
	return model.History{Events: h.Events[lo:hi]}, out, note
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
