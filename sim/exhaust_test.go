package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestExhaustCanary: the default workload draws packet-id exhaustion (key
// exhaust) in some seeds of the default 12,000-seed campaign. At the first
// such seed a publisher holds every packet id it has free (the burst takes
// all but the few its other messages hold, and its last message is
// refused: never accepted), the fixed engines show no violation, and a
// client allocator that hands out the last id again at exhaustion
// (MutExhaustedReuse) sends two PUBLISHes on one id in flight, which
// PacketIDUnique names at the first exhaust seed where the client keeps
// both (a crash between the burst and the drain keeps one record per id,
// and nothing of the burst is owed to a subscriber).
func TestExhaustCanary(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	wl := DefaultWorkload()
	seed := firstExhaustSeed(t, fixed, wl, 0, 12000)
	if seed == 12000 {
		t.Fatal("no seed of the default campaign draws exhaust")
	}
	var rn Runner
	r := runSwarmSeed(t, &rn, seed, fixed, wl)
	for _, v := range r.Violations {
		t.Errorf("fixed, seed %d: %v", seed, v)
	}
	burst := 0
	for _, e := range r.History().Events {
		if e.Kind == model.Accepted && strings.HasPrefix(e.Topic, "$x/") {
			burst++
			if strings.HasSuffix(e.Msg, ".65536") {
				t.Errorf("seed %d: the burst's 65,536th message was accepted: %v", seed, e)
			}
		}
	}
	// The publisher may hold a few ids of its other messages: the burst
	// takes the rest.
	if burst < 65535-64 || burst > 65535 {
		t.Errorf("seed %d: %d messages of the burst accepted, want every free packet id (65,535 less the few in flight)", seed, burst)
	}
	mut := fixed
	mut.Client.Mutations, mut.Name = engine.MutExhaustedReuse, "fixed+exhausted-reuse"
	caught := uint64(0)
	for s := seed; s < 12000 && caught == 0; s = firstExhaustSeed(t, fixed, wl, s+1, 12000) {
		if violates(runSwarmSeed(t, &rn, s, mut, wl), model.PacketIDUnique) {
			caught = s
		}
	}
	switch {
	case caught == 0:
		t.Errorf("MutExhaustedReuse not caught by PacketIDUnique in the default 12,000 seeds")
	case caught != seed && violates(runSwarmSeed(t, &rn, caught, fixed, wl), model.PacketIDUnique):
		t.Errorf("seed %d: fixed violates PacketIDUnique too", caught)
	default:
		t.Logf("seed %d: %d of the burst accepted; exhausted-reuse caught by PacketIDUnique at seed %d (simrun run -scenario swarm -seed %d)", seed, burst, caught, caught)
	}
}

// firstExhaustSeed returns the first seed in from..limit-1 whose plan
// under wl has a burst (a publish with count=), or limit.
func firstExhaustSeed(t *testing.T, p engine.Preset, wl Workload, from, limit uint64) uint64 {
	t.Helper()
	for seed := from; seed < limit; seed++ {
		plan, err := Generate(Config{Seed: seed, Profile: "swarm", Preset: p, Scenario: SwarmScenario, Workload: wl})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range plan.Ops {
			if op.Count != 0 {
				return seed
			}
		}
	}
	return limit
}
