package properties

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// Judge says which violations fail a property: those of the invariants in
// Want (zero: every invariant) that Policy promises under the faults the
// history shows (model.CheckPromised).
//
// A property test of a preset judges by the preset's own policy. A canary
// judges a legacy or mutant engine by the fixed preset's policy: a violation
// then means the engine broke a promise the fix makes, which is exactly the
// bug the canary must show.
type Judge struct {
	Policy model.Policy
	Want   model.Set
}

// JudgeOf returns the judge of a preset by its own promises.
func JudgeOf(p engine.Preset) Judge { return Judge{Policy: sim.ModelPolicy(p)} }

// FixedJudge returns the judge by the fixed preset's promises, restricted to
// want (zero: all invariants).
func FixedJudge(want model.Set) Judge {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		panic(fmt.Sprintf("properties: the fixed preset is missing: %v", err))
	}
	return Judge{Policy: sim.ModelPolicy(p), Want: want}
}

// Violations returns the violations of h that fail the judge.
func (j Judge) Violations(h model.History) []model.Violation {
	var out []model.Violation
	for _, v := range model.CheckPromised(h, j.Policy) {
		if j.Want == 0 || j.Want.Has(v.Invariant) {
			out = append(out, v)
		}
	}
	return out
}

// Outcome is a judged run.
type Outcome struct {
	Case       Case
	Result     sim.Result
	Violations []model.Violation // the judge's violations
}

// Judged runs a case and judges it. A sweep runs the plan once per crash
// point and returns the first failing run (its case has the sweep resolved
// to that crash point), or the last run if none fails.
func Judged(cs Case, j Judge) Outcome {
	if cs.Sweep == nil {
		return judgeOne(cs, j)
	}
	var o Outcome
	for k := cs.Sweep.From; k <= cs.Sweep.To; k++ {
		one := cs
		one.Sweep = nil
		one.Config.Crash = sim.CrashMode{Node: cs.Sweep.Node, K: k}
		one.Plan.Header = sim.HeaderOf(one.Config)
		if o = judgeOne(one, j); len(o.Violations) > 0 || o.Result.Err != nil {
			return o
		}
	}
	return o
}

func judgeOne(cs Case, j Judge) Outcome {
	r := sim.Run(cs.Config, cs.Plan)
	o := Outcome{Case: cs, Result: r}
	if r.Err == nil {
		o.Violations = j.Violations(r.History())
	}
	return o
}

// Report formats a failing outcome: the violations, then the plan file.
func (o Outcome) Report() string {
	var b strings.Builder
	for _, v := range o.Violations {
		b.WriteString(v.String())
		b.WriteByte('\n')
	}
	b.WriteString("plan (save as FILE and run: simrun replay FILE):\n")
	b.WriteString(o.Case.String())
	return b.String()
}

// Recorder keeps the last failing outcome a property saw. rapid re-runs the
// minimised case last, so after rapid.Check the recorder holds the shrunk
// counterexample.
type Recorder struct {
	Last  *Outcome
	Fails int
}

func (r *Recorder) record(o Outcome) {
	if r == nil {
		return
	}
	r.Fails++
	r.Last = &o
}

// PlanProperty is the lab's central property: for any plan GenCase builds
// from spec, the run completes and shows no violation the judge counts.
// rec, if not nil, records each failing outcome.
func PlanProperty(spec PlanSpec, j Judge, rec *Recorder) func(*rapid.T) {
	return func(t *rapid.T) {
		cs, err := GenCase(RapidChooser{T: t}, spec)
		if err != nil {
			t.Fatalf("bad spec: %v", err)
		}
		o := Judged(cs, j)
		if o.Result.Err != nil {
			t.Fatalf("run did not complete: %v\n%s", o.Result.Err, cs)
		}
		if len(o.Violations) > 0 {
			rec.record(o)
			failOn(t, o)
		}
	}
}

// FixedProperty is PlanProperty for the fixed preset under one fault
// profile, with crash points, judged by its own promises.
func FixedProperty(profile string) func(*rapid.T) {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		return func(t *rapid.T) { t.Fatalf("fixed preset: %v", err) }
	}
	return PlanProperty(PlanSpec{Presets: []engine.Preset{p}, Profiles: []string{profile}, CrashAt: true}, JudgeOf(p), nil)
}

// failOn fails t with the outcome's report. Each invariant fails on its own
// line: rapid keeps a shrink step only if it fails at the same place, so a
// counterexample keeps the invariant it was found with while it shrinks.
func failOn(t *rapid.T, o Outcome) {
	msg := o.Report()
	switch o.Violations[0].Invariant {
	case model.NoLoss:
		t.Fatalf("NoLoss violated:\n%s", msg)
	case model.QoS2ExactlyOnce:
		t.Fatalf("QoS2ExactlyOnce violated:\n%s", msg)
	case model.Retransmit:
		t.Fatalf("Retransmit violated:\n%s", msg)
	case model.PubrelAnswered:
		t.Fatalf("PubrelAnswered violated:\n%s", msg)
	case model.PacketIDUnique:
		t.Fatalf("PacketIDUnique violated:\n%s", msg)
	case model.SendQuota:
		t.Fatalf("SendQuota violated:\n%s", msg)
	case model.Order:
		t.Fatalf("Order violated:\n%s", msg)
	case model.NoStuck:
		t.Fatalf("NoStuck violated:\n%s", msg)
	default:
		t.Fatalf("%v violated:\n%s", o.Violations[0].Invariant, msg)
	}
}
