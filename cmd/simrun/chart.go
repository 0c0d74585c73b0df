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
// violations it is judged by (the first leads the page), its plan and
// the command that replays it.
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
	var b bytes.Buffer
	err := seqchart.Write(&b, seqchart.Run{Title: title, Replay: s.Replay, Plan: planText, Notes: notes,
		History: r.History(), Violations: v.violations})
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
	var b bytes.Buffer
	err := seqchart.Write(&b, seqchart.Run{Title: fmt.Sprintf("live run · seed %d", rep.Seed), Replay: replay,
		Plan: string(schedule), Notes: notes, History: rep.History, Violations: findingsFirst(rep.Findings, rep.Verdict.Violations)})
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
