package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
)

// customRun is a run no named preset and profile describe: a custom
// profile (a plots experiment's kind) and a fixed preset with periodic
// broker snapshots and a client mutant, under a name engine does not know.
func customRun(t *testing.T) (sim.Config, sim.Plan) {
	t.Helper()
	prof, err := sim.ProfileByName("calm")
	if err != nil {
		t.Fatal(err)
	}
	prof.Name = "experiment"
	prof.ChunkPPM, prof.CrashPPM, prof.CrashPointPPM, prof.LoseUnsyncedPPM = 250_000, 20_000, 800, 500_000
	prof.LatencyMax = 11 * engine.Millisecond
	preset, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	preset.Name = "fixed+snapshot-5"
	preset.Broker.Persistence, preset.Broker.SnapshotEvery = engine.PersistPeriodic, 5
	preset.Client.Mutations = engine.MutResendWithoutDup
	cfg := sim.Config{Seed: 21, Profile: "crashy", Custom: &prof, Preset: preset, SkipCheck: true}
	plan, err := sim.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, plan
}

// checksumOf runs plan under cfg and returns its checksum as simrun prints it.
func checksumOf(t *testing.T, cfg sim.Config, plan sim.Plan) string {
	t.Helper()
	r := sim.Run(cfg, plan)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return checksumHex(r.Checksum())
}

// TestReplayCustomRun: a saved run with a custom profile and preset replays
// (replay FILE, run -plan FILE) to its checksum; run -plan's replay command
// repeats only the flags given, and an explicit -preset or -profile
// overrides the policy or faults line (canary: each gives another run).
func TestReplayCustomRun(t *testing.T) {
	cfg, plan := customRun(t)
	path := filepath.Join(t.TempDir(), "custom.plan")
	if err := os.WriteFile(path, []byte(plan.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := checksumOf(t, cfg, plan)
	if got := summaryJSON(t, -1, "replay", path); got.Checksum != want || got.Preset != "fixed+snapshot-5" {
		t.Errorf("replay: checksum %s preset %s, original %s", got.Checksum, got.Preset, want)
	}
	same := summaryJSON(t, -1, "run", "-plan", path)
	if same.Checksum != want || same.Replay != replayPrefix+" run -plan "+path {
		t.Errorf("run -plan: checksum %s replay %q, original %s", same.Checksum, same.Replay, want)
	}

	named := cfg
	var err error
	named.Preset, err = engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	over := summaryJSON(t, -1, "run", "-plan", path, "-preset", "fixed")
	if direct := checksumOf(t, named, plan); over.Checksum != direct || direct == want {
		t.Errorf("-preset fixed: checksum %s, direct %s, custom %s", over.Checksum, direct, want)
	}
	if over.Replay != replayPrefix+" run -plan "+path+" -preset fixed" {
		t.Errorf("-preset fixed: replay %q", over.Replay)
	}
	lossy := cfg
	lossy.Profile, lossy.Custom = "lossy", nil
	over = summaryJSON(t, -1, "run", "-plan", path, "-profile", "lossy")
	if direct := checksumOf(t, lossy, plan); over.Checksum != direct || direct == want {
		t.Errorf("-profile lossy: checksum %s, direct %s, custom %s", over.Checksum, direct, want)
	}
}
