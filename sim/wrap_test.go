package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestPacketIDZeroCanarySwarm: the wrap dimension (one seed in four) starts
// the packet-id counters a few ids below 65535, so a client whose counter
// wraps to 0 (MutPacketIDZero) does so within a few packets; its codec
// refuses to write packet id 0, the command fails, and the world records
// the refusal (model.Refused), which PacketIDUnique names
// [MQTT-2.2.1-3]. The campaign's workload (DefaultWorkload, wrap drawn)
// under the swarm faults catches it within the campaign budget, and fixed
// shows no PacketIDUnique violation at the catching seed.
func TestPacketIDZeroCanarySwarm(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := DefaultWorkload().With("wrap=draw") // the campaign's pins, wrap drawn
	if err != nil {
		t.Fatal(err)
	}
	p := fixed
	p.Client.Mutations, p.Name = engine.MutPacketIDZero, "fixed+"+engine.MutPacketIDZero.String()
	var rn Runner
	caught := uint64(0)
	var why string
	for seed := uint64(1); seed <= catchLimit && caught == 0; seed++ {
		for _, v := range runSwarmSeed(t, &rn, seed, p, wl).Violations {
			if v.Invariant == model.PacketIDUnique {
				caught, why = seed, v.Reason
				break
			}
		}
	}
	switch {
	case caught == 0:
		t.Fatalf("MutPacketIDZero not caught by PacketIDUnique within %d seeds", catchLimit)
	case !strings.Contains(why, "packet identifier 0"):
		t.Errorf("seed %d: PacketIDUnique says %q, want the refused packet id 0", caught, why)
	case violates(runSwarmSeed(t, &rn, caught, fixed, wl), model.PacketIDUnique):
		t.Errorf("MutPacketIDZero caught at seed %d, but fixed violates PacketIDUnique there too", caught)
	default:
		t.Logf("MutPacketIDZero caught by PacketIDUnique at seed %d: %s (simrun run -scenario swarm -seed %d%s)", caught, why, caught, workloadFlag(wl))
	}
}

// TestSwarmWrapStartIDs: wrap=on gives every active client and the broker a
// start id in 65528..65535, and the ids the nodes send do wrap: a PUBLISH
// with an id above 65527 comes before one with a small id from the same
// node; wrap=off sets none; a drawn wrap is on in about one seed in four.
func TestSwarmWrapStartIDs(t *testing.T) {
	on, err := DefaultWorkload().With("wrap=on")
	if err != nil {
		t.Fatal(err)
	}
	fixed, _ := engine.PresetByName("fixed")
	var rn Runner
	wrapped := 0
	for seed := uint64(1); seed <= 10; seed++ {
		cfg := Config{Seed: seed, Profile: "swarm", Scenario: SwarmScenario, Workload: on}
		plan, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range plan.Ops {
			if op.Kind == OpNode && op.Node[0] != 'i' && (op.Cfg == nil || op.Cfg.StartID < 65535-wrapStartSpan+1) {
				t.Fatalf("seed %d: %s has no start id in 65528..65535", seed, op)
			}
		}
		h := runSwarmSeed(t, &rn, seed, fixed, on).History()
		high := map[string]bool{}
		for _, e := range h.Events {
			if e.Kind != model.Sent || e.Packet.Type != model.PUBLISH || e.Packet.QoS == 0 {
				continue
			}
			if e.Packet.ID > 65535-wrapStartSpan {
				high[e.Node] = true
			} else if high[e.Node] && e.Packet.ID < 100 {
				wrapped++
				break
			}
		}
	}
	if wrapped < 8 {
		t.Errorf("ids wrapped in %d of 10 seeds with wrap=on, want at least 8", wrapped)
	}
	draw, _ := on.With("wrap=draw")
	off, _ := on.With("wrap=off")
	drawn := 0
	for seed := uint64(1); seed <= 400; seed++ {
		if startIDs(t, seed, off) {
			t.Fatalf("seed %d: wrap=off sets a start id", seed)
		}
		if startIDs(t, seed, draw) {
			drawn++
		}
	}
	if drawn < 60 || drawn > 140 {
		t.Errorf("wrap drawn in %d of 400 seeds, want about 100", drawn)
	}
}

// startIDs reports whether seed's swarm plan under wl sets a start id.
func startIDs(t *testing.T, seed uint64, wl Workload) bool {
	t.Helper()
	plan, err := Generate(Config{Seed: seed, Profile: "swarm", Scenario: SwarmScenario, Workload: wl})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(plan.String(), " startid=")
}
