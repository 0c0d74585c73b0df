package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestBrokerMaxCanarySwarm: the swarm workload bounds the broker's Maximum
// Packet Size (key brokermax, one seed in 8, payload padding on), so the
// campaign's default workload catches, within the campaign budget, a
// client that ignores the limit of the broker's CONNACK
// (engine.MutIgnoreBrokerMaxSize) and sends a larger PUBLISH
// [MQTT-3.2.2-15]: MaxPacketSize names it, at a seed where fixed shows no
// violation of that rule.
func TestBrokerMaxCanarySwarm(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	mut := fixed
	mut.Client.Mutations, mut.Name = engine.MutIgnoreBrokerMaxSize, "fixed+"+engine.MutIgnoreBrokerMaxSize.String()
	wl := DefaultWorkload()
	var rn Runner
	for seed := uint64(1); seed <= catchLimit; seed++ {
		if !violates(runSwarmSeed(t, &rn, seed, mut, wl), model.MaxPacketSize) {
			continue
		}
		if violates(runSwarmSeed(t, &rn, seed, fixed, wl), model.MaxPacketSize) {
			t.Fatalf("caught at seed %d, but fixed violates MaxPacketSize there too", seed)
		}
		t.Logf("mutation %v caught by MaxPacketSize at seed %d (simrun run -scenario swarm -seed %d%s)", engine.MutIgnoreBrokerMaxSize, seed, seed, workloadFlag(wl))
		return
	}
	t.Fatalf("mutation %v not caught by MaxPacketSize within %d seeds", engine.MutIgnoreBrokerMaxSize, catchLimit)
}

// TestBrokerMaxFixedClean: with brokermax pinned on, the fixed engines
// show no violation in 60 swarm seeds, and the runs exercise the limit:
// the broker's line carries maxsize, v5 clients refuse PUBLISHes too large
// for it (some at the command, some Accepted while away and refused when
// a CONNACK would start them), and padded PUBLISHes that fit still leave.
func TestBrokerMaxFixedClean(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := ParseWorkload("brokermax=on")
	if err != nil {
		t.Fatal(err)
	}
	var rn Runner
	refused, afterAccepted, bigSent := 0, 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		r := runSwarmSeed(t, &rn, seed, fixed, wl)
		for _, v := range r.Violations {
			t.Errorf("seed %d (simrun run -scenario swarm -seed %d%s): %v", seed, seed, workloadFlag(wl), v)
		}
		accepted := map[string]bool{}
		for _, e := range r.History().Events {
			switch {
			case e.Kind == model.Accepted:
				accepted[e.Msg] = true
			case e.Kind == model.Refused && strings.HasPrefix(e.Reason, "[MQTT-3.2.2-15]"):
				refused++
				if accepted[e.Msg] {
					afterAccepted++
				}
			case e.Kind == model.Sent && e.Node != model.BrokerNode && e.Packet.Type == model.PUBLISH && e.Packet.Size > 512:
				bigSent++
			}
		}
	}
	if refused == 0 || afterAccepted == 0 || bigSent == 0 {
		t.Fatalf("%d refusals (%d after Accepted), %d PUBLISHes over 512 bytes sent: the test exercises too little", refused, afterAccepted, bigSent)
	}
	t.Logf("%d refusals for the broker's Maximum Packet Size (%d after Accepted), %d PUBLISHes over 512 bytes sent", refused, afterAccepted, bigSent)
}

// TestBrokerMaxDrawKeepsPlans: a seed that draws brokermax off has the
// plan it has with the key pinned off, and one that draws it on records
// the limit on the broker's node line.
func TestBrokerMaxDrawKeepsPlans(t *testing.T) {
	off, err := ParseWorkload("brokermax=off")
	if err != nil {
		t.Fatal(err)
	}
	on := 0
	for seed := uint64(0); seed < 64; seed++ {
		drawn, err := Generate(Config{Seed: seed, Scenario: SwarmScenario})
		if err != nil {
			t.Fatal(err)
		}
		pinned, err := Generate(Config{Seed: seed, Scenario: SwarmScenario, Workload: off})
		if err != nil {
			t.Fatal(err)
		}
		a, b := opsText(drawn), opsText(pinned)
		if brokerLine(a, "maxsize=") {
			on++
			if brokerLine(b, "maxsize=") {
				t.Errorf("seed %d: brokermax=off still bounds the broker", seed)
			}
			continue
		}
		if a != b {
			t.Errorf("seed %d draws brokermax off but its plan differs from the one with brokermax=off", seed)
		}
	}
	if on == 0 || on > 20 {
		t.Errorf("%d of 64 seeds draw brokermax on, want about one in %d", on, brokerMaxDen)
	}
}

// opsText is a plan's ops, one a line, without the header (whose workload
// line names the pins) and the end line (whose checksum covers it).
func opsText(p Plan) string {
	s := p.String()
	s = s[strings.Index(s, "\n---\n"):]
	return s[:strings.LastIndex(s, "\nend ")]
}

// brokerLine reports whether the plan text's "node broker" line holds arg.
func brokerLine(ops, arg string) bool {
	for _, l := range strings.Split(ops, "\n") {
		if strings.HasPrefix(l, "node broker ") && strings.Contains(l, " "+arg) {
			return true
		}
	}
	return false
}
