package plots

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// ErrBadConfig is returned for a run configuration that cannot run.
var ErrBadConfig = errors.New("plots: bad run config")

// Config says how an experiment is measured.
type Config struct {
	Trials  int    // runs per variant and x value; at least 1
	Seed    uint64 // the experiment seed every trial seed derives from
	Workers int    // goroutines running trials; 0 means GOMAXPROCS
	// Progress, if set, is called after each finished trial with the number
	// done and the total, always from the goroutine that called Measure.
	Progress func(done, total int)
}

// validate checks the config up front.
func (c Config) validate() error {
	if c.Trials < 1 {
		return fmt.Errorf("%w: %d trials, need at least 1", ErrBadConfig, c.Trials)
	}
	if c.Workers < 0 {
		return fmt.Errorf("%w: %d workers, need 0 (GOMAXPROCS) or more", ErrBadConfig, c.Workers)
	}
	return nil
}

// TrialSeed is the seed of trial number trial at x index point of the
// experiment called name, derived from the experiment seed by SplitMix64
// mixing. It does not depend on the variant: every variant sees the same
// seeds (common random numbers), so the gap between two variants comes from
// their policies, not from different draws.
func TrialSeed(seed uint64, name string, point, trial int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	z := mix64(seed ^ h.Sum64())
	z = mix64(z ^ uint64(point))
	return mix64(z ^ uint64(trial))
}

// mix64 is the SplitMix64 output function: a bijection on uint64 that
// spreads every input bit over every output bit.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Run measures exp with trials runs per point from seed, writes NAME.csv,
// NAME.png, NAME.svg and the replay plans (Write) into outDir (created if
// missing) and returns the sweep.
func Run(exp Experiment, trials int, seed uint64, outDir string) (Sweep, error) {
	s, err := Measure(exp, Config{Trials: trials, Seed: seed})
	if err != nil {
		return Sweep{}, err
	}
	return s, Write(s, outDir)
}

// Write writes the sweep as NAME.csv, NAME.png and NAME.svg into outDir,
// creating the directory if missing, and each replay's plan as
// NAME.VARIANT.plan (ReplayFile); a variant without one has its plan file
// of an earlier run removed, so every plan in outDir belongs to the CSV.
func Write(s Sweep, outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("plots: output dir: %w", err)
	}
	if err := writeFile(filepath.Join(outDir, s.Name+".csv"), func(f *os.File) error { return WriteCSV(f, s) }); err != nil {
		return err
	}
	for _, format := range []string{FormatPNG, FormatSVG} {
		path := filepath.Join(outDir, s.Name+"."+format)
		if err := writeFile(path, func(f *os.File) error { return WriteChart(f, s, format) }); err != nil {
			return err
		}
	}
	return writeReplays(s, outDir)
}

// writeReplays writes the sweep's replay plans and removes stale ones.
func writeReplays(s Sweep, outDir string) error {
	for _, v := range s.Variants() {
		path := filepath.Join(outDir, ReplayFile(s.Name, v))
		i := slices.IndexFunc(s.Replays, func(r Replay) bool { return r.Variant == v && r.Plan != "" })
		if i < 0 {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("plots: %w", err)
			}
			continue
		}
		if err := os.WriteFile(path, []byte(s.Replays[i].Plan), 0o644); err != nil {
			return fmt.Errorf("plots: %w", err)
		}
	}
	return nil
}

// writeFile creates path, fills it with fill and closes it.
func writeFile(path string, fill func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}

// Measure runs every trial of exp and returns the sweep: points in variant
// order, then x order. Trials run over cfg.Workers goroutines; the result
// does not depend on their number.
func Measure(exp Experiment, cfg Config) (Sweep, error) {
	if err := exp.Validate(); err != nil {
		return Sweep{}, err
	}
	if err := cfg.validate(); err != nil {
		return Sweep{}, err
	}
	failed, err := runTrials(exp, cfg)
	if err != nil {
		return Sweep{}, err
	}
	s, err := tally(exp, cfg.Trials, failed)
	if err != nil {
		return Sweep{}, err
	}
	s.Replays, err = replays(exp, cfg, failed)
	return s, err
}

// replays finds each variant's first failing trial (trials are indexed
// variant, then x, then trial number, so the first is at the lowest x) and
// asks the experiment for its plan.
func replays(exp Experiment, cfg Config, failed []bool) ([]Replay, error) {
	g := grid{points: len(exp.Xs), trials: cfg.Trials}
	var out []Replay
	for k := 0; k < len(failed); k++ {
		if !failed[k] {
			continue
		}
		v, j, i := g.split(k)
		variant := exp.Variants[v]
		r := Replay{Variant: variant.Name, X: exp.Xs[j], Trial: i, Seed: TrialSeed(cfg.Seed, exp.Name, j, i)}
		if exp.Replay != nil {
			plan, err := exp.Replay(variant, r.X, r.Seed)
			if err != nil {
				return nil, fmt.Errorf("plots: %s variant %s x=%v seed=%d: replay plan: %w", exp.Name, variant.Name, r.X, r.Seed, err)
			}
			r.Plan = plan
		}
		out = append(out, r)
		k = (v+1)*g.points*g.trials - 1 // on to the next variant
	}
	return out, nil
}

// grid indexes the trials of an experiment: trial k is trial k%T of x index
// (k/T)%J of variant k/(T*J).
type grid struct{ points, trials int }

// split returns the variant, x index and trial number of trial k.
func (g grid) split(k int) (v, j, i int) {
	return k / (g.trials * g.points), (k / g.trials) % g.points, k % g.trials
}

// runTrials runs all trials of exp over the workers and returns, per trial
// index, whether it failed.
func runTrials(exp Experiment, cfg Config) ([]bool, error) {
	g := grid{points: len(exp.Xs), trials: cfg.Trials}
	total := len(exp.Variants) * g.points * g.trials
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, total)
	failed := make([]bool, total)
	errs := make([]error, total)
	var next atomic.Int64
	var stop atomic.Bool
	done := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				k := int(next.Add(1) - 1)
				if k >= total {
					return
				}
				failed[k], errs[k] = runOne(exp, cfg.Seed, g, k)
				if errs[k] != nil {
					stop.Store(true)
				}
				done <- struct{}{}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	n := 0
	for range done {
		n++
		if cfg.Progress != nil {
			cfg.Progress(n, total)
		}
	}
	return failed, firstError(errs)
}

// firstError returns the error of the lowest trial index, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// runOne runs trial k, turning a panic of the trial function into an error
// that names the run so it can be replayed.
func runOne(exp Experiment, seed uint64, g grid, k int) (failed bool, err error) {
	v, j, i := g.split(k)
	variant, x := exp.Variants[v], exp.Xs[j]
	s := TrialSeed(seed, exp.Name, j, i)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plots: %s variant %s x=%v seed=%d: trial panicked: %v", exp.Name, variant.Name, x, s, r)
		}
	}()
	failed, err = exp.Trial(variant, x, s)
	if err != nil {
		return false, fmt.Errorf("plots: %s variant %s x=%v seed=%d: %w", exp.Name, variant.Name, x, s, err)
	}
	return failed, nil
}

// tally counts the failures per variant and x and builds the sweep.
func tally(exp Experiment, trials int, failed []bool) (Sweep, error) {
	s := Sweep{Name: exp.Name, Title: exp.Title, XLabel: exp.XLabel, YLabel: exp.YLabel, Labels: exp.labels()}
	k := 0
	for _, v := range exp.Variants {
		for _, x := range exp.Xs {
			n := 0
			for range trials {
				if failed[k] {
					n++
				}
				k++
			}
			rate, lo, hi, err := Wilson(n, trials)
			if err != nil {
				return Sweep{}, err
			}
			s.Points = append(s.Points, Point{X: x, Variant: v.Name, Failures: n, Trials: trials, Rate: rate, Lo: lo, Hi: hi})
		}
	}
	return s, nil
}
