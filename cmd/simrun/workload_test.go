package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWorkloadFlag: -workload pins the swarm scenario's dimensions on
// top of the defaults; the replay command and the saved plan's workload
// line carry them, and the saved plan replays to the same checksum.
func TestRunWorkloadFlag(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "s.plan")
	r := simrun(t, "run", "-scenario", "swarm", "-seed", "4", "-workload", "pubs=2,wills=on,clear=draw", "-save", plan).want(t, exitOK)
	text, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "\nworkload pubs=2 ") || !strings.Contains(string(text), " clear=draw ") ||
		!strings.Contains(string(text), " wills=on ") || !strings.Contains(string(text), " payload=draw ") {
		t.Errorf("saved plan's workload line:\n%s", text)
	}
	direct := simrun(t, "run", "-scenario", "swarm", "-seed", "4", "-workload", "pubs=2,wills=on,clear=draw").want(t, exitOK)
	if !strings.Contains(direct.stdout, "-scenario swarm -version 5 -workload pubs=2,wills=on") {
		t.Errorf("replay command lacks the pins:\n%s", direct.stdout)
	}
	back := simrun(t, "replay", plan).want(t, exitOK)
	if sum := checksumLine(r.stdout); sum == "" || checksumLine(back.stdout) != sum || checksumLine(direct.stdout) != sum {
		t.Errorf("checksums: run %q, replay %q, direct %q", sum, checksumLine(back.stdout), checksumLine(direct.stdout))
	}
}

// checksumLine returns the "checksum ..." line of a run's output.
func checksumLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "checksum ") {
			return strings.Fields(l)[1]
		}
	}
	return ""
}

// TestWorkloadFlagErrors: a bad -workload, or one on a scenario without a
// workload, is a usage error (exit 2) naming the problem.
func TestWorkloadFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-scenario", "swarm", "-workload", "pubs=99"}, `pubs="99" is not a number in 1..8`},
		{[]string{"run", "-scenario", "swarm", "-workload", "colour=red"}, `unknown key "colour"`},
		{[]string{"run", "-workload", "wills=on"}, "only -scenario swarm has a workload to pin"},
		{[]string{"campaign", "-seeds", "1", "-workload", "wills=maybe"}, `wills="maybe" is not one of off, on`},
	} {
		r := simrun(t, c.args...).want(t, exitUsage)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, r.stderr, c.want)
		}
	}
}

// TestCampaignDefaultsToSwarm: a campaign without -scenario runs the swarm
// scenario with the default workload (nothing pinned: no -workload), and
// says so in its replay commands.
func TestCampaignDefaultsToSwarm(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "campaign", "-seeds", "4", "-out", dir).want(t, exitOK)
	if out := r.stderr + r.stdout; !strings.Contains(out, "-scenario swarm -version 5") || strings.Contains(out, "-workload") {
		t.Errorf("campaign output does not name the swarm world:\n%s\n%s", r.stdout, r.stderr)
	}
	recs := readRecords(t, dir)
	if len(recs) != 4 || recs[0].Scenario != "swarm" {
		t.Errorf("records %+v, want 4 of scenario swarm", recs)
	}
}
