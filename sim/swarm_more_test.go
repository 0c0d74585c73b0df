package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestAliasesDollarCanariesSwarm: the swarm workload draws the broker's
// outbound Topic Aliases (key aliases) and $ topics (key dollar) in one
// seed of 4 each, so the campaign's workload under the swarm faults
// catches, within 2,000 seeds, a broker that assigns aliases beyond the
// client's Topic Alias Maximum (TopicAlias) and one whose first-level
// wildcards match $ topics (DollarTopics), each at a seed where fixed
// shows no violation of that rule.
func TestAliasesDollarCanariesSwarm(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{
		{engine.MutAliasAboveMax, model.TopicAlias},
		{engine.MutDollarWildcard, model.DollarTopics},
	})
}

// TestAliasesDollarFixedClean: with aliases and dollar pinned on, the
// fixed engines show no violation in 40 swarm seeds, and the runs do
// exercise both: PUBLISHes name their topic by alias alone, and $ topics
// reach their subscribers.
func TestAliasesDollarFixedClean(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := ParseWorkload("aliases=on,dollar=on")
	if err != nil {
		t.Fatal(err)
	}
	var rn Runner
	aliasOnly, dollar := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		r := runSwarmSeed(t, &rn, seed, fixed, wl)
		for _, v := range r.Violations {
			t.Errorf("seed %d (simrun run -scenario swarm -seed %d%s): %v", seed, seed, workloadFlag(wl), v)
		}
		for _, e := range r.History().Events {
			switch {
			case e.Kind == model.Received && e.Packet.Type == model.PUBLISH && e.Packet.TopicAlias != 0 && e.Packet.Topic == "":
				aliasOnly++
			case e.Kind == model.Delivered && len(e.Topic) > 0 && e.Topic[0] == '$':
				dollar++
			}
		}
	}
	if aliasOnly == 0 || dollar == 0 {
		t.Fatalf("%d PUBLISHes by alias alone, %d deliveries on $ topics: the test exercises nothing", aliasOnly, dollar)
	}
	t.Logf("%d PUBLISHes by alias alone, %d deliveries on $ topics", aliasOnly, dollar)
}
