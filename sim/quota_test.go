package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// smallRMFactory builds the real engines as defaultFactory does, except that
// every client announces Receive Maximum rm in its CONNECT.
func smallRMFactory(rm uint16) engineFactory {
	return func(spec NodeSpec, restored []engine.Record) (Engine, error) {
		if spec.Broker {
			return defaultFactory(spec, restored)
		}
		cfg := engine.DefaultClientConfig(spec.Name, spec.Preset.Client)
		cfg.Version = packet.Version(spec.Version)
		cfg.KeepAlive = uint16(spec.KeepAlive / engine.Second)
		cfg.ReceiveMaximum = rm
		return engine.NewClient(cfg, restored)
	}
}

// quotaRun runs the standard scenario under swarm for seed with clients that
// announce Receive Maximum 2, under the fixed preset with mutations m.
func quotaRun(t *testing.T, seed uint64, m engine.Mutation) Result {
	t.Helper()
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	p.Broker.Mutations = m
	cfg := Config{Seed: seed, Profile: "swarm", Preset: p, factory: smallRMFactory(2)}
	r := mustRun(t, cfg)
	return r
}

// TestSendQuotaToClientCanary: clients announce Receive Maximum 2 and the
// publishers' traffic fans out to the subscribers. The fixed broker holds
// what exceeds a subscriber's quota, so no run shows a SendQuota violation
// (nor any other promised one); with MutIgnoreReceiveMax it sends beyond
// the quota and the model names the broker under SendQuota [MQTT-3.3.4-9].
func TestSendQuotaToClientCanary(t *testing.T) {
	const seeds = 32
	caught := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		fixed := quotaRun(t, seed, 0)
		if len(fixed.Violations) != 0 {
			t.Fatalf("seed %d: fixed broker with client Receive Maximum 2: %v", seed, fixed.Violations)
		}
		h := fixed.History()
		if vs := model.Check(h, model.Options{Only: model.SetOf(model.SendQuota)}); len(vs) != 0 {
			t.Fatalf("seed %d: fixed broker: %v", seed, vs)
		}
		mut := quotaRun(t, seed, engine.MutIgnoreReceiveMax)
		for _, v := range mut.Violations {
			if v.Invariant == model.SendQuota && v.Node == model.BrokerNode {
				caught++
				break
			}
		}
	}
	if caught < seeds/2 {
		t.Fatalf("MutIgnoreReceiveMax: SendQuota violation of the broker in only %d of %d seeds", caught, seeds)
	}
	t.Logf("MutIgnoreReceiveMax caught in %d of %d seeds", caught, seeds)
}
