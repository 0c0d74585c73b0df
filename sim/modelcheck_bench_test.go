package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// checkInput is the history of seed 1 of the standard scenario under a
// profile and preset, with the preset's model policy.
func checkInput(b *testing.B, profile, preset string) (model.History, model.Policy) {
	b.Helper()
	p, err := engine.PresetByName(preset)
	if err != nil {
		b.Fatal(err)
	}
	r := mustRun(b, Config{Seed: 1, Profile: profile, Preset: p, SkipCheck: true})
	return r.History(), r.Policy
}

// BenchmarkModelCheck measures the model check of one standard-scenario
// history (what a campaign pays per seed on top of the world): the promised
// check of the fixed preset under each profile, and the full check of a
// legacy swarm history, which has many violations.
func BenchmarkModelCheck(b *testing.B) {
	for _, profile := range []string{"calm", "lossy", "crashy", "swarm"} {
		b.Run("promised-"+profile, func(b *testing.B) {
			h, pol := checkInput(b, profile, "fixed")
			b.ReportAllocs()
			for b.Loop() {
				model.CheckPromised(h, pol)
			}
			b.ReportMetric(float64(len(h.Events)), "events")
		})
	}
	b.Run("all-legacy-swarm", func(b *testing.B) {
		h, _ := checkInput(b, "swarm", "legacy")
		b.ReportAllocs()
		for b.Loop() {
			model.Check(h, model.Options{})
		}
		b.ReportMetric(float64(len(h.Events)), "events")
	})
}
