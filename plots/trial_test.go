package plots

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// TestTrialConfig checks how each fault becomes a sim config: crash faults
// crash their node once, at the drawn crash point; state loss sets the
// profile's per-step probability; x = 0 injects nothing.
func TestTrialConfig(t *testing.T) {
	v := Variant{Name: "fixed", Preset: engine.Preset{Name: "fixed"}}
	cases := []struct {
		fault    Fault
		x        float64
		node     string
		stateppm int
	}{
		{FaultSubscriberCrash, 0.5, "s1", 0},
		{FaultPublisherReboot, 0.5, "p1", 0},
		{FaultBrokerCrash, 0.5, sim.BrokerName, 0},
		{FaultSubscriberStateLoss, 0.02, "", 20_000},
		{FaultSubscriberCrash, 0, "", 0},
	}
	for _, c := range cases {
		cfg, err := trialConfig(c.fault, v, c.x, 99)
		if err != nil {
			t.Fatalf("fault %d: %v", c.fault, err)
		}
		if cfg.Crash.Node != c.node || (c.node != "") != (cfg.Crash.K > 0) {
			t.Errorf("fault %d x=%v: crash %+v, want node %q", c.fault, c.x, cfg.Crash, c.node)
		}
		if cfg.Custom == nil || cfg.Custom.StateLossPPM != c.stateppm || cfg.Custom.CrashPointPPM != 0 || cfg.Custom.CrashPPM != 0 {
			t.Errorf("fault %d x=%v: profile %+v, want state loss %d ppm and no other fault", c.fault, c.x, cfg.Custom, c.stateppm)
		}
		if cfg.Seed != 99 || cfg.Preset.Name != "fixed" || cfg.Scenario != scenario {
			t.Errorf("fault %d: config %+v does not carry seed, preset and scenario", c.fault, cfg)
		}
	}
	if _, err := trialConfig(Fault(77), v, 0.1, 1); !errors.Is(err, ErrBadExperiment) {
		t.Errorf("unknown fault: error %v, want ErrBadExperiment", err)
	}
	trial := simTrial(FaultSubscriberCrash, Failure(77))
	if _, err := trial(v, 0.1, 1); !errors.Is(err, ErrBadExperiment) {
		t.Errorf("unknown failure: error %v, want ErrBadExperiment", err)
	}
}

// TestFirstCrash checks the crash-point draw: never at probability 0, at the
// first point at probability 1, deterministic, and earlier on average for a
// higher probability.
func TestFirstCrash(t *testing.T) {
	if k := firstCrash(5, 0); k != 0 {
		t.Errorf("p=0: first crash %d, want none", k)
	}
	if k := firstCrash(5, 1_000_000); k != 1 {
		t.Errorf("p=1: first crash %d, want 1", k)
	}
	if firstCrash(5, 1000) != firstCrash(5, 1000) {
		t.Error("firstCrash is not a function of its seed")
	}
	sum := func(p int) (s int) {
		for seed := range uint64(200) {
			s += firstCrash(seed, p)
		}
		return s
	}
	// Mean 1/p: about 1000 points at 1000 ppm, 100 at 10000 ppm.
	if lo, hi := sum(10_000), sum(1000); !(lo*3 < hi) {
		t.Errorf("200 draws sum to %d at 1%% and %d at 0.1%%: want the rarer crash later", lo, hi)
	}
}

// TestInvariants checks the failure kinds map to the model's invariants.
func TestInvariants(t *testing.T) {
	want := map[Failure]model.Set{
		FailLoss:      model.SetOf(model.NoLoss),
		FailStuck:     model.SetOf(model.NoStuck, model.PubrelAnswered),
		FailDuplicate: model.SetOf(model.QoS2ExactlyOnce),
		Failure(0):    0,
	}
	for f, s := range want {
		if got := invariants(f); got != s {
			t.Errorf("invariants(%d) = %v, want %v", f, got, s)
		}
	}
	if ppm(0.0005) != 500 || ppm(1) != 1_000_000 || ppm(0) != 0 {
		t.Errorf("ppm: %d %d %d", ppm(0.0005), ppm(1), ppm(0))
	}
}

// TestExperimentGolden checks the CSV of a small real sweep, simulator and
// model included, against its golden file.
func TestExperimentGolden(t *testing.T) {
	exp, err := ByName("ack-order")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Measure(exp, Config{Trials: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "ack-order.csv", buf.Bytes())
}

// TestExperimentCanaries runs each registered experiment on a few trials:
// with no fault no variant fails, and the legacy variant fails somewhere in
// the upper half of the sweep, so each experiment catches the bug it is for.
func TestExperimentCanaries(t *testing.T) {
	for _, e := range Experiments() {
		calm := e
		calm.Xs = []float64{0}
		s, err := Measure(calm, Config{Trials: 4, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		for _, p := range s.Points {
			if p.Failures != 0 {
				t.Errorf("%s: variant %s fails %d of %d runs without faults", e.Name, p.Variant, p.Failures, p.Trials)
			}
		}
		legacy := e
		legacy.Variants = e.Variants[:1]
		legacy.Xs = e.Xs[len(e.Xs)/2:]
		s, err = Measure(legacy, Config{Trials: 10, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		failures := 0
		for _, p := range s.Points {
			failures += p.Failures
		}
		if failures == 0 {
			t.Errorf("%s: legacy variant %s never failed in %d runs at x >= %v", e.Name, legacy.Variants[0].Name, 10*len(legacy.Xs), legacy.Xs[0])
		}
	}
}
