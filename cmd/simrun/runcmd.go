package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/sim"
)

// outputFlags are the flags run and replay share.
type outputFlags struct {
	all   bool
	trace string
	json  bool
	html  string
}

func (o *outputFlags) add(fs *flagSet) {
	fs.BoolVar(&o.all, "all", false, "also list violations of invariants the preset does not promise (informational)")
	fs.StringVar(&o.trace, "trace", "", "write the run's trace to `FILE`")
	fs.BoolVar(&o.json, "json", false, "print the summary as JSON")
	fs.StringVar(&o.html, "html", "", "write the run's sequence chart to `FILE`: one self-contained HTML page (violation first, an arrow per packet, faults as bands)")
}

// cmdRun runs one seed (or a plan file under flag overrides).
func (e *env) cmdRun(args []string) int {
	fs := e.newFlagSet("run", "[flags]", "Runs one seed of a scenario and prints what happened: messages, faults, and the\n"+
		"violations of the invariants the preset promises (model.CheckPromised).\n"+
		"With -plan, runs that plan file; flags given explicitly override its header.")
	seed := fs.uint64Flag("seed", 1, 0, "the seed `S` of every draw")
	planPath := fs.String("plan", "", "run the plan in `FILE` instead of generating one")
	save := fs.String("save", "", "write the run's plan file to `FILE` (replay it with 'simrun replay FILE')")
	var wf worldFlags
	wf.add(fs)
	var out outputFlags
	out.add(fs)
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("run", err)
	}
	if len(pos) > 0 {
		return e.fail("run", badUsage("run", "unexpected argument %q (run takes only flags)", pos[0]))
	}
	w, err := wf.resolve("run")
	if err != nil {
		return e.fail("run", err)
	}
	cfg, plan, err := e.runPlan(fs, w, *seed, *planPath)
	if err != nil {
		return e.fail("run", err)
	}
	replay := fmt.Sprintf("%s run -seed %d %s", replayPrefix, cfg.Seed, w.flagArgs())
	if *planPath != "" {
		replay = fmt.Sprintf("%s run -plan %s%s", replayPrefix, absPath(*planPath), planOverrideArgs(fs, w, *seed))
	}
	if *save != "" {
		if err := writeUserFile(*save, []byte(plan.String())); err != nil {
			return e.fail("run", ioFailure(err, "saving the plan"))
		}
		replay = fmt.Sprintf("%s replay %s%s", replayPrefix, absPath(*save), w.judge.flagArg())
	}
	return e.execute("run", cfg, plan, w.judge, out, replay)
}

// runPlan returns the config and plan run executes: a generated plan of seed
// in world w, or the plan file at path with the flags given explicitly
// overriding its header.
func (e *env) runPlan(fs *flagSet, w world, seed uint64, path string) (sim.Config, sim.Plan, error) {
	if path == "" {
		cfg := w.config(seed)
		plan, err := sim.Generate(cfg)
		return cfg, plan, err
	}
	cfg, plan, err := e.readPlan("run", path)
	if err != nil {
		return cfg, plan, err
	}
	if fs.isSet("seed") {
		cfg.Seed = seed
	}
	if fs.isSet("profile") {
		cfg.Profile, cfg.Custom = w.profile, nil
	}
	if fs.isSet("preset") {
		cfg.Preset = w.preset
	}
	if fs.isSet("scenario") {
		cfg.Scenario = w.scenario
	}
	if fs.isSet("workload") {
		cfg.Workload = w.workload
		if level, ok := w.workload.PinnedVersion(); ok {
			cfg.Version = level
		}
	}
	if fs.isSet("version") {
		cfg.Version = w.level
		if cfg.Scenario == sim.SwarmScenario { // every client's version, as the flag says
			pinned, err := cfg.Workload.With("version=" + strconv.Itoa(int(w.level)))
			if err != nil {
				return cfg, plan, badUsage("run", "bad -version: %v", err)
			}
			cfg.Workload = pinned
		}
	}
	plan.Header = sim.HeaderOf(cfg)
	return cfg, plan, nil
}

// planOverrideArgs returns the flags run -plan was given explicitly (they
// override the plan's header) and the judge: what its replay command repeats
// after "-plan FILE". Flags not given stay out, so the header's own lines,
// a faults or policy line included, decide the rest.
func planOverrideArgs(fs *flagSet, w world, seed uint64) string {
	var b strings.Builder
	if fs.isSet("seed") {
		fmt.Fprintf(&b, " -seed %d", seed)
	}
	if fs.isSet("preset") {
		b.WriteString(" -preset " + w.preset.Name)
	}
	if fs.isSet("profile") {
		b.WriteString(" -profile " + w.profile)
	}
	if fs.isSet("scenario") {
		b.WriteString(" -scenario " + w.scenario)
	}
	if fs.isSet("version") {
		b.WriteString(" -version " + versionName(w.level))
	}
	if fs.isSet("workload") {
		b.WriteString(w.workloadArg())
	}
	return b.String() + w.judge.flagArg()
}

// readPlan reads and parses a plan file and the config its header asks for.
// A plan that does not prove it is whole (cut short, changed after it was
// written) is refused; a plan of the format before end lines is read with
// a one-line warning on stderr.
func (e *env) readPlan(cmd, path string) (sim.Config, sim.Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sim.Config{}, sim.Plan{}, fmt.Errorf("plan file: %w", err)
	}
	plan, err := sim.ParsePlan(string(data))
	if err != nil {
		return sim.Config{}, sim.Plan{}, fmt.Errorf("plan file %s: %w", path, err)
	}
	cfg, err := sim.ConfigOf(plan.Header)
	if err != nil {
		return sim.Config{}, sim.Plan{}, fmt.Errorf("plan file %s: %w", path, err)
	}
	if plan.Header.Format == sim.LegacyPlanFormat {
		fmt.Fprintf(e.stderr, "simrun %s: warning: plan file %s is of format %d, written before plans ended with an end line: nothing proves it whole; replaying it as it is\n", cmd, path, sim.LegacyPlanFormat)
	}
	cfg.SkipCheck = true
	return cfg, plan, nil
}

// cmdReplay runs a saved plan file.
func (e *env) cmdReplay(args []string) int {
	fs := e.newFlagSet("replay", "FILE [flags]", "Replays a plan file (as saved by 'run -save' or a campaign): its header carries seed,\n"+
		"profile, preset, scenario and version (and a custom profile's faults line, a mutant or custom\n"+
		"preset's policy line), so the run and its checksum are the original's.")
	var out outputFlags
	out.add(fs)
	var wf worldFlags
	wf.addJudge(fs)
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("replay", err)
	}
	j, err := parseJudge(wf.judge)
	if err != nil {
		return e.fail("replay", badUsage("replay", "bad -judge %q: %v", wf.judge, err))
	}
	if len(pos) != 1 {
		return e.fail("replay", badUsage("replay", "want exactly one plan FILE, got %d arguments", len(pos)))
	}
	cfg, plan, err := e.readPlan("replay", pos[0])
	if err != nil {
		return e.fail("replay", err)
	}
	return e.execute("replay", cfg, plan, j, out, fmt.Sprintf("%s replay %s%s", replayPrefix, absPath(pos[0]), j.flagArg()))
}

// execute runs plan under cfg, judges it by j, prints the summary and returns
// the exit status: 1 when a promised invariant was violated.
func (e *env) execute(cmd string, cfg sim.Config, plan sim.Plan, j judge, out outputFlags, replay string) int {
	r := sim.Run(cfg, plan)
	if r.Err != nil {
		return e.fail(cmd, r.Err)
	}
	if out.trace != "" {
		if err := writeUserFile(out.trace, []byte(r.Trace())); err != nil {
			return e.fail(cmd, ioFailure(err, "writing the trace"))
		}
	}
	s := summarize(cfg, r, j, out.all)
	s.Replay = replay
	if out.html != "" {
		if err := writeChart(out.html, s, plan.String(), r, j, out.all); err != nil {
			return e.fail(cmd, ioFailure(err, "writing the chart"))
		}
	}
	if out.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return e.fail(cmd, ioFailure(err, "writing the summary"))
		}
	} else {
		s.writeText(e.stdout)
	}
	if len(s.Violations) > 0 {
		fmt.Fprintf(e.stderr, "simrun %s: %d violation(s) of promised invariants; replay: %s\n", cmd, len(s.Violations), replay)
		return exitViolation
	}
	return exitOK
}

// writeUserFile writes a file the user named (-save, -trace), creating its
// directory first.
func writeUserFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
