package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

func TestZZWide(t *testing.T) {
	rules := model.SetOf(model.GrantedQoS, model.Unsubscribe, model.Overlap, model.Retained, model.MessageExpiry,
		model.FlowResume, model.ClientKeepAlive, model.SessionExpiry, model.Will)
	p, _ := engine.PresetByName("fixed")
	n := 0
	for _, sc := range []struct {
		scen, prof string
		from, to   uint64
	}{{"swarm", "swarm", 201, 1500}, {"standard", "crashy", 1, 300}, {"standard", "lossy", 1, 300}, {"swarm", "crashy", 1, 300}} {
		for seed := sc.from; seed <= sc.to; seed++ {
			cfg := Config{Seed: seed, Profile: sc.prof, Preset: p, Scenario: sc.scen}
			plan, _ := Generate(cfg)
			r := Run(cfg, plan)
			for _, v := range r.Violations {
				if rules.Has(v.Invariant) && n < 8 {
					n++
					t.Errorf("%s/%s seed %d: %v", sc.scen, sc.prof, seed, v)
				}
			}
		}
	}
}
