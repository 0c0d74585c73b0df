package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// Defaults of shrink's bounds.
const (
	defaultShrinkTimeout = 60 * time.Second
	// progressEvery is how often shrink prints its progress line.
	progressEvery = time.Second
)

// shrinkJob is one shrink: the failing run and its bounds.
type shrinkJob struct {
	cfg     sim.Config // with SkipCheck: the judge checks
	plan    sim.Plan
	judge   judge
	budget  int           // candidate runs, 0: no bound
	timeout time.Duration // 0: no bound
	// cpu makes timeout a bound on the process's CPU time rather than wall
	// time (shrink -bench, which runs one shrink at a time).
	cpu  bool
	html string // -html: write the shrunk run's sequence chart here
	ctx  context.Context
	// progress, if set, sees each candidate run.
	progress func(sim.ShrinkProgress)
}

// shrunkPlan is a finished shrink.
type shrunkPlan struct {
	sim.Shrunk
	took        time.Duration // wall time
	cpu         time.Duration // CPU time of the process meanwhile
	interrupted bool          // the context was cancelled (Ctrl-C)
	timedOut    bool          // the timeout ended it
}

// runShrink shrinks job's plan while it still violates the invariant of
// its first violation under job.judge, until no single change keeps the
// failure or a bound (budget, timeout, cancelled context) stops it.
func runShrink(job shrinkJob) (shrunkPlan, error) {
	began, cpuBegan := time.Now(), cpuTime()
	var out shrunkPlan
	over := func() bool {
		if job.cpu {
			return cpuTime()-cpuBegan > job.timeout
		}
		return time.Since(began) > job.timeout
	}
	opts := sim.ShrinkOptions{
		Judge:   func(r sim.Result) []model.Violation { return job.judge.judgeRun(r, false).violations },
		MaxRuns: job.budget,
		Stop: func() bool {
			out.interrupted = job.ctx.Err() != nil
			out.timedOut = job.timeout > 0 && over()
			return out.interrupted || out.timedOut
		},
		Progress: job.progress,
	}
	s, err := sim.Shrink(job.cfg, job.plan, opts)
	out.Shrunk, out.took, out.cpu = s, time.Since(began), cpuTime()-cpuBegan
	return out, err
}

// headline is the plan file's first line: "# shrunk from N ops to M ops in D".
func (s shrunkPlan) headline() string {
	return fmt.Sprintf("# shrunk from %d ops to %d ops in %s", s.FromOps, len(s.Plan.Ops), s.took.Round(time.Millisecond))
}

// fileText is the shrunk plan file: the headline, the invariant it
// violates and how the shrink ended, then the plan.
func (s shrunkPlan) fileText() string {
	return s.Plan.Commented(strings.TrimPrefix(s.headline(), "# "),
		fmt.Sprintf("violates %s: %s", s.Target, oneLine(s.Violation.Reason, 200)), s.ending())
}

// ending says how the shrink ended and what it tried.
func (s shrunkPlan) ending() string {
	how := "no single change keeps the failure"
	switch {
	case s.interrupted:
		how = "interrupted: the smallest failing plan so far"
	case s.timedOut:
		how = "stopped by the timeout: the smallest failing plan so far"
	case s.Stopped:
		how = "stopped by the run budget: the smallest failing plan so far"
	}
	return fmt.Sprintf("%s (%d runs, %d accepted)", how, s.Runs, s.Accepted)
}

// endWord is the last progress line's word for how the shrink ended.
func (s shrunkPlan) endWord() string {
	switch {
	case s.interrupted:
		return "interrupted"
	case s.timedOut:
		return "stopped by the timeout"
	case s.Stopped:
		return "stopped by the run budget"
	}
	return "done"
}

// oneLine cuts text to at most n bytes on one line.
func oneLine(text string, n int) string {
	text = strings.ReplaceAll(text, "\n", " ")
	if len(text) > n {
		return text[:n] + "..."
	}
	return text
}

// minPlanPath is the default output of shrinking a plan file: its name
// with .min.plan for .plan.
func minPlanPath(path string) string {
	return strings.TrimSuffix(path, ".plan") + ".min.plan"
}

// cmdShrink shrinks a failing plan file or seed.
func (e *env) cmdShrink(args []string) int {
	fs := e.newFlagSet("shrink", "FILE | -seed N [world flags] [flags] | -bench [flags]",
		"Shrinks a failing run (a plan file, or a seed of a world) to a small plan that still\n"+
			"violates the same invariant: pins random crashes and cuts as plan ops, deletes ops\n"+
			"(halving chunks, then single ops, a node's or a kind's ops, a fault with its repair;\n"+
			"in small plans with an armed crash or cut re-aimed at another point or packet),\n"+
			"merges advances, simplifies arguments (QoS, retain, clean start, durations, message\n"+
			"ids) and the fault profile, in rounds until no single change keeps the failure. Every\n"+
			"candidate is a real run; the same input gives the same plan. Writes the plan file\n"+
			"(first line '# shrunk from N ops to M ops in D') and prints its replay command;\n"+
			"progress goes to stderr. Ctrl-C, -timeout or -budget end it with the smallest failing\n"+
			"plan found so far.\n"+
			"With -bench, measures the shrinker over the failing seeds of a campaign per preset.")
	seed := fs.Uint64("seed", 0, "shrink this seed of the world the flags choose (instead of a plan FILE)")
	out := fs.String("out", "", "write the shrunk plan to `FILE` (default: FILE with .min.plan, or out/shrink/seed-N.min.plan)")
	fs.StringVar(out, "o", "", "the same as -out (its older spelling)")
	budget := fs.Int("budget", 0, "stop after `N` candidate runs (0: no bound)")
	timeout := fs.Duration("timeout", defaultShrinkTimeout, "stop after this long (0: no bound); with -bench, per seed")
	html := fs.String("html", "", "write the shrunk run's sequence chart to `FILE` (one self-contained HTML page)")
	var bf benchFlags
	bf.add(fs)
	var wf worldFlags
	wf.add(fs)
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("shrink", err)
	}
	if *budget < 0 || *timeout < 0 {
		return e.fail("shrink", badUsage("shrink", "-budget and -timeout must not be negative"))
	}
	w, err := wf.resolve("shrink")
	if err != nil {
		return e.fail("shrink", err)
	}
	if bf.on {
		if len(pos) > 0 || fs.isSet("seed") {
			return e.fail("shrink", badUsage("shrink", "-bench takes no FILE and no -seed"))
		}
		return e.shrinkBench(bf, w, *budget, *timeout)
	}
	job := shrinkJob{judge: w.judge, budget: *budget, timeout: *timeout, html: *html}
	path, err := e.shrinkInput(fs, w, pos, *seed, &job)
	if err != nil {
		return e.fail("shrink", err)
	}
	if path, err = shrinkOutput(pos, path, *out); err != nil {
		return e.fail("shrink", err)
	}
	fmt.Fprintf(e.stdout, "shrink: seed %d, %s\n", job.cfg.Seed, describeConfig(job.cfg, job.judge))
	e.catchSignals()
	job.ctx = e.ctx
	return e.shrinkTo(job, path)
}

// shrinkOutput is where the shrunk plan goes: -out if given, which must
// not be the input plan FILE (shrink never overwrites its input); else the
// default path, or when a file is there already (an earlier shrink, a
// committed fixture) the first free "NAME-2.min.plan", "NAME-3.min.plan".
func shrinkOutput(pos []string, def, out string) (string, error) {
	if out != "" {
		if len(pos) == 1 && samePath(pos[0], out) {
			return "", badUsage("shrink", "-out %s is the plan being shrunk: shrink never overwrites its input; choose another -out", out)
		}
		return out, nil
	}
	base := strings.TrimSuffix(def, ".min.plan")
	path := def
	for n := 2; exists(path); n++ {
		path = fmt.Sprintf("%s-%d.min.plan", base, n)
	}
	return path, nil
}

// samePath reports whether a and b name one file (the same path, or links
// to one file).
func samePath(a, b string) bool {
	if x, err := filepath.Abs(a); err == nil {
		if y, err := filepath.Abs(b); err == nil && x == y {
			return true
		}
	}
	return sameFile(a, b)
}

// exists reports whether something is at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// shrinkInput fills job's config and plan from the plan FILE or the -seed,
// and returns the default output path.
func (e *env) shrinkInput(fs *flagSet, w world, pos []string, seed uint64, job *shrinkJob) (string, error) {
	switch {
	case len(pos) > 1:
		return "", badUsage("shrink", "want one plan FILE, got %d arguments", len(pos))
	case len(pos) == 1 && fs.isSet("seed"):
		return "", badUsage("shrink", "give a plan FILE or -seed, not both")
	case len(pos) == 1:
		for _, f := range []string{"profile", "preset", "scenario", "version"} {
			if fs.isSet(f) {
				return "", badUsage("shrink", "-%s chooses the world of -seed; a plan FILE's header chooses its own", f)
			}
		}
		cfg, plan, err := e.readPlan("shrink", pos[0])
		job.cfg, job.plan = cfg, plan
		return minPlanPath(pos[0]), err
	case !fs.isSet("seed"):
		return "", badUsage("shrink", "want a plan FILE or -seed N")
	}
	job.cfg = w.config(seed)
	plan, err := sim.Generate(job.cfg)
	job.plan = plan
	return filepath.Join("out", "shrink", fmt.Sprintf("seed-%d.min.plan", seed)), err
}

// shrinkTo runs the shrink, writes the plan file to path, replays it and
// prints its summary and replay command. Exit status: 1 (the shrunk plan
// fails), 130 when interrupted, 0 when the run did not fail at all.
func (e *env) shrinkTo(job shrinkJob, path string) int {
	var last time.Time
	job.progress = func(p sim.ShrinkProgress) {
		if e.afterShrinkRun != nil {
			e.afterShrinkRun(p.Runs)
		}
		if now := time.Now(); now.Sub(last) >= progressEvery {
			last = now
			fmt.Fprintf(e.stderr, "shrink: %d ops left, %d runs tried, %d accepted (%s)\n", p.Ops, p.Runs, p.Accepted, p.Pass)
		}
	}
	s, err := runShrink(job)
	if errors.Is(err, sim.ErrNotFailing) {
		fmt.Fprintf(e.stdout, "nothing to shrink: the run does not fail (%v)\n", err)
		return exitOK
	}
	if err != nil {
		return e.fail("shrink", err)
	}
	if err := writeUserFile(path, []byte(s.fileText())); err != nil {
		return e.fail("shrink", ioFailure(err, "writing the shrunk plan"))
	}
	fmt.Fprintf(e.stderr, "shrink: %d ops left, %d runs tried, %d accepted (%s)\n", len(s.Plan.Ops), s.Runs, s.Accepted, s.endWord())
	replay := fmt.Sprintf("%s replay %s%s", replayPrefix, absPath(path), job.judge.flagArg())
	r := sim.Run(s.Config, s.Plan)
	if r.Err != nil {
		return e.fail("shrink", r.Err)
	}
	sum := summarize(s.Config, r, job.judge, false)
	sum.Replay = replay
	if job.html != "" {
		if err := writeChart(job.html, sum, s.fileText(), r, job.judge, false); err != nil {
			return e.fail("shrink", ioFailure(err, "writing the chart"))
		}
	}
	fmt.Fprintln(e.stdout, strings.TrimPrefix(s.headline(), "# "))
	fmt.Fprintf(e.stdout, "%s\nwrote %s\n", s.ending(), path)
	sum.writeText(e.stdout)
	if s.interrupted {
		fmt.Fprintf(e.stderr, "simrun shrink: interrupted; wrote the smallest failing plan so far; replay: %s\n", replay)
		return exitInterrupted
	}
	fmt.Fprintf(e.stderr, "simrun shrink: %s violated by a %d-op plan; replay: %s\n", s.Target, len(s.Plan.Ops), replay)
	return exitViolation
}
