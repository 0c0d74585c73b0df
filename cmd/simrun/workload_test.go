package main

import (
	"os"
	"path/filepath"
	"strconv"
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
	if !strings.Contains(direct.stdout, "-scenario swarm -workload pubs=2,wills=on") {
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
		{[]string{"run", "-scenario", "standard", "-workload", "wills=on"}, "only -scenario swarm has a workload to pin"},
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
	if out := r.stderr + r.stdout; !strings.Contains(out, "scenario swarm, version mixed") || strings.Contains(out, "-workload") {
		t.Errorf("campaign output does not name the swarm world:\n%s\n%s", r.stdout, r.stderr)
	}
	recs := readRecords(t, dir)
	if len(recs) != 4 || recs[0].Scenario != "swarm" {
		t.Errorf("records %+v, want 4 of scenario swarm", recs)
	}
}

// TestOneDefaultWorld: run, shrink and campaign default to one world (the
// campaign's: swarm); each names it on its first line, with the version
// the clients really used ("mixed" when each draws its own, "3.1.1" when
// pinned); a seed the campaign reports failing runs to the same checksum
// with run's defaults and shrinks with shrink's.
func TestOneDefaultWorld(t *testing.T) {
	dir := t.TempDir()
	c := simrun(t, "campaign", "-seeds", "12", "-preset", "legacy", "-shrink", "0", "-workers", "1", "-out", dir).want(t, exitViolation)
	first, _, _ := strings.Cut(c.stdout, "\n")
	if !strings.Contains(first, "preset legacy, profile swarm, scenario swarm, version mixed, judge spec") {
		t.Errorf("campaign's first line %q", first)
	}
	var failing record
	for _, r := range readRecords(t, dir) {
		if r.failed() && r.Error == "" {
			failing = r
			break
		}
	}
	if failing.Checksum == "" {
		t.Fatalf("no failing seed in 12 legacy seeds:\n%s", c.stdout)
	}
	seed := strconv.FormatUint(failing.Seed, 10)
	run := summaryJSON(t, exitViolation, "run", "-seed", seed, "-preset", "legacy")
	if run.Checksum != failing.Checksum || run.Version != "mixed" || run.Scenario != "swarm" {
		t.Errorf("run -seed %s: checksum %s version %s scenario %s; the campaign's checksum %s", seed, run.Checksum, run.Version, run.Scenario, failing.Checksum)
	}
	out := filepath.Join(t.TempDir(), "min.plan")
	s := simrun(t, "shrink", "-seed", seed, "-preset", "legacy", "-budget", "5", "-out", out).want(t, exitViolation)
	first, _, _ = strings.Cut(s.stdout, "\n")
	if first != "shrink: seed "+seed+", preset legacy, profile swarm, scenario swarm, version mixed, judge spec" {
		t.Errorf("shrink's first line %q", first)
	}
	plan := fileText(t, filepath.Join(dir, planName(failing.Seed)))
	if !strings.Contains(plan, "\nversion mixed\n") || !strings.Contains(fileText(t, out), "\nversion mixed\n") {
		t.Errorf("plan headers do not say version mixed:\n%.300s", plan)
	}
	pinned := simrun(t, "run", "-seed", "3", "-workload", "version=4").want(t, exitOK)
	if first, _, _ := strings.Cut(pinned.stdout, "\n"); !strings.HasSuffix(first, "scenario swarm  version 3.1.1") {
		t.Errorf("-workload version=4: first line %q", first)
	}
	simrun(t, "run", "-seed", "3", "-workload", "version=4", "-version", "5").want(t, exitUsage)
	if same := summaryJSON(t, exitOK, "run", "-seed", "3", "-version", "3"); same.Checksum != summaryJSON(t, exitOK, "run", "-seed", "3", "-workload", "version=4").Checksum {
		t.Errorf("-version 3 and -workload version=4 ran different worlds")
	}
}
