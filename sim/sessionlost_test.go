package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestLostSessionQoS2Canary: a client that, after Session Present 0,
// publishes again as new the QoS 2 messages whose PUBLISH left in the lost
// session (engine.MutRepublishLostQoS2, the bug seed 66 of the
// session=expiry workload found) delivers one the broker had routed a
// second time: the shrunk plan shows it with the mutation and not without,
// and the session=expiry campaign catches it under QoS2ExactlyOnce within
// the campaign budget, at a seed where the fixed engines keep the rule
// [MQTT-3.2.2-5] [MQTT-4.3.3-10].
func TestLostSessionQoS2Canary(t *testing.T) {
	cfg, plan := readPlanFile(t, "lost-session-qos2-66.plan")
	if r := Run(cfg, plan); r.Err != nil || violates(r, model.QoS2ExactlyOnce) {
		t.Fatalf("fixed: %v %v", r.Err, r.Violations)
	}
	cfg.Preset.Client.Mutations = engine.MutRepublishLostQoS2
	if r := Run(cfg, plan); r.Err != nil || !violates(r, model.QoS2ExactlyOnce) {
		t.Fatalf("with %v the plan keeps QoS2ExactlyOnce: %v %v", engine.MutRepublishLostQoS2, r.Err, r.Violations)
	}

	wl, err := DefaultWorkload().With("session=expiry")
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	mut := fixed
	mut.Client.Mutations, mut.Name = engine.MutRepublishLostQoS2, "fixed+"+engine.MutRepublishLostQoS2.String()
	var rn Runner
	for seed := uint64(1); seed <= catchLimit; seed++ {
		if !violates(runSwarmSeed(t, &rn, seed, mut, wl), model.QoS2ExactlyOnce) {
			continue
		}
		if violates(runSwarmSeed(t, &rn, seed, fixed, wl), model.QoS2ExactlyOnce) {
			t.Fatalf("caught at seed %d, but fixed violates QoS2ExactlyOnce there too", seed)
		}
		t.Logf("mutation %v caught by QoS2ExactlyOnce at seed %d (simrun run -scenario swarm -seed %d%s)", engine.MutRepublishLostQoS2, seed, seed, workloadFlag(wl))
		return
	}
	t.Fatalf("mutation %v not caught by QoS2ExactlyOnce within %d seeds of%s", engine.MutRepublishLostQoS2, catchLimit, workloadFlag(wl))
}
