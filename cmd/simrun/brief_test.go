package main

import (
	"strings"
	"testing"
)

// TestStuckReasonBounded: a stuck legacy run (swarm seed 4 leaves 74
// messages undelivered) prints a text line with a few of them and a count,
// while the JSON summary keeps every one and the cited events.
func TestStuckReasonBounded(t *testing.T) {
	args := []string{"run", "-seed", "4", "-preset", "legacy", "-scenario", "standard"}
	text := simrun(t, args...).want(t, exitViolation).stdout
	var line string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "NoStuck at step") {
			line = l
		}
	}
	if !strings.Contains(line, "(+69 more, 74 in all)") || strings.Count(line, "<-") != listedInText {
		t.Errorf("text line not bounded to %d ids and a count: %s", listedInText, line)
	}
	s := summaryJSON(t, exitViolation, args...)
	if len(s.Violations) != 1 || strings.Count(s.Violations[0].Reason, "<-") != 74 {
		t.Fatalf("JSON summary lost the full list: %+v", s.Violations)
	}
	if ev := s.Violations[0].Events; len(ev) != 2 || ev[1] != s.Violations[0].Step {
		t.Errorf("JSON violation cites %v, want LivenessStart and its step %d", ev, s.Violations[0].Step)
	}
}
