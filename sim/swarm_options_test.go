package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestQueueServerKACanariesSwarm: the swarm workload draws the broker's
// queue bound (key queue) and its max_keepalive (key serverka) in one seed
// of 8 each, so the campaign's workload under the swarm faults catches,
// within 2,000 seeds, a broker whose queue is full one copy short of its
// declared bound (NoLoss: a drop the bound does not allow) and a client
// that keeps its own Keep Alive when the CONNACK carries a Server Keep
// Alive (ClientKeepAlive), each at a seed where fixed shows no violation
// of that rule.
func TestQueueServerKACanariesSwarm(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{{engine.MutQueueBelowBound, model.NoLoss}})
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	p := fixed
	p.Client.Mutations, p.Name = engine.MutIgnoreServerKeepAlive, "fixed+"+engine.MutIgnoreServerKeepAlive.String()
	wl := DefaultWorkload()
	var rn Runner
	caught := uint64(0)
	for seed := uint64(1); seed <= catchLimit && caught == 0; seed++ {
		if violates(runSwarmSeed(t, &rn, seed, p, wl), model.ClientKeepAlive) {
			caught = seed
		}
	}
	switch {
	case caught == 0:
		t.Errorf("mutation %v not caught by ClientKeepAlive within %d seeds", engine.MutIgnoreServerKeepAlive, catchLimit)
	case violates(runSwarmSeed(t, &rn, caught, fixed, wl), model.ClientKeepAlive):
		t.Errorf("mutation %v caught by ClientKeepAlive at seed %d, but fixed violates it there too", engine.MutIgnoreServerKeepAlive, caught)
	default:
		t.Logf("mutation %v caught by ClientKeepAlive at seed %d (simrun run -scenario swarm -seed %d)", engine.MutIgnoreServerKeepAlive, caught, caught)
	}
}

// TestQueueServerKAFixedClean: with each value of queue and serverka
// pinned, the fixed engines show no violation in 40 swarm seeds, and the
// runs exercise them: the broker drops copies at its full queue (recorded
// as Dropped events, each excused by the declared bound), and v5 clients
// read a Server Keep Alive in their CONNACK.
func TestQueueServerKAFixedClean(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workload string
		want     func(e model.Event) bool
	}{
		{"queue=oldest", func(e model.Event) bool {
			return e.Kind == model.Dropped && strings.HasPrefix(e.Reason, model.DropReasonQueueFull)
		}},
		{"queue=newest", func(e model.Event) bool {
			return e.Kind == model.Dropped && strings.HasPrefix(e.Reason, model.DropReasonQueueFull)
		}},
		{"serverka=on", func(e model.Event) bool {
			return e.Kind == model.Received && e.Packet.Type == model.CONNACK && e.Packet.KeepAlive > 0
		}},
	} {
		wl, err := ParseWorkload(c.workload)
		if err != nil {
			t.Fatal(err)
		}
		var rn Runner
		seen := 0
		for seed := uint64(1); seed <= 40; seed++ {
			r := runSwarmSeed(t, &rn, seed, fixed, wl)
			for _, v := range r.Violations {
				t.Errorf("seed %d (simrun run -scenario swarm -seed %d%s): %v", seed, seed, workloadFlag(wl), v)
			}
			for _, e := range r.History().Events {
				if c.want(e) {
					seen++
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s: the test exercises nothing", c.workload)
		}
		t.Logf("%s: %d events exercise it", c.workload, seen)
	}
}
