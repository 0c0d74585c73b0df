package plots

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// fakeReplay is a ReplayFunc that names its run.
func fakeReplay(v Variant, x float64, seed uint64) (string, error) {
	return fmt.Sprintf("run %s x=%v seed=%d\n", v.Name, x, seed), nil
}

// TestMeasureReplays: each variant that failed gets its first failing
// trial (lowest x, then lowest trial number), found again here by running
// fakeTrial in that order, with the ReplayFunc's plan; the result does not
// depend on the number of workers.
func TestMeasureReplays(t *testing.T) {
	exp := fakeExperiment()
	exp.Replay = fakeReplay
	s, err := Measure(exp, Config{Trials: 20, Seed: 4, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	var want []Replay
	for _, v := range exp.Variants {
	search:
		for j, x := range exp.Xs {
			for i := range 20 {
				seed := TrialSeed(4, exp.Name, j, i)
				if failed, _ := fakeTrial(v, x, seed); failed {
					plan, _ := fakeReplay(v, x, seed)
					want = append(want, Replay{Variant: v.Name, X: x, Trial: i, Seed: seed, Plan: plan})
					break search
				}
			}
		}
	}
	if len(want) != 2 || !reflect.DeepEqual(s.Replays, want) {
		t.Errorf("replays %+v\nwant %+v", s.Replays, want)
	}
	one, err := Measure(exp, Config{Trials: 20, Seed: 4, Workers: 1})
	if err != nil || !reflect.DeepEqual(one.Replays, s.Replays) {
		t.Errorf("with 1 worker: %+v (%v)", one.Replays, err)
	}
	exp.Replay = func(Variant, float64, uint64) (string, error) { return "", errTrialBroken }
	if _, err := Measure(exp, Config{Trials: 20, Seed: 4}); !errors.Is(err, errTrialBroken) || !strings.Contains(err.Error(), "replay plan") {
		t.Errorf("a failing ReplayFunc: error %v", err)
	}
}

// TestWriteReplays: Write puts each replay's plan next to the CSV as
// NAME.VARIANT.plan and removes the plan an earlier run left for a variant
// that has none now.
func TestWriteReplays(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ReplayFile("fake", "fixed"))
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := fakeExperiment()
	exp.Replay = fakeReplay
	s, err := Measure(exp, Config{Trials: 20, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	s.Replays = s.Replays[:1] // legacy only
	if err := Write(s, dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "fake.legacy.plan"))
	if err != nil || string(got) != s.Replays[0].Plan {
		t.Errorf("fake.legacy.plan = %q (%v), want %q", got, err, s.Replays[0].Plan)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale %s is still there (%v)", stale, err)
	}
}

// TestExperimentReplayFails measures a slice of the registered ack-order
// experiment (the legacy variant at its highest crash probability): the
// replay plan of its first failing trial parses, replays to the trial's
// checksum, and loses a message.
func TestExperimentReplayFails(t *testing.T) {
	exp, err := ByName("ack-order")
	if err != nil {
		t.Fatal(err)
	}
	exp.Xs = exp.Xs[len(exp.Xs)-1:]
	exp.Variants = exp.Variants[:1]
	s, err := Measure(exp, Config{Trials: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Replays) != 1 || s.Replays[0].Plan == "" {
		t.Fatalf("replays %+v, want one with a plan (20 legacy runs at %v lose a message)", s.Replays, exp.Xs[0])
	}
	r := s.Replays[0]
	plan, err := sim.ParsePlan(r.Plan)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sim.ConfigOf(plan.Header)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := trialConfig(exp.Fault, exp.Variants[0], r.X, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	want, got := sim.Run(orig, plan), sim.Run(cfg, plan)
	if got.Err != nil || got.Checksum() != want.Checksum() {
		t.Fatalf("replay checksum %016x (%v), trial %016x", got.Checksum(), got.Err, want.Checksum())
	}
	if vs := model.Check(got.History(), model.Options{Only: model.SetOf(model.NoLoss)}); len(vs) == 0 {
		t.Error("the replayed trial loses no message")
	}
}

// TestCommittedReplaysFail: every replay plan under docs/experiments names
// a variant of its experiment, parses whole, and its run breaks that
// experiment's invariants, as the trial it was saved from did.
func TestCommittedReplaysFail(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "experiments", "*.plan"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no replay plans under docs/experiments (%v)", err)
	}
	for _, file := range files {
		name, variant, _ := strings.Cut(strings.TrimSuffix(filepath.Base(file), ".plan"), ".")
		exp, err := ByName(name)
		if err != nil || !slices.Contains(variantNames(exp), variant) {
			t.Errorf("%s: no experiment %q with a variant %q (%v)", file, name, variant, err)
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := sim.ParsePlan(string(text))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		cfg, err := sim.ConfigOf(plan.Header)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		res := sim.Run(cfg, plan)
		if res.Err != nil || len(model.Check(res.History(), model.Options{Only: invariants(exp.Failure)})) == 0 {
			t.Errorf("%s: the run (err %v) does not break the experiment's invariants", file, res.Err)
		}
	}
}

// variantNames lists an experiment's variant names.
func variantNames(exp Experiment) []string {
	var names []string
	for _, v := range exp.Variants {
		names = append(names, v.Name)
	}
	return names
}
