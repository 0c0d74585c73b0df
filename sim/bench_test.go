package sim

import (
	"testing"
)

// benchPlan is the standard scenario's calm plan of seed 1.
func benchPlan(b *testing.B, profile string) (Config, Plan) {
	cfg := Config{Seed: 1, Profile: profile, SkipCheck: true}
	plan, err := Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cfg, plan
}

// BenchmarkEvents reports simulated engine events per second (broker and
// clients, one core) and allocations per event.
func BenchmarkEvents(b *testing.B) {
	cfg, plan := benchPlan(b, "calm")
	var events int64
	var rn Runner
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := rn.Run(cfg, plan)
		events += r.Stats.Events
	}
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() { rn.Run(cfg, plan) }))/float64(events/int64(b.N)), "allocs/event")
}

// BenchmarkSeeds reports seeds per second per core on the standard scenario
// under swarm (a fresh seed each iteration, plan generation included), and
// virtual time per wall time: the world alone, on a Runner as a campaign
// worker runs it; the same through sim.Run, each seed on fresh memory; the
// world and its trace's checksum (rendered from the tape, as a campaign does
// for every seed); and the world, its checksum and the model check (a
// campaign's whole seed).
func BenchmarkSeeds(b *testing.B) {
	b.Run("world", func(b *testing.B) { benchSeeds(b, true, false, true) })
	b.Run("fresh", func(b *testing.B) { benchSeeds(b, true, false, false) })
	b.Run("hashed", func(b *testing.B) { benchSeeds(b, true, true, true) })
	b.Run("checked", func(b *testing.B) { benchSeeds(b, false, true, true) })
}

func benchSeeds(b *testing.B, skipCheck, hash, reuse bool) {
	var virtual, events int64
	rn := Runner{ReuseHistories: true} // each history is checked before the next run
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cfg := Config{Seed: uint64(i), Profile: "swarm", SkipCheck: skipCheck}
		plan, err := Generate(cfg)
		if err != nil {
			b.Fatal(err)
		}
		var r Result
		if reuse {
			r = rn.Run(cfg, plan)
		} else {
			r = Run(cfg, plan)
		}
		if hash {
			r.Checksum()
		}
		virtual += int64(r.End)
		events += r.Stats.Events
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "seeds/s")
	b.ReportMetric(float64(virtual)/1e9/sec, "virtual/wall")
	b.ReportMetric(float64(events)/sec, "events/s")
}
