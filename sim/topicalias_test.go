package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// aliasFactory builds the real engines with broker-to-client Topic Aliases
// on: the broker assigns up to 4 per connection, each v5 client announces a
// Topic Alias Maximum of 2, so a subscriber of three topics sees aliases
// reassigned, sent alone, and (after a reconnect) set again.
func aliasFactory() engineFactory {
	tw := engineTweaks{
		broker: func(c *engine.BrokerConfig) { c.TopicAliasesOut = 4 },
		client: func(c *engine.ClientConfig) {
			if c.Version == packet.V5 {
				c.TopicAliasMaximum = 2
			}
		},
	}
	return func(spec NodeSpec, restored []engine.Record) (Engine, error) { return buildEngine(spec, restored, tw) }
}

// TestTopicAliasesFixed: with Topic Aliases on, the fixed engines keep every
// promise under the swarm faults of the standard scenario (the model
// resolves an alias sent alone before routing and Retransmit read its
// topic), and the runs do send aliases alone.
func TestTopicAliasesFixed(t *testing.T) {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	aliasOnly := 0
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := Config{Seed: seed, Profile: "swarm", Preset: p, Scenario: "standard", factory: aliasFactory()}
		r := mustRun(t, cfg)
		for _, v := range r.Violations {
			t.Errorf("seed %d: %v", seed, v)
		}
		h := r.History()
		for _, e := range h.Events {
			if e.Kind == model.Received && e.Packet.Type == model.PUBLISH && e.Packet.TopicAlias != 0 && e.Packet.Topic == "" {
				aliasOnly++
			}
		}
	}
	if aliasOnly == 0 {
		t.Fatal("no client received a PUBLISH naming its topic by alias alone: the test exercises nothing")
	}
	t.Logf("%d PUBLISHes named their topic by alias alone", aliasOnly)
}

// TestTopicAliasCanary: a broker that assigns aliases beyond the client's
// Topic Alias Maximum (MutAliasAboveMax) is caught by TopicAlias.
func TestTopicAliasCanary(t *testing.T) {
	seed, others := catchSeedWith(t, "standard", aliasFactory(), engine.MutAliasAboveMax, false, model.TopicAlias, 50)
	if seed == 0 {
		t.Fatalf("MutAliasAboveMax not caught by TopicAlias within 50 seeds (other violations: %v)", others)
	}
	t.Logf("caught at seed %d", seed)
}
