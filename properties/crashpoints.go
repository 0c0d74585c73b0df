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
	Disk     string // the DiskFault the sweep ran under ("" for CrashSweep)
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

// DiskFault is what a sweep's crash does to the writes its node had not
// yet synced (sim.Profile's LoseUnsyncedPPM and TornPPM, drawn for every
// crash: 1,000,000 means always).
type DiskFault struct {
	Name             string
	LosePPM, TornPPM int
}

// DiskFaults are the disk faults CrashSweepDisk sweeps under: "keep" (the
// calm profile: every unsynced write survives, so a missing fsync cannot
// show), "lose" (every unsynced write is lost) and "torn" (the last
// unsynced write is torn, the others survive).
var DiskFaults = []DiskFault{{"keep", 0, 0}, {"lose", 1_000_000, 0}, {"torn", 0, 1_000_000}}

// CrashSweepDisk is CrashSweep once under each of DiskFaults: cfg's
// profile (calm if unset) with the disk fault's probabilities as a custom
// profile. A write the engine should have synced and did not is lost at
// the crash that follows it in the "lose" sweep, and the last one torn in
// the "torn" sweep.
func CrashSweepDisk(cfg sim.Config, plan sim.Plan) ([]PointResult, error) {
	name := cfg.Profile
	if name == "" {
		name = "calm"
	}
	base, err := sim.ProfileByName(name)
	if err != nil {
		return nil, fmt.Errorf("properties: disk sweep: %w", err)
	}
	var out []PointResult
	for _, d := range DiskFaults {
		prof := base
		prof.LoseUnsyncedPPM, prof.TornPPM = d.LosePPM, d.TornPPM
		c := cfg
		c.Custom = &prof
		pts, err := CrashSweep(c, plan)
		if err != nil {
			return nil, fmt.Errorf("properties: disk sweep %s: %w", d.Name, err)
		}
		for i := range pts {
			pts[i].Disk = d.Name
		}
		out = append(out, pts...)
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
