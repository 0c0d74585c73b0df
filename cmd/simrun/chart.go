package main

import (
	"bytes"
	"fmt"

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
