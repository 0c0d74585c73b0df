package properties

import (
	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
)

// machine is a live sim.World driven by rapid's state-machine runner: each
// action is one plan step applied at once, and the model judges the history
// after every action.
type machine struct {
	t     *rapid.T
	w     *sim.World
	cfg   sim.Config
	b     *planBuilder
	judge Judge
	done  int // ops of b already applied
}

// case returns the plan applied so far, as a replayable case.
func (m *machine) asCase() Case {
	return Case{Config: m.cfg, Plan: sim.Plan{Header: sim.HeaderOf(m.cfg), Ops: append([]sim.Op(nil), m.b.ops...)}}
}

// apply carries out the ops added since the last call.
func (m *machine) apply() {
	for ; m.done < len(m.b.ops); m.done++ {
		if err := m.w.Apply(m.b.ops[m.done]); err != nil {
			m.t.Fatalf("apply %s: %v\n%s", m.b.ops[m.done], err, m.asCase())
		}
	}
}

// check judges the history so far.
func (m *machine) check(t *rapid.T) {
	if vs := m.judge.Violations(m.w.History()); len(vs) > 0 {
		failOn(t, Outcome{Case: m.asCase(), Violations: vs})
	}
}

// action returns the rapid action that adds one step of kind and applies it.
func (m *machine) action(kind sim.OpKind) func(*rapid.T) {
	return func(*rapid.T) {
		m.b.stepOf(kind)
		m.apply()
	}
}

// MachineProperty is a rapid state-machine test (rapid.T.Repeat) of a
// live world running preset: the actions are plan operations (publish,
// advance, crash, restart, stop, partition, heal, slow, disconnect, connect,
// lose-qos2) applied at once, the judge's invariants (model.CheckPromised)
// are checked after every action, and at the end the liveness phase heals
// everything: the world must go quiet (no stuck session) and still keep
// every promise. A failure prints the applied ops as a replayable plan.
func MachineProperty(preset engine.Preset, profiles []string, j Judge) func(*rapid.T) {
	if len(profiles) == 0 {
		profiles = DefaultProfiles
	}
	return func(t *rapid.T) {
		c := RapidChooser{T: t}
		cfg := sim.Config{
			Preset:   preset,
			Profile:  pick(c, "profile", profiles),
			Version:  pick(c, "version", []uint8{5, 4}),
			Scenario: pick(c, "scenario", []string{"small", "standard"}),
			Seed:     uint64(c.Choose("seed", 1<<16)),
		}
		w, err := sim.New(cfg)
		if err != nil {
			t.Fatalf("sim.New: %v", err)
		}
		scen, _ := sim.ScenarioByName(cfg.Scenario)
		m := &machine{t: t, w: w, cfg: cfg, b: newPlanBuilder(c, scen), judge: j}
		m.b.prelude()
		m.apply()
		actions := map[string]func(*rapid.T){"": m.check}
		for _, k := range stepKinds {
			actions[k.kind.String()] = m.action(k.kind)
		}
		t.Repeat(actions)
		if !m.w.RunUntilQuiet() {
			t.Fatalf("liveness: the world did not go quiet after the heal:\n%s", m.asCase())
		}
		m.check(t)
	}
}
