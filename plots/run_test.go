package plots

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMeasureIndependentOfWorkers checks that the sweep is the same for any
// number of workers.
func TestMeasureIndependentOfWorkers(t *testing.T) {
	want, err := Measure(fakeExperiment(), Config{Trials: 50, Seed: 11, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{0, 2, 3, 8, 1000} {
		got, err := Measure(fakeExperiment(), Config{Trials: 50, Seed: 11, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d workers: sweep differs from 1 worker", w)
		}
	}
}

// TestMeasureSeedMatters checks that another seed gives other counts, so
// the seed really drives the trials.
func TestMeasureSeedMatters(t *testing.T) {
	a, err := Measure(fakeExperiment(), Config{Trials: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Measure(fakeExperiment(), Config{Trials: 200, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.Points, b.Points) {
		t.Error("seeds 1 and 2 gave the same sweep")
	}
}

// TestMeasureShape checks the order and content of the points.
func TestMeasureShape(t *testing.T) {
	exp := fakeExperiment()
	s, err := Measure(exp, Config{Trials: 30, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != exp.Name || s.Title != exp.Title || s.XLabel != exp.XLabel || s.YLabel != exp.YLabel {
		t.Errorf("sweep titles %+v do not come from the experiment", s)
	}
	if len(s.Points) != len(exp.Variants)*len(exp.Xs) {
		t.Fatalf("%d points, want %d", len(s.Points), len(exp.Variants)*len(exp.Xs))
	}
	k := 0
	for _, v := range exp.Variants {
		for _, x := range exp.Xs {
			p := s.Points[k]
			k++
			rate, lo, hi, _ := Wilson(p.Failures, p.Trials)
			if p.Variant != v.Name || p.X != x || p.Trials != 30 || p.Rate != rate || p.Lo != lo || p.Hi != hi {
				t.Errorf("point %d = %+v, want variant %s x %v with its Wilson interval", k-1, p, v.Name, x)
			}
		}
	}
	if s.label("legacy") != "legacy behaviour" || s.label("other") != "other" {
		t.Errorf("labels %v", s.Labels)
	}
}

// TestTrialSeed pins the mixing function (the goldens depend on it) and
// checks that points and trials get distinct seeds and that the experiment
// name and seed take part.
func TestTrialSeed(t *testing.T) {
	if got, want := TrialSeed(1, "ack-order", 0, 0), TrialSeed(1, "ack-order", 0, 0); got != want {
		t.Fatalf("TrialSeed is not a function: %d then %d", got, want)
	}
	if got := mix64(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("mix64(0) = %#x, want SplitMix64's first output 0xe220a8397b1dcdaf", got)
	}
	seen := map[uint64]string{}
	for j := range 20 {
		for i := range 500 {
			s := TrialSeed(42, "x", j, i)
			if prev, dup := seen[s]; dup {
				t.Fatalf("point %d trial %d has the seed of %s", j, i, prev)
			}
			seen[s] = "another"
		}
	}
	if TrialSeed(42, "x", 0, 0) == TrialSeed(43, "x", 0, 0) || TrialSeed(42, "x", 0, 0) == TrialSeed(42, "y", 0, 0) {
		t.Error("the experiment seed or name does not change the trial seed")
	}
}

// TestMeasureProgress checks that progress counts every trial once, up to
// the total.
func TestMeasureProgress(t *testing.T) {
	var calls, last, total int
	cfg := Config{Trials: 7, Seed: 3, Workers: 3, Progress: func(done, all int) {
		calls++
		if done != last+1 {
			t.Errorf("progress went from %d to %d", last, done)
		}
		last, total = done, all
	}}
	if _, err := Measure(fakeExperiment(), cfg); err != nil {
		t.Fatal(err)
	}
	if want := 2 * 4 * 7; calls != want || last != want || total != want {
		t.Errorf("progress: %d calls, last %d of %d; want %d", calls, last, total, want)
	}
}

// TestMeasureTrialErrors checks that a trial's error and a trial's panic
// both come back as errors naming the run.
func TestMeasureTrialErrors(t *testing.T) {
	exp := fakeExperiment()
	exp.Trial = brokenTrial
	_, err := Measure(exp, Config{Trials: 5, Seed: 1, Workers: 1})
	if !errors.Is(err, errTrialBroken) || !containsAll(err.Error(), "fake", "legacy", "x=0.05", "seed=") {
		t.Errorf("error %v, want the trial's error naming experiment, variant, x and seed", err)
	}
	exp.Xs = []float64{0.1}
	_, err = Measure(exp, Config{Trials: 5, Seed: 1, Workers: 2})
	if err == nil || !containsAll(err.Error(), "panicked", "boom", "fixed", "x=0.1") {
		t.Errorf("error %v, want the panic naming variant and x", err)
	}
}

// TestMeasureValidates checks that bad experiments and configs are refused
// up front with a clear error.
func TestMeasureValidates(t *testing.T) {
	bad := map[string]func(*Experiment, *Config){
		"no name":       func(e *Experiment, _ *Config) { e.Name = "" },
		"no x values":   func(e *Experiment, _ *Config) { e.Xs = nil },
		"not a probab":  func(e *Experiment, _ *Config) { e.Xs = []float64{0.5, 1.5} },
		"no variants":   func(e *Experiment, _ *Config) { e.Variants = nil },
		"repeated":      func(e *Experiment, _ *Config) { e.Variants[1].Name = "legacy" },
		"no trial":      func(e *Experiment, _ *Config) { e.Trial = nil },
		"zero trials":   func(_ *Experiment, c *Config) { c.Trials = 0 },
		"minus workers": func(_ *Experiment, c *Config) { c.Workers = -1 },
	}
	for name, change := range bad {
		exp, cfg := fakeExperiment(), Config{Trials: 3}
		change(&exp, &cfg)
		_, err := Measure(exp, cfg)
		if !errors.Is(err, ErrBadExperiment) && !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: error %v, want ErrBadExperiment or ErrBadConfig", name, err)
		}
	}
}

// TestRunWritesFiles checks that Run writes the CSV, PNG and SVG into a new
// output dir, the CSV matching the returned sweep.
func TestRunWritesFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "nested")
	s, err := Run(fakeExperiment(), 10, 9, dir)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	if err := WriteCSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "fake.csv"))
	if err != nil || string(got) != csv.String() {
		t.Errorf("fake.csv = %q (%v), want the CSV of the returned sweep", got, err)
	}
	for _, name := range []string{"fake.png", "fake.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
