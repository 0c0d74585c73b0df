package plots

import (
	"errors"

	"fmt"
	"github.com/mqttlab/mqttlab/engine"
	"strings"
)

// fakeTrial fails a run with a probability that grows with x, faster for the
// variant named "legacy", decided by the seed alone. It stands in for the
// simulator so the sweep, CSV and chart machinery is tested on its own.
func fakeTrial(v Variant, x float64, seed uint64) (bool, error) {
	scale := 2.0
	if v.Name == "legacy" {
		scale = 8
	}
	threshold := uint64(min(1, x*scale) * 1000)
	return mix64(seed)%1000 < threshold, nil
}

// fakeExperiment is a small experiment over fakeTrial.
func fakeExperiment() Experiment {
	return Experiment{
		Name:   "fake",
		Doc:    "a fake sweep for the machinery tests",
		Title:  "Fake: failures vs fault probability",
		XLabel: "fault probability per step",
		YLabel: "runs failing",
		Xs:     []float64{0, 0.01, 0.05, 0.1},
		Variants: []Variant{
			{Name: "legacy", Label: "legacy behaviour", Preset: engine.Preset{Name: "legacy"}},
			{Name: "fixed", Label: "fixed behaviour", Preset: engine.Preset{Name: "fixed"}},
		},
		Trial: fakeTrial,
	}
}

// errTrialBroken is what brokenTrial returns.
var errTrialBroken = errors.New("trial broken")

// brokenTrial fails with an error on x = 0.05 and panics on x = 0.1 for the
// fixed variant.
func brokenTrial(v Variant, x float64, seed uint64) (bool, error) {
	switch {
	case x == 0.1 && v.Name == "fixed":
		panic(fmt.Sprintf("boom at seed %d", seed))
	case x == 0.05:
		return false, errTrialBroken
	}
	return false, nil
}

// contains reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
