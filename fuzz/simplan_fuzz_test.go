package fuzz

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/properties"
	"github.com/mqttlab/mqttlab/sim"
)

// FuzzSimPlan: for any input, the plan and policy PlanFromBytes decodes run
// to completion and show no violation that the policy promises
// (model.CheckPromised through properties.JudgeOf).
func FuzzSimPlan(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := PlanFromBytes(data)
		if err != nil {
			return
		}
		o := properties.Judged(cs, properties.JudgeOf(cs.Config.Preset))
		if o.Result.Err != nil {
			t.Fatalf("run did not complete: %v\n%s", o.Result.Err, cs)
		}
		if len(o.Violations) > 0 {
			t.Fatalf("promised invariant violated:\n%s", o.Report())
		}
	})
}

// TestPlanFromBytesCorpus decodes every committed FuzzSimPlan input into a
// plan whose text form parses back to the same ops and preset policies (what
// a crasher's report prints is a valid plan file), and checks the corpus exercises
// both versions and several presets and profiles.
func TestPlanFromBytesCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/fuzz/FuzzSimPlan/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed corpus: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		data := readCorpus(t, f)
		cs, err := PlanFromBytes(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		back, err := sim.ParsePlan(cs.Plan.String())
		if err != nil {
			t.Fatalf("%s: plan text does not parse: %v\n%s", f, err, cs)
		}
		if len(back.Ops) != len(cs.Plan.Ops) {
			t.Fatalf("%s: %d ops parsed back, %d generated", f, len(back.Ops), len(cs.Plan.Ops))
		}
		cfg, err := sim.ConfigOf(back.Header)
		if err != nil || cfg.Preset.Client != cs.Config.Preset.Client || cfg.Preset.Broker != cs.Config.Preset.Broker {
			t.Fatalf("%s: plan header gives preset %+v (%v), case ran %+v", f, cfg.Preset, err, cs.Config.Preset)
		}
		seen["profile "+cs.Config.Profile] = true
		seen["preset "+cs.Config.Preset.Name] = true
	}
	if len(seen) < 4 {
		t.Errorf("corpus covers only %v", seen)
	}
}

// readCorpus reads one []byte value of a "go test fuzz v1" corpus file.
func readCorpus(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a one-value go fuzz corpus file", path)
	}
	v := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
	s, err := strconvUnquote(v)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

// strconvUnquote unquotes a Go string literal.
func strconvUnquote(s string) (string, error) { return strconv.Unquote(s) }
