package sim

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// freshRange is one campaign of TestFreshRanges: seeds [start, start+n)
// of the swarm scenario under a fault profile, the default workload.
type freshRange struct {
	profile string
	n       uint64
}

// freshRanges are the campaigns TestFreshRanges runs, each from its own
// random start (issue 21's evidence): the default campaign (the swarm
// profile) three times over 100,000 seeds, then 20,000 seeds under each
// fault profile of Profiles, so a new profile is run with no change here.
func freshRanges() []freshRange {
	rs := []freshRange{{"swarm", 100_000}, {"swarm", 100_000}, {"swarm", 100_000}}
	for _, p := range Profiles() {
		rs = append(rs, freshRange{p.Name, 20_000})
	}
	return rs
}

// freshStart returns a start seed nobody has run: drawn at random in
// [10^8, 10^12) (the fixed campaigns and tests use seeds below 2 × 10^7),
// or MQTTLAB_FRESH_START when set, to replay a range.
func freshStart(t *testing.T, i int) uint64 {
	t.Helper()
	if s := os.Getenv("MQTTLAB_FRESH_START"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MQTTLAB_FRESH_START=%q is not a seed", s)
		}
		return v + uint64(i)*1_000_000
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return 100_000_000 + binary.LittleEndian.Uint64(b[:])%(1_000_000_000_000-100_000_000)
}

// TestFreshRanges: the fixed engines break no promise on seeds nobody has
// run, each range from a random start that the test prints first, so a
// failure replays as 'simrun campaign -seeds N -start S -profile P' (or
// MQTTLAB_FRESH_START=S, which starts range i at S + i × 1,000,000). By
// default 50 seeds a range (a fresh sample each CI run); opt-in with
// MQTTLAB_FRESH=1: three ranges of the default campaign's 100,000 seeds and
// 20,000 of each fault profile (freshRanges). Results: docs/campaigns.md.
func TestFreshRanges(t *testing.T) {
	long := os.Getenv("MQTTLAB_FRESH") == "1"
	for i, fr := range freshRanges() {
		start, n := freshStart(t, i), fr.n
		if !long {
			n = 50
		}
		t.Logf("range %d: simrun campaign -seeds %d -start %d -profile %s", i, n, start, fr.profile)
		failing := runRange(t, fr.profile, start, n)
		t.Logf("range %d: %d of %d seeds from %d (profile %s) fail", i, len(failing), n, start, fr.profile)
		for j, f := range failing {
			if j == 10 {
				t.Errorf("... and %d more", len(failing)-10)
				break
			}
			t.Error(f)
		}
	}
}

// TestFreshRangesEvidence: the long form runs what issue 21 asks: three
// ranges of 100,000 default seeds (the swarm profile) and 20,000 seeds of
// every fault profile.
func TestFreshRangesEvidence(t *testing.T) {
	got := map[freshRange]int{}
	for _, fr := range freshRanges() {
		got[fr]++
	}
	if n := got[freshRange{"swarm", 100_000}]; n != 3 {
		t.Errorf("%d ranges of 100,000 default seeds, want 3", n)
	}
	for _, p := range Profiles() {
		if got[freshRange{p.Name, 20_000}] != 1 {
			t.Errorf("profile %s: no range of 20,000 seeds of its own", p.Name)
		}
	}
	if len(freshRanges()) != 3+len(Profiles()) {
		t.Errorf("%d ranges, want %d: %v", len(freshRanges()), 3+len(Profiles()), freshRanges())
	}
}

// runRange runs seeds [start, start+n) under profile on one Runner per
// core and returns the failing seeds' reports.
func runRange(t *testing.T, profile string, start, n uint64) []string {
	t.Helper()
	workers := uint64(runtime.GOMAXPROCS(0))
	failures := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() { // each worker its own Runner: seeds are independent
			defer wg.Done()
			var rn Runner
			for seed := start + w; seed < start+n; seed += workers {
				cfg := Config{Seed: seed, Profile: profile, Scenario: SwarmScenario, Workload: DefaultWorkload()}
				plan, err := Generate(cfg)
				if err != nil {
					failures[w] = append(failures[w], fmt.Sprintf("seed %d: %v", seed, err))
					continue
				}
				if r := rn.Run(cfg, plan); r.Err != nil || len(r.Violations) > 0 {
					failures[w] = append(failures[w], fmt.Sprintf("seed %d: %v %v\nreplay: simrun run -scenario swarm -profile %s -seed %d",
						seed, r.Err, r.Violations, profile, seed))
				}
			}
		}()
	}
	wg.Wait()
	var out []string
	for _, f := range failures {
		out = append(out, f...)
	}
	return out
}
