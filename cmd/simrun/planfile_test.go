package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncatedPlanRefused: a failing seed's saved plan cut to its first 200
// lines, or to its header, is refused by replay and run -plan (exit 2, one
// line naming the file and what is wrong), where before it replayed as a
// pass with another checksum.
func TestTruncatedPlanRefused(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "seed7.plan")
	simrun(t, "run", "-seed", "7", "-preset", "legacy", "-profile", "crashy", "-scenario", "standard", "-save", whole).want(t, exitViolation)
	text := fileText(t, whole)
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 250 {
		t.Fatalf("plan of %d lines, want a long one", len(lines))
	}
	cut := writeFile(t, dir, "cut.plan", strings.Join(lines[:200], ""))
	header := writeFile(t, dir, "header.plan", text[:strings.Index(text, "---\n")+4])
	edited := writeFile(t, dir, "edited.plan", strings.Replace(text, "qos=1", "qos=0", 1))
	cases := []struct {
		args []string
		file string
		want string
	}{
		{[]string{"replay", cut}, cut, "no end line after"},
		{[]string{"replay", header}, header, "no end line after 0 ops"},
		{[]string{"run", "-plan", cut}, cut, "cut short"},
		{[]string{"run", "-plan", header, "-seed", "3"}, header, "cut short"},
		{[]string{"replay", edited}, edited, "changed or damaged"},
	}
	for _, c := range cases {
		r := simrun(t, c.args...).want(t, exitUsage)
		if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "plan file "+c.file) || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q, want one line naming %s and %q", c.args, r.stderr, c.file, c.want)
		}
	}
	simrun(t, "replay", whole).want(t, exitViolation)
}

// TestLegacyPlanReplaysWithWarning: a plan written before end lines (format
// 1, none) replays to the same checksum with a one-line warning.
func TestLegacyPlanReplaysWithWarning(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "seed9.plan")
	orig := summaryJSON(t, exitOK, "run", "-seed", "9", "-save", whole)
	text := fileText(t, whole)
	text = strings.Replace(text[:strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1], "mqttlab-plan 2\n", "mqttlab-plan 1\n", 1)
	legacy := writeFile(t, dir, "legacy.plan", text)
	for _, args := range [][]string{{"replay", legacy}, {"run", "-plan", legacy}} {
		r := simrun(t, append(args, "-json")...).want(t, exitOK)
		if !strings.Contains(r.stdout, orig.Checksum) {
			t.Errorf("%v: checksum %s not in\n%s", args, orig.Checksum, r.stdout)
		}
		if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "warning: plan file "+legacy) {
			t.Errorf("%v: stderr %q, want one warning line naming the file", args, r.stderr)
		}
	}
}
