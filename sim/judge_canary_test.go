package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestSessionPresentKeptCanary: a broker that resumes a kept session but
// answers Session Present=0 is named under SessionPresent, at the CONNACK,
// by the standard scenario's campaign [MQTT-3.2.2-3].
func TestSessionPresentKeptCanary(t *testing.T) {
	checkCaught(t, "standard", []ruleCanary{{engine.MutSessionPresentZero, false, model.SessionPresent}})
}

// kaFactory builds the real engines with every client's Keep Alive set to
// ka: short enough that the broker's keep-alive runs many times a seed.
func kaFactory(ka engine.Duration) engineFactory {
	return func(spec NodeSpec, restored []engine.Record) (Engine, error) {
		spec.KeepAlive = ka
		return defaultFactory(spec, restored)
	}
}

// kaRun runs seed of the standard scenario under swarm with a 3 s Keep
// Alive and the fixed preset plus broker mutations m.
func kaRun(t *testing.T, seed uint64, m engine.Mutation) Result {
	t.Helper()
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	p.Broker.Mutations = m
	cfg := Config{Seed: seed, Profile: "swarm", Preset: p, factory: kaFactory(3 * engine.Second)}
	r := mustRun(t, cfg)
	return r
}

// TestKeepAliveCanary: with a 3 s Keep Alive the fixed broker closes only
// idle connections (no BrokerKeepAlive violation in any seed), while a
// broker whose keep-alive is not restarted by the packets it receives
// closes busy ones and is named under BrokerKeepAlive [MQTT-3.1.2-22].
func TestKeepAliveCanary(t *testing.T) {
	const seeds = 24
	caught := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, v := range kaRun(t, seed, 0).Violations {
			if v.Invariant == model.BrokerKeepAlive || v.Invariant == model.SessionPresent {
				t.Fatalf("seed %d: fixed broker with Keep Alive 3 s: %v", seed, v)
			}
		}
		for _, v := range kaRun(t, seed, engine.MutKeepAliveNoReset).Violations {
			if v.Invariant == model.BrokerKeepAlive && v.Node == model.BrokerNode {
				caught++
				break
			}
		}
	}
	if caught < seeds/2 {
		t.Fatalf("MutKeepAliveNoReset: BrokerKeepAlive violation of the broker in only %d of %d seeds", caught, seeds)
	}
	t.Logf("MutKeepAliveNoReset caught in %d of %d seeds", caught, seeds)
}

// TestSessionPresentExplains: under MutSessionPresentZero the first
// violation of a run is the broker's SessionPresent, and every violation of
// another invariant it causes (the routing and retransmission checks then
// see a session the broker claims it dropped) is listed as explained by a
// SessionPresent violation.
func TestSessionPresentExplains(t *testing.T) {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.Broker.Mutations = "fixed+session-present-zero", engine.MutSessionPresentZero
	others := 0
	for seed := uint64(1); seed <= 4; seed++ {
		cfg := Config{Seed: seed, Profile: "swarm", Preset: p}
		plan, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := Run(cfg, plan)
		if len(r.Violations) == 0 {
			continue
		}
		if v := r.Violations[0]; v.Invariant != model.SessionPresent || v.ExplainedBy != "" {
			t.Fatalf("seed %d: first violation %v (explained by %q), want the broker's SessionPresent", seed, v, v.ExplainedBy)
		}
		for _, v := range r.Violations {
			if v.Invariant == model.SessionPresent {
				continue
			}
			others++
			if !strings.HasPrefix(v.ExplainedBy, "SessionPresent at step ") {
				t.Errorf("seed %d: %v explained by %q, want a SessionPresent violation", seed, v, v.ExplainedBy)
			}
		}
	}
	if others == 0 {
		t.Fatal("no violation of another invariant to explain")
	}
}

// TestJudgeCanariesSwarm: the swarm scenario's campaign, whose seeds draw
// short keep-alives and idle gaps, catches a broker whose keep-alive is not
// restarted by packets under BrokerKeepAlive, and one that denies a kept
// session under SessionPresent, within the campaign budget.
func TestJudgeCanariesSwarm(t *testing.T) {
	checkCaught(t, "swarm", []ruleCanary{
		{engine.MutKeepAliveNoReset, false, model.BrokerKeepAlive},
		{engine.MutSessionPresentZero, false, model.SessionPresent},
	})
}
