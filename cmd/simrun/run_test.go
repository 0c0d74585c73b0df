package main

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// TestRunChecksumStable: the same seed twice prints the same checksum, and
// another seed another one (so the comparison can fail).
func TestRunChecksumStable(t *testing.T) {
	a := summaryJSON(t, exitOK, "run", "-seed", "42")
	b := summaryJSON(t, exitOK, "run", "-seed", "42")
	if a.Checksum != b.Checksum {
		t.Errorf("seed 42: checksum %s then %s", a.Checksum, b.Checksum)
	}
	c := summaryJSON(t, exitOK, "run", "-seed", "43")
	if c.Checksum == a.Checksum {
		t.Errorf("seeds 42 and 43 share checksum %s", a.Checksum)
	}
	if a.Seed != 42 || a.Preset != "fixed" || a.Profile != "swarm" || a.Scenario != "swarm" || a.Version != "mixed" || a.Judge != "spec" {
		t.Errorf("defaults: %+v", a)
	}
	if a.Published == 0 || a.Accepted == 0 || a.Delivered == 0 || a.Faults == nil {
		t.Errorf("empty counters: %+v", a.statsJSON)
	}
}

// TestRunTextSummary: the readable summary starts with the identity line
// (the world it ran: -version 3 under the default swarm scenario pins
// every client to 3.1.1, and says so) and has every counter and the
// verdict.
func TestRunTextSummary(t *testing.T) {
	r := simrun(t, "run", "-seed", "5", "-version", "3", "-profile", "lossy").want(t, exitOK)
	first, _, _ := strings.Cut(r.stdout, "\n")
	if first != "seed 5  profile lossy  preset fixed  scenario swarm  version 3.1.1" {
		t.Errorf("first line %q", first)
	}
	for _, want := range []string{"published ", "accepted ", "delivered ", "duplicates ", "retransmits ", "crashes ", "faults: ", "judged by ", "violations: none", "replay: " + replayPrefix + " run -seed 5 -preset fixed -profile lossy -scenario swarm -workload version=4"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestReplayReproducesChecksum: a saved plan replays to the original's
// checksum, and the trace file hashes to it.
func TestReplayReproducesChecksum(t *testing.T) {
	dir := t.TempDir()
	plan, trace := filepath.Join(dir, "run.plan"), filepath.Join(dir, "run.trace")
	orig := summaryJSON(t, exitOK, "run", "-seed", "7", "-profile", "crashy", "-save", plan, "-trace", trace)
	if orig.Replay != replayPrefix+" replay "+plan {
		t.Errorf("replay command %q", orig.Replay)
	}
	back := summaryJSON(t, exitOK, "replay", plan)
	if back.Checksum != orig.Checksum || back.Seed != 7 || back.Profile != "crashy" {
		t.Errorf("replay: %+v, original %+v", back, orig)
	}
	h := fnv.New64a()
	h.Write([]byte(fileText(t, trace)))
	if got := fmt.Sprintf("%016x", h.Sum64()); got != orig.Checksum {
		t.Errorf("trace hashes to %s, checksum %s", got, orig.Checksum)
	}
	if !strings.HasPrefix(fileText(t, trace), "# seed 7 profile crashy preset fixed") {
		t.Errorf("trace header: %.80q", fileText(t, trace))
	}
}

// TestRunPlanOverride: run -plan takes the file's ops and header, and an
// explicit flag overrides the header (the plan does not depend on the
// preset, so it equals the generated run under that preset).
func TestRunPlanOverride(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.plan")
	summaryJSON(t, exitOK, "run", "-seed", "11", "-save", plan)
	same := summaryJSON(t, exitOK, "run", "-plan", plan)
	orig := summaryJSON(t, exitOK, "run", "-seed", "11")
	if same.Checksum != orig.Checksum {
		t.Errorf("run -plan: checksum %s, original %s", same.Checksum, orig.Checksum)
	}
	over := summaryJSON(t, -1, "run", "-plan", plan, "-preset", "legacy", "-judge", "preset")
	direct := summaryJSON(t, -1, "run", "-seed", "11", "-preset", "legacy", "-judge", "preset")
	if over.Preset != "legacy" || over.Checksum != direct.Checksum {
		t.Errorf("-plan with -preset legacy: %s %s, direct %s", over.Preset, over.Checksum, direct.Checksum)
	}
}

// TestJudges: with -judge spec, preset fixed is judged exactly like
// model.CheckPromised; -judge preset holds legacy to its own promises; -all
// splits every violation into judged and informational without overlap.
func TestJudges(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		cfg := sim.Config{Seed: seed, Profile: "swarm"}
		plan, err := sim.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := sim.Run(cfg, plan)
		v := judgeSpec.judgeRun(r, true)
		if !sameViolations(v.violations, model.CheckPromised(r.History(), r.Policy)) {
			t.Errorf("seed %d: spec judge of fixed %v, CheckPromised %v", seed, v.violations, r.Violations)
		}
		all := model.Check(r.History(), model.Options{})
		if len(v.violations)+len(v.unpromised) != len(all) {
			t.Errorf("seed %d: %d judged + %d informational != %d found", seed, len(v.violations), len(v.unpromised), len(all))
		}
		for _, x := range v.unpromised {
			if v.promised.Has(x.Invariant) {
				t.Errorf("seed %d: promised %s listed as informational", seed, x.Invariant)
			}
		}
		lcfg := sim.Config{Seed: seed, Profile: "swarm", Preset: mustPreset(t, "legacy")}
		lr := sim.Run(lcfg, plan)
		lv := judgePreset.judgeRun(lr, false)
		if !sameViolations(lv.violations, model.CheckPromised(lr.History(), lr.Policy)) {
			t.Errorf("seed %d: preset judge of legacy %v, CheckPromised %v", seed, lv.violations, lr.Violations)
		}
	}
}

// TestLegacyRunFailsWithReplay: a legacy seed that violates what the fixed
// engine promises exits 1 and prints its replay command; the same run judged
// by its own preset's promises lists them as informational with -all.
func TestLegacyRunFailsWithReplay(t *testing.T) {
	dir := t.TempDir()
	r := simrun(t, "campaign", "-shrink", "0", "-seeds", "6", "-preset", "legacy", "-scenario", "standard", "-out", dir).want(t, exitViolation)
	recs := readRecords(t, dir)
	var failing record
	for _, rec := range recs {
		if rec.failed() {
			failing = rec
			break
		}
	}
	if failing.First == nil {
		t.Fatalf("no failing legacy seed in 6:\n%s", r.stdout)
	}
	seed := fmt.Sprint(failing.Seed)
	run := simrun(t, "run", "-seed", seed, "-preset", "legacy", "-scenario", "standard").want(t, exitViolation)
	want := "replay: " + replayPrefix + " run -seed " + seed + " -preset legacy -profile swarm -scenario standard -version 5"
	if !strings.Contains(run.stdout, want) || !strings.Contains(run.stderr, "replay: ") {
		t.Errorf("no replay command:\n%s\n%s", run.stdout, run.stderr)
	}
	own := summaryJSON(t, -1, "run", "-seed", seed, "-preset", "legacy", "-scenario", "standard", "-judge", "preset", "-all")
	found := false
	for _, v := range append(own.Violations, own.Unpromised...) {
		found = found || v.Invariant == failing.First.Invariant
	}
	if !found {
		t.Errorf("seed %s judged by its preset with -all does not list %s: %+v", seed, failing.First.Invariant, own)
	}
}

// mustPreset looks a preset up.
func mustPreset(t *testing.T, name string) engine.Preset {
	t.Helper()
	p, err := engine.PresetByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sameViolations reports whether two lists hold equal violations, cited
// events included.
func sameViolations(a, b []model.Violation) bool {
	return slices.EqualFunc(a, b, func(x, y model.Violation) bool { return reflect.DeepEqual(x, y) })
}
