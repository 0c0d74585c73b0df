package sim

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
)

// workloadValueCap bounds the numeric values TestWorkloadValues pins: a
// range's low end, and its high end or this cap, whichever is lower (a
// pin of 100,000 idle clients or messages is a load test, not a world a
// seed range can sweep).
const workloadValueCap = 400

// workloadValues lists every "key=value" of the -workload help text
// (WorkloadDims, which the usage prints): each named value, and a numeric
// range's low and (capped) high ends. A key added to the workload is in it
// with no change here.
func workloadValues(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range WorkloadDims() {
		if lo, hi, ok := strings.Cut(d.Values, ".."); ok {
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				t.Fatalf("workload key %s: range %q", d.Key, d.Values)
			}
			out = append(out, fmt.Sprintf("%s=%d", d.Key, l), fmt.Sprintf("%s=%d", d.Key, min(h, max(l, workloadValueCap))))
			continue
		}
		for _, v := range strings.Split(d.Values, "|") {
			out = append(out, d.Key+"="+v)
		}
	}
	return out
}

// workloadSeeds is how many seeds each value runs: CI's form (300 a
// value), or the long form with MQTTLAB_LONG=1 (3,000 a value, as
// 'simrun campaign -seeds 3000 -workload KEY=VALUE -shrink 0'). wrap=long
// (65,600 messages a seed, about a second of CPU each) and exhaust=on (a
// burst of 65,536, one to three seconds) run a tenth of the long form,
// and 6 seeds in CI, where their 300 would take minutes of CI's time.
func workloadSeeds(value string) uint64 {
	long := os.Getenv("MQTTLAB_LONG") == "1"
	heavy := value == "wrap=long" || value == "exhaust=on"
	switch {
	case long && heavy:
		return 300
	case long:
		return 3000
	case heavy:
		return 6
	}
	return 300
}

// TestWorkloadValues: every -workload key=value of the help text is a
// world of its own, and the fixed engines break no promise in it over
// fresh seeds under the swarm faults. CI runs 300 seeds a value from
// 10,000,000 on, which no other test runs; MQTTLAB_LONG=1 runs 3,000 from
// seed 0, what 'simrun campaign -seeds 3000 -workload KEY=VALUE -shrink 0'
// runs (docs/workloads.md).
func TestWorkloadValues(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	start := uint64(10_000_000)
	if os.Getenv("MQTTLAB_LONG") == "1" {
		start = 0
	}
	for _, v := range workloadValues(t) {
		wl, err := ParseWorkload(v)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			var rn Runner
			n := workloadSeeds(v)
			failing := 0
			for seed := start; seed < start+n; seed++ {
				r := runSwarmSeed(t, &rn, seed, fixed, wl)
				if len(r.Violations) == 0 {
					continue
				}
				if failing++; failing <= 3 {
					t.Errorf("seed %d: %v\nreplay: simrun run -scenario swarm -seed %d -workload %s", seed, r.Violations[0], seed, v)
				}
			}
			if failing > 0 {
				t.Errorf("%d of %d seeds fail", failing, n)
			}
		})
	}
}

// TestWorkloadValuesListed: the list holds each key of the help text, and
// a range's ends.
func TestWorkloadValuesListed(t *testing.T) {
	vals := workloadValues(t)
	for _, want := range []string{"pubs=1", "pubs=8", "idle=0", "idle=400", "session=expiry", "wrap=long", "subids=off"} {
		found := false
		for _, v := range vals {
			found = found || v == want
		}
		if !found {
			t.Errorf("workloadValues lacks %s: %v", want, vals)
		}
	}
	for _, d := range WorkloadDims() {
		found := false
		for _, v := range vals {
			found = found || strings.HasPrefix(v, d.Key+"=")
		}
		if !found {
			t.Errorf("workload key %s has no value in the list", d.Key)
		}
	}
}
