package properties

import (
	"fmt"
	"math"

	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// PointResult is one run of an exhaustive crash sweep: node Node crashed at
// its K-th crash point of the safety phase.
type PointResult struct {
	Node     string
	K        int
	Point    model.CrashPoint  // where inside the step the crash hit
	Crash    int               // index of the Crash event in History
	Full     []model.Violation // model.Check: every invariant
	Promised []model.Violation // model.CheckPromised under the preset's policy
	History  model.History
}

// FullSet returns the invariants the full check names.
func (p PointResult) FullSet() model.Set {
	var s model.Set
	for _, v := range p.Full {
		s = s.With(v.Invariant)
	}
	return s
}

// CrashSweep runs plan once per crash point of every node: each node in
// turn crashes at each of the crash points it passes in the safety phase
// (sim's exhaustive mode), restarts after the profile's delay, and the
// liveness phase follows. cfg.Crash is ignored.
func CrashSweep(cfg sim.Config, plan sim.Plan) ([]PointResult, error) {
	var out []PointResult
	var rn sim.Runner // each run is read before the next
	for _, node := range append([]string{sim.BrokerName}, mustScenario(cfg.Scenario).Clients...) {
		dry := cfg
		dry.Crash = sim.CrashMode{Node: node, K: math.MaxInt32}
		r := rn.Run(dry, plan)
		if r.Err != nil {
			return nil, fmt.Errorf("properties: dry run of %s: %w", node, r.Err)
		}
		for k := 1; k <= r.CrashPoints[node]; k++ {
			c := cfg
			c.Crash = sim.CrashMode{Node: node, K: k}
			r := rn.Run(c, plan)
			if r.Err != nil {
				return nil, fmt.Errorf("properties: crash %s at %d: %w", node, k, r.Err)
			}
			p := PointResult{Node: node, K: k, Crash: -1, Promised: r.Violations, History: r.History(),
				Full: model.Check(r.History(), model.Options{})}
			for i, e := range r.History().Events {
				if e.Kind == model.Crash && e.Node == node && p.Crash < 0 {
					p.Crash, p.Point = i, e.Point
				}
			}
			if p.Crash < 0 {
				return nil, fmt.Errorf("properties: crash %s at %d did not happen", node, k)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// mustScenario returns a scenario by name, or an empty one.
func mustScenario(name string) sim.Scenario {
	if name == "" {
		name = "standard"
	}
	s, _ := sim.ScenarioByName(name)
	return s
}
