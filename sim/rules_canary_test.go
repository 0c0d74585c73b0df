package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// catchSeed runs seeds 1..limit of scenario under the swarm fault profile
// with the fixed preset plus mutation m (on the broker, or on the clients
// when client) and returns the first seed with a promised violation of
// inv, or 0, and the invariants the other violations named.
func catchSeed(t *testing.T, scenario string, m engine.Mutation, client bool, inv model.Invariant, limit uint64) (uint64, model.Set) {
	t.Helper()
	return catchSeedWith(t, scenario, nil, m, client, inv, limit)
}

// catchSeedWith is catchSeed with the engines built by f (nil: the real
// ones, as configured by the scenario).
func catchSeedWith(t *testing.T, scenario string, f engineFactory, m engine.Mutation, client bool, inv model.Invariant, limit uint64) (uint64, model.Set) {
	t.Helper()
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	if client {
		p.Client.Mutations = m
	} else {
		p.Broker.Mutations = m
	}
	p.Name = "fixed+" + m.String()
	var others model.Set
	for seed := uint64(1); seed <= limit; seed++ {
		cfg := Config{Seed: seed, Profile: "swarm", Preset: p, Scenario: scenario, factory: f}
		r := mustRun(t, cfg)
		for _, v := range r.Violations {
			if v.Invariant == inv {
				return seed, others
			}
			others = others.With(v.Invariant)
		}
	}
	return 0, others
}

// ruleCanary is a mutation and the invariant that must name it.
type ruleCanary struct {
	m      engine.Mutation
	client bool
	inv    model.Invariant
}

// catchLimit is the campaign budget a canary must be caught within.
const catchLimit = 2000

// checkCaught runs each canary until caught (at most catchLimit seeds) and
// fails the ones not caught.
func checkCaught(t *testing.T, scenario string, canaries []ruleCanary) {
	t.Helper()
	for _, c := range canaries {
		seed, others := catchSeed(t, scenario, c.m, c.client, c.inv, catchLimit)
		if seed == 0 {
			t.Errorf("%s: mutation %v not caught by %v within %d seeds (other violations: %v)", scenario, c.m, c.inv, catchLimit, others)
			continue
		}
		t.Logf("%s: mutation %v caught by %v at seed %d", scenario, c.m, c.inv, seed)
	}
}

// TestRuleCanariesStandard: the standard scenario's s2 subscribes to t/a at
// QoS 1 while QoS 2 messages are published there, so the campaign catches a
// broker that forwards at the publish QoS under GrantedQoS; its subscribers
// receive more than they send, so a client whose keep-alive timer restarts
// on receiving falls silent and ClientKeepAlive names it.
func TestRuleCanariesStandard(t *testing.T) {
	checkCaught(t, "standard", []ruleCanary{
		{engine.MutIgnoreGrantedQoS, false, model.GrantedQoS},
		{engine.MutKeepAliveOnReceive, true, model.ClientKeepAlive},
	})
}

// TestFlowResumeCanary: with subscribers announcing Receive Maximum 2 the
// broker queues what exceeds their window (quota_test.go); a broker that
// does not send from the queue when an ack opens the window leaves the last
// messages parked, and FlowResume names it.
func TestFlowResumeCanary(t *testing.T) {
	seed, others := catchSeedWith(t, "standard", smallRMFactory(2), engine.MutNoPumpOnAck, false, model.FlowResume, catchLimit)
	if seed == 0 {
		t.Fatalf("MutNoPumpOnAck not caught by FlowResume within %d seeds (other violations: %v)", catchLimit, others)
	}
	t.Logf("MutNoPumpOnAck caught by FlowResume at seed %d", seed)
}

// TestRuleCanariesSwarm: the swarm scenario draws the features each rule
// judges (downgrades, overlapping filters, unsubscribes, retained messages
// and their clearing, message expiry, keep-alive, small windows, session
// expiry during an outage, wills and normal disconnects with reason codes
// 0x00, 0x04 and errors), so the
// default campaign (swarm faults, fixed preset) catches each canary within
// its budget, named by the rule it breaks.
func TestRuleCanariesSwarm(t *testing.T) {
	checkCaught(t, SwarmScenario, []ruleCanary{
		{engine.MutIgnoreGrantedQoS, false, model.GrantedQoS},
		{engine.MutCopyPerSubscription, false, model.Overlap},
		{engine.MutKeepUnsubscribed, false, model.Unsubscribe},
		{engine.MutRetainEmptyPayload, false, model.Retained},
		{engine.MutExpiryUnchanged, false, model.MessageExpiry},
		{engine.MutKeepAliveOnReceive, true, model.ClientKeepAlive},
		{engine.MutNoPumpOnAck, false, model.FlowResume},
		{engine.MutIgnoreSessionExpiry, false, model.SessionExpiry},
		{engine.MutWillOnNormalDisconnect, false, model.Will},
		{engine.MutWillDropOnDisconnect, false, model.Will},
		{engine.MutVolatileRetained, false, model.Retained},
	})
}

// TestRulesFixedCleanSwarm: the fixed engines under the swarm workload and
// faults show no violation of the routing, keep-alive, flow, session
// expiry and will rules (a
// false positive is a bug in a rule or in the engine).
func TestRulesFixedCleanSwarm(t *testing.T) {
	const seeds = 200
	rules := model.SetOf(model.GrantedQoS, model.Unsubscribe, model.Overlap, model.Retained, model.MessageExpiry,
		model.FlowResume, model.ClientKeepAlive, model.SessionExpiry, model.Will)
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := Config{Seed: seed, Profile: "swarm", Preset: p, Scenario: SwarmScenario}
		r := mustRun(t, cfg)
		for _, v := range r.Violations {
			if rules.Has(v.Invariant) {
				t.Errorf("seed %d (simrun run -scenario swarm -seed %d): %v", seed, seed, v)
			}
		}
	}
}
