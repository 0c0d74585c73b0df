package main

import (
	"testing"

	"github.com/mqttlab/mqttlab/sim"
)

// BenchmarkCampaignSeed measures one default campaign seed (standard
// scenario, preset fixed, profile swarm, judged) per iteration, on one core:
// the figure defaultSeeds is tuned from (seeds/s per core x 2 cores x 60 s).
func BenchmarkCampaignSeed(b *testing.B) {
	w, err := worldFlags{profile: defaultProfile, preset: defaultPreset, scenario: defaultScenario, version: defaultVersion, judge: string(defaultJudge)}.resolve("bench")
	if err != nil {
		b.Fatal(err)
	}
	rn := sim.Runner{ReuseHistories: true} // as a campaign worker
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if res := runSeed(&rn, w, uint64(i)); res.rec.Error != "" {
			b.Fatalf("seed %d: %s", i, res.rec.Error)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
}
