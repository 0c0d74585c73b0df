package properties

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
)

// catchRuns is the opt-in number of simulated `go test ./properties` runs
// TestCanaryCatchRate makes per canary (MQTTLAB_CATCH_RUNS); without it the
// test makes catchRunsCI of them.
const (
	catchRunsEnv = "MQTTLAB_CATCH_RUNS"
	catchRunsCI  = 2
)

// setFlag sets a rapid flag for the rest of the test.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set(name, old) })
}

// catches runs canary c's search as TestCanaries does (rounds searches of
// the default budget, each from its own rapid seed) for runs different
// seeds, without shrinking, and returns how many of them caught it.
func catches(t *testing.T, c canary, runs int, firstSeed uint64) int {
	t.Helper()
	p := canaryPreset(t, c)
	spec := c.spec
	spec.Presets, spec.CrashAt = []engine.Preset{p}, true
	prop := PlanProperty(spec, FixedJudge(c.want), nil)
	rounds := roundsOf(c)
	caught := 0
	for run := range runs {
		for r := range rounds {
			setFlag(t, "rapid.seed", strconv.FormatUint(firstSeed+uint64(run*rounds+r), 10))
			if FindCounterexample(t.Name(), prop).Found {
				caught++
				break
			}
		}
	}
	return caught
}

// TestCanaryCatchRate counts how often the default budget catches each
// canary: a run stands for one `go test ./properties` (TestCanaries' search,
// rounds included) from its own rapid seed, without shrinking. In CI it
// makes catchRunsCI runs per canary of at most two rounds from fixed seeds
// and requires every one to catch (a cheap guard against a budget or
// generator change that makes a canary rare; LegacyQoS2Volatile, seconds a
// run, is left to TestCanaries). With MQTTLAB_CATCH_RUNS=N (e.g. 100; minutes of CPU) it
// makes N runs from seeds 1000.. and requires at least 99% of them to catch:
//
//	MQTTLAB_CATCH_RUNS=100 go test ./properties -run TestCanaryCatchRate -v -timeout 2h
func TestCanaryCatchRate(t *testing.T) {
	runs, first := catchRunsCI, uint64(1)
	if s := os.Getenv(catchRunsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of runs", catchRunsEnv, s)
		}
		runs, first = n, 1000
	}
	t.Chdir(t.TempDir()) // no fail files in testdata
	setFlag(t, "rapid.nofailfile", "true")
	setFlag(t, "rapid.shrinktime", "1ns")
	for _, c := range canaries {
		if runs == catchRunsCI && c.rounds > 2 {
			continue // CI: TestCanaries already searches it, and its rounds cost seconds
		}
		t.Run(c.name, func(t *testing.T) {
			got := catches(t, c, runs, first)
			t.Logf("caught in %d of %d runs", got, runs)
			if need := (99*runs + 99) / 100; got < need {
				t.Errorf("caught in %d of %d runs, want at least %d (99%%)", got, runs, need)
			}
		})
	}
}
