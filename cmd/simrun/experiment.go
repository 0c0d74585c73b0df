package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mqttlab/mqttlab/plots"
)

// cmdExperiment runs a named failure-rate sweep, or lists them.
func (e *env) cmdExperiment(args []string) int {
	fs := e.newFlagSet("experiment", "NAME [flags] | -list", "Runs a named failure-rate sweep (package plots) and writes NAME.csv, NAME.png and\n"+
		"NAME.svg; NAME all runs every experiment. Deterministic from -seed: the same flags give the same CSV with any -workers.")
	list := fs.Bool("list", false, "list the experiments")
	out := fs.String("out", filepath.Join("out", "experiments"), "output `DIR`")
	trials := fs.intFlag("trials", 200, 1, "`N` runs per variant and fault probability")
	seed := fs.uint64Flag("seed", 1, 0, "experiment seed `S` every trial seed derives from")
	workers := fs.intFlag("workers", runtime.NumCPU(), 1, "`W` goroutines running trials")
	pos, err := fs.parse(args)
	if err != nil {
		return e.fail("experiment", err)
	}
	if *list {
		if len(pos) > 0 {
			return e.fail("experiment", badUsage("experiment", "-list takes no NAME, got %q", pos[0]))
		}
		var rows [][2]string
		for _, x := range plots.Experiments() {
			rows = append(rows, [2]string{x.Name, x.Doc})
		}
		writeRows(e.stdout, rows)
		return exitOK
	}
	if len(pos) != 1 {
		return e.fail("experiment", badUsage("experiment", "want one experiment NAME (one of %s, or all), got %d arguments", strings.Join(plots.Names(), ", "), len(pos)))
	}
	if *trials < 1 {
		return e.fail("experiment", badUsage("experiment", "bad -trials %d: want at least 1", *trials))
	}
	if *workers < 1 {
		return e.fail("experiment", badUsage("experiment", "bad -workers %d: want at least 1", *workers))
	}
	cfg := plots.Config{Trials: *trials, Seed: *seed, Workers: *workers}
	if pos[0] == "all" {
		return e.runAllExperiments(cfg, *out)
	}
	exp, err := plots.ByName(pos[0])
	if err != nil {
		return e.fail("experiment", badUsage("experiment", "%v (or all)", err))
	}
	return e.runExperiment(exp, cfg, *out)
}

// runAllExperiments runs every experiment in registry order into one
// directory: the one command that regenerates docs/experiments.
func (e *env) runAllExperiments(cfg plots.Config, out string) int {
	for _, exp := range plots.Experiments() {
		if code := e.runExperiment(exp, cfg, out); code != exitOK {
			return code
		}
	}
	return exitOK
}

// runExperiment measures exp, writes its files and prints the sweep.
func (e *env) runExperiment(exp plots.Experiment, cfg plots.Config, out string) int {
	total := len(exp.Variants) * len(exp.Xs) * cfg.Trials
	bar := e.newBar(int64(total), "trials", "experiment "+exp.Name)
	cfg.Progress = func(done, _ int) { bar.set(int64(done)) }
	s, err := plots.Measure(exp, cfg)
	bar.finish()
	if err != nil {
		if errors.Is(err, plots.ErrBadConfig) || errors.Is(err, plots.ErrBadExperiment) {
			return e.fail("experiment", badUsage("experiment", "%v", err))
		}
		return e.fail("experiment", err)
	}
	if err := plots.Write(s, out); err != nil {
		return e.fail("experiment", ioFailure(err, "writing the charts"))
	}
	fmt.Fprintf(e.stdout, "experiment %s: %d trials per point, seed %d\n", exp.Name, cfg.Trials, cfg.Seed)
	fmt.Fprintf(e.stdout, "%-12s %-10s %9s %9s %s\n", "variant", "x", "failures", "rate", "95% interval")
	for _, p := range s.Points {
		fmt.Fprintf(e.stdout, "%-12s %-10g %4d/%-4d %8.2f%% [%.2f%%, %.2f%%]\n", p.Variant, p.X, p.Failures, p.Trials, 100*p.Rate, 100*p.Lo, 100*p.Hi)
	}
	for _, ext := range []string{"csv", "png", "svg"} {
		fmt.Fprintf(e.stdout, "wrote %s\n", filepath.Join(out, s.Name+"."+ext))
	}
	return exitOK
}
