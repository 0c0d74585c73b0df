package main

import (
	"fmt"

	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// judge says which invariants a run is held to. Either way only promised
// invariants fail a run; -all lists the rest as information.
type judge string

const (
	// judgeSpec holds every preset to what the fixed engine promises under
	// the faults the run saw (model.Promises(model.FixedPolicy(), faults)):
	// what a correct MQTT engine keeps. A legacy preset's seed bugs show as
	// violations here: the canaries. For preset fixed this is exactly
	// model.CheckPromised.
	judgeSpec judge = "spec"
	// judgePreset holds a preset only to what it promises itself
	// (model.CheckPromised with the preset's own policy): a legacy knob's
	// documented losses are not failures, only breaches of its own promises.
	judgePreset judge = "preset"
)

// parseJudge reads a -judge value.
func parseJudge(s string) (judge, error) {
	switch j := judge(s); j {
	case judgeSpec, judgePreset:
		return j, nil
	}
	return "", fmt.Errorf("want %s or %s", judgeSpec, judgePreset)
}

// verdict is a judged run: the invariants held, the violations of them, and
// (when asked) the violations of the others.
type verdict struct {
	promised   model.Set
	own        model.Set // what the run's preset promises itself
	violations []model.Violation
	unpromised []model.Violation // only with all
}

// judgeRun checks a run's history. The run must have been made with
// SkipCheck: the check is done here, once.
func (j judge) judgeRun(r sim.Result, all bool) verdict {
	ix := model.IndexOf(r.History()) // one index for the faults and the check
	faults := ix.Faults()
	v := verdict{own: model.Promises(r.Policy, faults)}
	v.promised = v.own
	if j == judgeSpec {
		v.promised = model.Promises(model.FixedPolicy(), faults)
	}
	if !all {
		v.violations = ix.Check(model.Options{Only: v.promised, Limits: r.Policy.Limits})
		return v
	}
	for _, x := range ix.Check(model.Options{Limits: r.Policy.Limits}) {
		if v.promised.Has(x.Invariant) {
			v.violations = append(v.violations, x)
		} else {
			v.unpromised = append(v.unpromised, x)
		}
	}
	return v
}

// describe says in words what the judge holds a run to.
func (j judge) describe(preset string) string {
	if j == judgeSpec {
		return "what the fixed engine promises under these faults (-judge spec)"
	}
	return "what preset " + preset + " itself promises under these faults (-judge preset)"
}
