package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestAccessCanarySwarm: the swarm workload gives the broker an ACL (key
// access, one seed in accessDen), so the campaign's default workload
// catches, within the campaign budget, a broker that grants a wildcard
// subscription without asking its ACL (engine.MutACLWildcardSubscribe):
// Access names it, at a seed where fixed shows no Access violation.
func TestAccessCanarySwarm(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{{engine.MutACLWildcardSubscribe, model.Access}})
}

// TestAccessFixedClean: with access pinned on, the fixed engines show no
// violation in 60 swarm seeds, and the runs exercise the ACL: the history
// declares it, the broker refuses subscriptions (SUBACK >= 0x80) and v5
// publications (PUBACK/PUBREC 0x87), acknowledges 3.1.1 ones it drops,
// and still delivers what the ACL allows.
func TestAccessFixedClean(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := ParseWorkload("access=on")
	if err != nil {
		t.Fatal(err)
	}
	var rn Runner
	declared, subRefused, pubRefused, v3Dropped, delivered := 0, 0, 0, 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		r := runSwarmSeed(t, &rn, seed, fixed, wl)
		for _, v := range r.Violations {
			t.Errorf("seed %d (simrun run -scenario swarm -seed %d%s): %v", seed, seed, workloadFlag(wl), v)
		}
		h := r.History()
		version := map[string]uint8{}
		denied := map[string]bool{} // client+id of a 3.1.1 PUBLISH the ACL denies
		for _, e := range h.Events {
			p := &e.Packet
			switch {
			case e.Kind == model.ACL:
				declared++
			case e.Kind == model.Connected:
				version[e.Node] = e.Version
			case e.Kind == model.Sent && e.Node == model.BrokerNode && p.Type == model.SUBACK && p.Reason >= 0x80:
				subRefused++
			case e.Kind == model.Sent && e.Node == model.BrokerNode && (p.Type == model.PUBACK || p.Type == model.PUBREC) && p.Reason == 0x87:
				pubRefused++
			case e.Kind == model.Sent && e.Node == model.BrokerNode && (p.Type == model.PUBACK || p.Type == model.PUBREC) && denied[e.Peer+"/"+string(rune(p.ID))]:
				v3Dropped++
			case e.Kind == model.Received && e.Node == model.BrokerNode && p.Type == model.PUBLISH && p.QoS > 0 && version[e.Peer] == 4:
				denied[e.Peer+"/"+string(rune(p.ID))] = aclDenies(r, e.Peer, p.Topic)
			case e.Kind == model.Delivered:
				delivered++
			}
		}
	}
	if declared == 0 || subRefused == 0 || pubRefused == 0 || v3Dropped == 0 || delivered == 0 {
		t.Fatalf("%d ACL events, %d subscriptions refused, %d v5 publications refused, %d 3.1.1 ones acknowledged and dropped, %d deliveries: the test exercises too little",
			declared, subRefused, pubRefused, v3Dropped, delivered)
	}
	t.Logf("%d ACL events, %d subscriptions refused, %d v5 publications refused, %d 3.1.1 ones acknowledged and dropped, %d deliveries", declared, subRefused, pubRefused, v3Dropped, delivered)
}

// aclDenies reports whether r's broker ACL keeps client from writing topic.
func aclDenies(r Result, client, topic string) bool {
	rules, users := "", ""
	for _, e := range r.History().Events {
		if e.Kind == model.ACL && e.Node == model.BrokerNode {
			if u, ok := strings.CutPrefix(e.Reason, "user "); ok {
				users = u
				continue
			}
			f := strings.Fields(e.Reason)
			rules += "," + users + ":" + f[1] + ":" + f[2]
		}
	}
	a := brokerAccess(strings.TrimPrefix(rules, ","))
	return a != nil && !a.MayPublish(client, client, topic)
}

// TestAccessDrawKeepsPlans: a seed that draws access off has the plan it
// has with the key pinned off, and one that draws it on records the ACL
// on the broker's node line and each client's user name on its own.
func TestAccessDrawKeepsPlans(t *testing.T) {
	off, err := ParseWorkload("access=off")
	if err != nil {
		t.Fatal(err)
	}
	on := 0
	for seed := uint64(0); seed < 128; seed++ {
		drawn, err := Generate(Config{Seed: seed, Scenario: SwarmScenario})
		if err != nil {
			t.Fatal(err)
		}
		pinned, err := Generate(Config{Seed: seed, Scenario: SwarmScenario, Workload: off})
		if err != nil {
			t.Fatal(err)
		}
		a, b := opsText(drawn), opsText(pinned)
		if brokerLine(a, "acl=") {
			on++
			if brokerLine(b, "acl=") {
				t.Errorf("seed %d: access=off still gives the broker an ACL", seed)
			}
			if !strings.Contains(a, "\nnode p1 ") || !strings.Contains(a, " user=p1") {
				t.Errorf("seed %d: the ACL is on but client p1 logs in as no user", seed)
			}
			continue
		}
		if a != b {
			t.Errorf("seed %d draws access off but its plan differs from the one with access=off", seed)
		}
	}
	if on == 0 || on > 24 {
		t.Errorf("%d of 128 seeds draw access on, want about one in %d", on, accessDen)
	}
}

// TestNodeACLText: the node op's acl= and user= arguments read back as
// written, and a bad rule is refused.
func TestNodeACLText(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"acl=p1:read:t/#,p1:readwrite:t/a,:write:u/a", true},
		{"acl=p1:deny:t/a", true},
		{"user=p1", true},
		{"acl=p1:t/a", false},
		{"acl=p1:all:t/a", false},
		{"acl=p1:read:", false},
		{"user=", false},
	} {
		var nc NodeConfig
		err := nc.parseArg(c.text)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok %v", c.text, err, c.ok)
			continue
		}
		if c.ok {
			if got := strings.TrimSpace(string(nc.appendText(nil))); got != c.text {
				t.Errorf("%q reads back as %q", c.text, got)
			}
		}
	}
	if got := aclLines(":write:u/a,p1:read:t/#,p2:deny:t/a,p1:readwrite:t/a"); strings.Join(got, "|") != "topic write u/a|user p1|topic read t/#|topic readwrite t/a|user p2|topic deny t/a" {
		t.Errorf("aclLines = %q", got)
	}
}

// TestAccessRegressionSeeds: seeds of 'simrun campaign -workload access=on'
// where a 3.1.1 QoS 2 PUBLISH outside the ACL, acknowledged and dropped,
// reached subscribers after a broker crash: its pending inbound record
// held the message, and the restart redid its fanout (Access; engine
// testdata/broker/access_qos2_crash.txt). 874677905835 is of the fresh
// range 874677904624..874677907623.
func TestAccessRegressionSeeds(t *testing.T) {
	wl, err := ParseWorkload("access=on")
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{653, 1454, 2860, 874677905835} {
		r := mustRun(t, Config{Seed: seed, Profile: "swarm", Scenario: SwarmScenario, Workload: wl})
		if len(r.Violations) > 0 {
			t.Errorf("seed %d: %v\nreplay: simrun run -scenario swarm -seed %d%s", seed, r.Violations, seed, workloadFlag(wl))
		}
	}
}
