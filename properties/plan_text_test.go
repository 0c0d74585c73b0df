package properties

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
)

// TestCaseTextReplays: the plan file a failure prints (Case.String) for a
// case of any canary preset (every legacy knob and every mutant, named
// "fixed+<canary>", which engine does not know) or a mutant under the name
// "fixed" replays through sim.ParsePlan and sim.ConfigOf with the case's
// checksum, with no comment line saying it cannot.
func TestCaseTextReplays(t *testing.T) {
	var presets []engine.Preset
	for _, c := range canaries {
		p := canaryPreset(t, c)
		presets = append(presets, p)
		p.Name = "fixed"
		presets = append(presets, p)
	}
	spec := PlanSpec{Presets: presets, MaxSteps: 12}
	rapid.Check(t, func(t *rapid.T) {
		cs, err := GenCase(RapidChooser{t}, spec)
		if err != nil {
			t.Fatal(err)
		}
		text := cs.String()
		if strings.HasPrefix(text, "#") {
			t.Fatalf("the plan of a seeded case has a comment line:\n%s", text)
		}
		back, err := sim.ParsePlan(text)
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, text)
		}
		cfg, err := sim.ConfigOf(back.Header)
		if err != nil {
			t.Fatalf("ConfigOf: %v\n%s", err, text)
		}
		if cfg.Preset.Client != cs.Config.Preset.Client || cfg.Preset.Broker != cs.Config.Preset.Broker {
			t.Fatalf("replayed preset %+v, case preset %+v", cfg.Preset, cs.Config.Preset)
		}
		want, got := sim.Run(cs.Config, cs.Plan), sim.Run(cfg, back)
		if (want.Err == nil) != (got.Err == nil) || got.Checksum() != want.Checksum() {
			t.Fatalf("replay: checksum %016x (%v), case %016x (%v)\n%s", got.Checksum(), got.Err, want.Checksum(), want.Err, text)
		}
	})
}
