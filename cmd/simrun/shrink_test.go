package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mqttlab/mqttlab/sim"
)

// headlineRE is the first line of a shrunk plan file.
var headlineRE = regexp.MustCompile(`^# shrunk from (\d+) ops to (\d+) ops in \S+\n`)

// shrunkFile reads a shrunk plan file and returns it without its headline
// (which carries the wall time) and its end line (whose checksum covers the
// headline), and its plan.
func shrunkFile(t *testing.T, path string) (string, sim.Plan) {
	t.Helper()
	text := fileText(t, path)
	m := headlineRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s does not start with the shrunk line:\n%s", path, text)
	}
	plan, err := sim.ParsePlan(text)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if m[2] != strconv.Itoa(len(plan.Ops)) {
		t.Errorf("%s: headline says %s ops, the plan has %d", path, m[2], len(plan.Ops))
	}
	body, _, _ := strings.Cut(text[len(m[0]):], "\nend ops=")
	return body, plan
}

// TestShrinkSeed: shrink -seed writes a small plan whose replay fails with
// the invariant of the seed's first violation, prints that replay command,
// and exits 1; shrinking again writes the same plan.
func TestShrinkSeed(t *testing.T) {
	dir := t.TempDir()
	orig := summaryJSON(t, exitViolation, "run", "-seed", "2", "-preset", "legacy")
	out := filepath.Join(dir, "a.min.plan")
	r := simrun(t, "shrink", "-seed", "2", "-preset", "legacy", "-o", out).want(t, exitViolation)
	replay := "replay: " + replayPrefix + " replay " + out
	if !strings.Contains(r.stdout, replay) || !strings.Contains(r.stderr, "ops left") || !strings.Contains(r.stdout, "no single change keeps the failure") {
		t.Errorf("output lacks the replay command, progress or ending:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	body, plan := shrunkFile(t, out)
	if len(plan.Ops) > 20 {
		t.Errorf("shrunk to %d ops, want at most 20", len(plan.Ops))
	}
	back := summaryJSON(t, exitViolation, "replay", out)
	if !slices.ContainsFunc(back.Violations, func(v violationJSON) bool { return v.Invariant == orig.Violations[0].Invariant }) {
		t.Errorf("replay violates %+v, not %s", back.Violations, orig.Violations[0].Invariant)
	}
	again := filepath.Join(dir, "b.min.plan")
	simrun(t, "shrink", "-seed", "2", "-preset", "legacy", "-o", again).want(t, exitViolation)
	if body2, _ := shrunkFile(t, again); body2 != body {
		t.Errorf("shrinking twice gave two plans:\n%s\n--- then ---\n%s", body, body2)
	}
}

// TestShrinkFile: shrink FILE writes FILE.min.plan beside it (a saved
// failing plan); a passing plan has nothing to shrink.
func TestShrinkFile(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "seed-4.plan")
	simrun(t, "run", "-seed", "4", "-preset", "legacy", "-scenario", "standard", "-save", saved).want(t, exitViolation)
	r := simrun(t, "shrink", saved).want(t, exitViolation)
	min := filepath.Join(dir, "seed-4.min.plan")
	if !strings.Contains(r.stdout, "replay: "+replayPrefix+" replay "+min) {
		t.Errorf("no replay of %s:\n%s", min, r.stdout)
	}
	shrunkFile(t, min)
	simrun(t, "replay", min).want(t, exitViolation)
	passing := filepath.Join(dir, "fixed.plan")
	simrun(t, "run", "-seed", "1", "-save", passing).want(t, exitOK)
	if r := simrun(t, "shrink", passing).want(t, exitOK); !strings.Contains(r.stdout, "nothing to shrink") {
		t.Errorf("passing plan: %s", r.stdout)
	}
}

// TestShrinkInterrupted: a Ctrl-C (the cancelled context a signal gives)
// part way writes the smallest failing plan found so far, which replays to
// the violation, and exits 130.
func TestShrinkInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, ctx: ctx,
		afterShrinkRun: func(runs int) {
			if runs == 10 {
				cancel()
			}
		}}
	out := filepath.Join(dir, "cut.min.plan")
	if code := e.run([]string{"shrink", "-seed", "0", "-preset", "legacy", "-scenario", "standard", "-o", out}); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout.String(), stderr.String())
	}
	body, plan := shrunkFile(t, out)
	if !strings.Contains(body, "# interrupted: the smallest failing plan so far (10 runs") {
		t.Errorf("file does not say it was interrupted after 10 runs:\n%s", body)
	}
	full, _ := sim.Generate(sim.Config{Seed: 0, Profile: "swarm"})
	if len(plan.Ops) >= len(full.Ops) {
		t.Errorf("interrupted plan has %d ops, the seed's %d: nothing kept from the runs before the interrupt", len(plan.Ops), len(full.Ops))
	}
	simrun(t, "replay", out).want(t, exitViolation)
	if !strings.Contains(stderr.String(), "accepted (interrupted)\n") || strings.Contains(stderr.String(), "(done)") {
		t.Errorf("the progress line does not end interrupted: %s", stderr.String())
	}
}

// TestCampaignShrinkInterrupted: a signal during a failing seed's shrink
// leaves a campaign that says so (exit 130; the summary line, summary.txt
// and the seed's record: interrupted), and -resume redoes that shrink in
// full.
func TestCampaignShrinkInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, ctx: ctx, afterShrinkRun: func(runs int) {
		if runs == 5 {
			cancel()
		}
	}}
	args := []string{"campaign", "-seeds", "6", "-workers", "1", "-preset", "legacy", "-scenario", "standard", "-out", dir}
	if code := e.run(args); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInterrupted, stdout.String(), stderr.String())
	}
	var cut record
	for _, r := range readRecords(t, dir) {
		if r.ShrinkCut {
			cut = r
		}
	}
	if cut.MinOps == 0 {
		t.Fatalf("no record of the interrupted shrink:\n%s", stdout.String())
	}
	summary := fileText(t, filepath.Join(dir, "summary.txt"))
	for _, text := range []string{summary, stdout.String()} {
		if !strings.Contains(text, "failing (") || !strings.Contains(text, "; INCOMPLETE: interrupted") || !strings.Contains(text, "1 shrink(s) cut short") {
			t.Errorf("the summary does not say interrupted:\n%s", text)
		}
	}
	r := simrun(t, append(args, "-resume")...).want(t, exitViolation)
	for _, rec := range readRecords(t, dir) {
		if rec.Seed == cut.Seed && (rec.ShrinkCut || rec.MinOps > cut.MinOps) {
			t.Errorf("seed %d after -resume: %+v (interrupted at %d ops)", cut.Seed, rec, cut.MinOps)
		}
	}
	if strings.Contains(r.stdout, "INCOMPLETE") || strings.Contains(fileText(t, filepath.Join(dir, "summary.txt")), "interrupted") {
		t.Errorf("resumed campaign still says interrupted:\n%s", r.stdout)
	}
}

// TestShrinkUsage: bad combinations are usage errors naming the problem.
func TestShrinkUsage(t *testing.T) {
	dir := t.TempDir()
	plan := writeFile(t, dir, "x.plan", "mqttlab-plan 1\nseed 1\nversion 5\n---\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"shrink"}, "want a plan FILE or -seed N"},
		{[]string{"shrink", plan, "-seed", "3"}, "not both"},
		{[]string{"shrink", plan, "-preset", "legacy"}, "-preset chooses the world of -seed"},
		{[]string{"shrink", plan, plan}, "want one plan FILE"},
		{[]string{"shrink", "-seed", "1", "-budget", "-1"}, "must not be negative"},
		{[]string{"shrink", "-bench", "-seed", "1"}, "-bench takes no FILE"},
		{[]string{"shrink", "-bench", "-bench-presets", "nosuch"}, "bad -bench-presets"},
		{[]string{"shrink", filepath.Join(dir, "missing.plan")}, "plan file"},
	}
	for _, c := range cases {
		r := simrun(t, c.args...).want(t, exitUsage)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, r.stderr, c.want)
		}
	}
}

// TestShrinkBench: the benchmark table has a line per preset and one for
// all, with the share shrunk small and the percentiles.
func TestShrinkBench(t *testing.T) {
	r := simrun(t, "shrink", "-bench", "-bench-seeds", "3", "-bench-presets", "legacy", "-bench-sample", "1",
		"-bench-csv", filepath.Join(t.TempDir(), "b.csv")).want(t, exitOK)
	for _, want := range []string{"<=20 ops", "ops before p50/p90", "\nlegacy ", "\nall "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestPercentile: nearest-rank percentiles.
func TestPercentile(t *testing.T) {
	xs := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want int }{{50, 5}, {90, 9}, {100, 10}, {1, 1}} {
		if got := percentile(xs, c.p); got != c.want {
			t.Errorf("p%d = %d, want %d", c.p, got, c.want)
		}
	}
	if percentile([]int{}, 50) != 0 || percentile([]int{7}, 90) != 7 {
		t.Error("empty or single")
	}
	if got := spread([]uint64{1, 2, 3, 4, 5, 6}, 3); len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 5 {
		t.Errorf("spread: %v", got)
	}
}

// TestCampaignShrinks: a campaign shrinks each failing seed it saves (on by
// default): seed-N.min.plan beside seed-N.plan, replaying to the seed's
// first invariant; results.jsonl and the summary carry the sizes; -shrink 0
// saves no shrunk plan.
func TestCampaignShrinks(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "campaign", "-seeds", "3", "-preset", "legacy", "-scenario", "standard", "-out", dir).want(t, exitViolation)
	recs := readRecords(t, dir)
	failing := 0
	for _, rec := range recs {
		if !rec.failed() {
			continue
		}
		failing++
		if rec.MinOps == 0 || rec.Ops <= rec.MinOps {
			t.Errorf("seed %d: ops %d -> %d", rec.Seed, rec.Ops, rec.MinOps)
		}
		min := filepath.Join(dir, minPlanName(rec.Seed))
		if _, plan := shrunkFile(t, min); len(plan.Ops) != rec.MinOps {
			t.Errorf("seed %d: %s has %d ops, the record %d", rec.Seed, min, len(plan.Ops), rec.MinOps)
		}
		back := summaryJSON(t, exitViolation, "replay", min)
		if !slices.ContainsFunc(back.Violations, func(v violationJSON) bool { return v.Invariant == rec.First.Invariant }) {
			t.Errorf("seed %d: shrunk plan violates %+v, not %s", rec.Seed, back.Violations, rec.First.Invariant)
		}
		if !strings.Contains(r.stdout, "replay "+min) {
			t.Errorf("seed %d: no replay command of %s printed", rec.Seed, min)
		}
	}
	if failing == 0 {
		t.Fatal("no failing legacy seed among 0..2")
	}
	if want := "shrunk: " + strconv.Itoa(failing) + " of " + strconv.Itoa(failing) + " failing seeds, to "; !strings.Contains(r.stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, r.stdout)
	}
	off := t.TempDir()
	simrun(t, "campaign", "-seeds", "1", "-preset", "legacy", "-scenario", "standard", "-shrink", "0", "-out", off).want(t, exitViolation)
	if mins, _ := filepath.Glob(filepath.Join(off, "*.min.plan")); len(mins) > 0 {
		t.Errorf("-shrink 0 saved %v", mins)
	}
	if r := simrun(t, "campaign", "-shrink", "-1s").want(t, exitUsage); !strings.Contains(r.stderr, "bad -shrink") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// TestShrinkSIGINT: a real SIGINT to a shrink under way (the binary run as
// a child) writes the smallest failing plan so far and exits 130. Seed 761
// of volatile-qos2 takes seconds to shrink; the signal goes as soon as the
// first progress line shows.
func TestShrinkSIGINT(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "cut.min.plan")
	cmd := exec.Command(exe, "shrink", "-seed", "761", "-preset", "volatile-qos2", "-scenario", "standard", "-o", out)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var errText strings.Builder
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "ops left") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout.String(), errText.String())
	}
	body, _ := shrunkFile(t, out)
	if !strings.Contains(body, "# interrupted: the smallest failing plan so far") {
		t.Errorf("the plan file does not say it was interrupted:\n%s", body)
	}
	simrun(t, "replay", out).want(t, exitViolation)
}

// TestShrinkNeverOverwrites: shrink never overwrites its input (-out FILE
// naming it is refused, exit 2) and by default no file that is there
// already: with x.min.plan present (a committed fixture, an earlier
// shrink) it writes x-2.min.plan.
func TestShrinkNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "x.plan")
	simrun(t, "run", "-seed", "4", "-preset", "legacy", "-scenario", "standard", "-save", saved).want(t, exitViolation)
	fixture := writeFile(t, dir, "x.min.plan", "a committed fixture\n")
	r := simrun(t, "shrink", saved, "-budget", "5").want(t, exitViolation)
	next := filepath.Join(dir, "x-2.min.plan")
	if fileText(t, fixture) != "a committed fixture\n" || !strings.Contains(r.stdout, "wrote "+next) {
		t.Errorf("the fixture was overwritten or %s not written:\n%s", next, r.stdout)
	}
	shrunkFile(t, next)
	before := fileText(t, saved)
	simrun(t, "shrink", saved, "-out", filepath.Join(dir, ".", "x.plan")).want(t, exitUsage)
	if fileText(t, saved) != before {
		t.Error("shrink overwrote its input")
	}
}

// TestShrinkBenchCampaignStep: shrink -bench's campaign step (the seeds
// run before any shrink) shows its progress line on stderr and stops at a
// signal between two seeds: exit 130, a line saying where it stopped, the
// table of what was done and the CSV file.
func TestShrinkBenchCampaignStep(t *testing.T) {
	for _, c := range []struct {
		name      string
		interrupt int // cancel after this many seeds (0: never)
		want      int
		stdout    []string
	}{
		{"whole", 0, exitOK, []string{"\nlegacy ", "\nall "}},
		{"interrupted", 2, exitInterrupted, []string{"interrupted in the campaign of legacy after 2 of 4 seeds", "\nall ",
			"interrupted: the table covers the seeds shrunk so far"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr bytes.Buffer
			e := &env{stdout: &stdout, stderr: &stderr, ctx: ctx, progressEvery: 1, afterResult: func(done int) {
				if done == c.interrupt {
					cancel()
				}
			}}
			csvPath := filepath.Join(t.TempDir(), "b.csv")
			code := e.run([]string{"shrink", "-bench", "-bench-seeds", "4", "-bench-presets", "legacy", "-bench-sample", "1",
				"-scenario", "standard", "-bench-csv", csvPath})
			if code != c.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.want, stdout.String(), stderr.String())
			}
			for _, want := range c.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), "shrink bench: campaign legacy: 1/4 seeds done") {
				t.Errorf("stderr has no progress line of the campaign step:\n%s", stderr.String())
			}
			if _, err := os.Stat(csvPath); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestShrinkBenchSIGTERM: a real SIGTERM during shrink -bench's campaign
// step stops it (the process catches it): exit 130, having said where.
func TestShrinkBenchSIGTERM(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "shrink", "-bench", "-bench-seeds", "1000000", "-bench-presets", "fixed")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	head, err := rd.ReadString('\n') // printed once the signals are caught
	if err != nil || !strings.HasPrefix(head, "shrink bench: seeds 0..999999") {
		cmd.Process.Kill()
		t.Fatalf("first line %q, %v", head, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	rest.ReadFrom(rd)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d (%v), want %d\nstdout:\n%s%s\nstderr:\n%s", code, cmd.ProcessState, exitInterrupted, head, rest.String(), errb.String())
	}
	if !strings.Contains(rest.String(), "interrupted in the campaign of fixed after ") {
		t.Errorf("stdout does not say where it stopped:\n%s", rest.String())
	}
}
