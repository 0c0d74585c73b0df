package plots

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// TestTrialPlanReplays: every variant of every experiment, at a fault
// probability that injects faults, saved as a plan file and replayed
// through sim.ParsePlan and sim.ConfigOf, is the trial's run: same checksum,
// same verdict.
func TestTrialPlanReplays(t *testing.T) {
	for _, exp := range Experiments() {
		x := exp.Xs[len(exp.Xs)-1]
		for _, v := range exp.Variants {
			seed := TrialSeed(3, exp.Name, len(exp.Xs)-1, 0)
			plan, err := TrialPlan(exp, v, x, seed)
			if err != nil {
				t.Fatalf("%s/%s: %v", exp.Name, v.Name, err)
			}
			text := plan.String()
			if !strings.Contains(text, "\nfaults ") {
				t.Errorf("%s/%s: the trial's custom profile is not in its plan:\n%.600s", exp.Name, v.Name, text)
			}
			back, err := sim.ParsePlan(text)
			if err != nil {
				t.Fatalf("%s/%s: %v", exp.Name, v.Name, err)
			}
			cfg, err := sim.ConfigOf(back.Header)
			if err != nil {
				t.Fatalf("%s/%s: %v", exp.Name, v.Name, err)
			}
			orig, err := trialConfig(exp.Fault, v, x, seed)
			if err != nil {
				t.Fatal(err)
			}
			want, got := sim.Run(orig, plan), sim.Run(cfg, back)
			if want.Err != nil || got.Err != nil || got.Checksum() != want.Checksum() {
				t.Errorf("%s/%s: replay checksum %016x (%v), trial %016x (%v)", exp.Name, v.Name, got.Checksum(), got.Err, want.Checksum(), want.Err)
				continue
			}
			failed, err := exp.Trial(v, x, seed)
			only := model.Options{Only: invariants(exp.Failure)}
			if err != nil || failed != (len(model.Check(got.History(), only)) > 0) {
				t.Errorf("%s/%s: trial failed=%v (%v), replay disagrees", exp.Name, v.Name, failed, err)
			}
		}
	}
}

// TestTrialErrorHoldsPlan: a simulated run that does not complete (here an
// engine that refuses its unset policies) returns ErrSim with its plan file.
func TestTrialErrorHoldsPlan(t *testing.T) {
	v := Variant{Name: "broken", Preset: engine.Preset{Name: "broken"}}
	_, err := simTrial(FaultSubscriberStateLoss, FailDuplicate)(v, 0.01, 5)
	if !errors.Is(err, ErrSim) {
		t.Fatalf("error %v, want ErrSim", err)
	}
	for _, want := range []string{"plan (save as FILE and run: simrun replay FILE):\nmqttlab-plan 2\nseed 5\n", "\npreset broken\n", "\nfaults name=calm ", "\npolicy client.retransmit=retransmit(0) ", "\n---\n"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%.800s", want, err)
		}
	}
}
