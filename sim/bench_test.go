package sim

import (
	"fmt"
	"runtime"
	"syscall"
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

// BenchmarkSwarmSeeds reports seeds per second per core of the swarm
// scenario (its workload drawn per seed, DefaultWorkload's pins) under the
// swarm fault profile, beside BenchmarkSeeds' standard scenario: the world
// alone, and the world with its checksum and model check (a campaign's
// whole seed).
func BenchmarkSwarmSeeds(b *testing.B) {
	b.Run("world", func(b *testing.B) { benchSwarmSeeds(b, true) })
	b.Run("checked", func(b *testing.B) { benchSwarmSeeds(b, false) })
}

func benchSwarmSeeds(b *testing.B, skipCheck bool) {
	var events int64
	rn := Runner{ReuseHistories: true}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cfg := Config{Seed: uint64(i), Profile: "swarm", Scenario: SwarmScenario, Workload: DefaultWorkload(), SkipCheck: skipCheck}
		plan, err := Generate(cfg)
		if err != nil {
			b.Fatal(err)
		}
		r := rn.Run(cfg, plan)
		if !skipCheck {
			r.Checksum()
		}
		events += r.Stats.Events
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "seeds/s")
	b.ReportMetric(float64(events)/sec, "events/s")
}

// scaleWorkload is the scale benchmark's workload: one publisher and one
// subscriber exchanging 20 messages beside n-2 idle clients (persistent
// sessions, one subscription each), every other dimension off.
func scaleWorkload(n int) Workload {
	w, err := ParseWorkload(fmt.Sprintf("pubs=1,subs=1,idle=%d,msgs=20,version=5,session=persistent,wildcards=off,overlap=off,downgrade=off,"+
		"unsub=off,suboptions=off,retained=off,clear=off,wills=off,disconnects=off,msgexpiry=off,windows=off,keepalive=off,payload=off,wrap=off,shared=off,subids=off", n-2))
	if err != nil {
		panic(err)
	}
	return w
}

// BenchmarkScale reports, as the client count grows (2, 10, 100, 1,000,
// 10,000 clients in one world, all but two idle), seeds per second under
// calm with the model check, the process's CPU per seed, and the heap a world holds per idle client
// once every client is connected and subscribed (B/idle-client: the live
// heap of the 10,000-client world after its run, less the 2-client one's,
// over the 9,998 idle clients; goal 16 KiB).
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{2, 10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			var rn Runner
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				cfg := Config{Seed: uint64(i), Profile: "calm", Scenario: SwarmScenario, Workload: scaleWorkload(n)}
				plan, err := Generate(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if r := rn.Run(cfg, plan); r.Err != nil || len(r.Violations) > 0 || !r.Quiet {
					b.Fatalf("%d clients, seed %d: %v %v quiet=%v", n, i, r.Err, r.Violations, r.Quiet)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
			b.ReportMetric(float64(processCPU()-cpu0)/1e6/float64(b.N), "cpu-ms/seed")
			if n == 10000 {
				b.StopTimer()
				b.ReportMetric(float64(worldHeap(b, n)-worldHeap(b, 2))/float64(n-2), "B/idle-client")
			}
		})
	}
}

// processCPU is the CPU time the process has used (user + system, every
// thread: the collector's workers too), in nanoseconds. On a machine that
// other jobs share, seeds/s (wall time) drops while this holds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// worldHeap is the live heap a world of scaleWorkload(n) holds after its
// plan and liveness phase (its history and trace included).
func worldHeap(b *testing.B, n int) uint64 {
	cfg := Config{Seed: 1, Profile: "calm", Scenario: SwarmScenario, Workload: scaleWorkload(n), SkipCheck: true}
	plan, err := Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, op := range plan.Ops {
		if err := w.Apply(op); err != nil {
			b.Fatal(err)
		}
	}
	w.RunUntilQuiet()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(w)
	return after.HeapAlloc - before.HeapAlloc
}
