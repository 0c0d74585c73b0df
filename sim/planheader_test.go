package sim

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"pgregory.net/rapid"
)

// genProfile draws a valid profile: any name, any probabilities, any
// ordered duration ranges.
func genProfile(t *rapid.T) Profile {
	ppm := func(label string) int { return rapid.IntRange(0, 1_000_000).Draw(t, label) }
	dur := func(label string) engine.Duration {
		unit := rapid.SampledFrom([]engine.Duration{1, 1000, engine.Millisecond, engine.Second, 60 * engine.Second}).Draw(t, label+"Unit")
		return unit * engine.Duration(rapid.Int64Range(0, 2000).Draw(t, label))
	}
	span := func(label string) (engine.Duration, engine.Duration) {
		lo := dur(label + "Min")
		return lo, lo + dur(label+"Extra")
	}
	p := Profile{Name: rapid.SampledFrom([]string{"calm", "lossy", "crashy", "swarm", "exp-1", "", "x=y"}).Draw(t, "name")}
	p.LatencyMin, p.LatencyMax = span("Latency")
	p.ChunkPPM, p.ResetPPM, p.HalfOpenPPM = ppm("chunk"), ppm("reset"), ppm("halfopen")
	p.PartitionPPM, p.SlowPPM, p.CrashPPM, p.StateLossPPM = ppm("partition"), ppm("slow"), ppm("crash"), ppm("stateloss")
	p.CrashPointPPM, p.LoseUnsyncedPPM, p.TornPPM = ppm("crashpoint"), ppm("lose"), ppm("torn")
	p.RestartMin, p.RestartMax = span("Restart")
	p.BackoffMin, p.BackoffMax = span("Backoff")
	p.SlowExtra = dur("slowextra")
	return p
}

// genPolicies draws a policy pair: every value of every knob, any mutations.
func genPolicies(t *rapid.T) Policies {
	u8 := func(label string, max int) int { return rapid.IntRange(1, max).Draw(t, label) }
	return Policies{
		Client: engine.ClientPolicy{
			Retransmit:    engine.RetransmitStore(u8("retransmit", 3)),
			UnknownPubrel: engine.UnknownAck(u8("cpubrel", 2)),
			UnknownPubrec: engine.UnknownAck(u8("cpubrec", 2)),
			AckOrder:      engine.AckOrder(u8("cack", 2)),
			IncomingQoS2:  engine.QoS2State(u8("qos2", 2)),
			Mutations:     engine.Mutation(rapid.Uint64().Draw(t, "cmut")),
		},
		Broker: engine.BrokerPolicy{
			Persistence:   engine.BrokerPersistence(u8("persistence", 3)),
			SnapshotEvery: rapid.IntRange(0, 1000).Draw(t, "snapshot"),
			UnknownPubrel: engine.UnknownAck(u8("bpubrel", 2)),
			UnknownPubrec: engine.UnknownAck(u8("bpubrec", 2)),
			AckOrder:      engine.AckOrder(u8("back", 2)),
			Mutations:     engine.Mutation(rapid.Uint64().Draw(t, "bmut")),
		},
	}
}

// TestHeaderLinesRoundTrip: a header with a faults line and a policy line
// prints and parses back equal.
func TestHeaderLinesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := Header{Format: PlanFormat, Seed: rapid.Uint64().Draw(t, "seed"), Profile: "calm", Preset: "mutant",
			Scenario: "small", Version: 5}
		if rapid.Bool().Draw(t, "faults") {
			p := genProfile(t)
			h.Faults = &p
		}
		if rapid.Bool().Draw(t, "policy") {
			p := genPolicies(t)
			h.Policy = &p
		}
		plan := Plan{Header: h, Ops: []Op{{Kind: OpAdvance, D: engine.Second}}}
		back, err := ParsePlan(plan.String())
		if err != nil {
			t.Fatalf("parse back: %v\n%s", err, plan)
		}
		if !reflect.DeepEqual(back, plan) {
			t.Fatalf("round trip differs:\n%s\nvs\n%s", plan, back)
		}
	})
}

// customRuns are runs a header without faults and policy lines replays
// wrongly: a custom profile, a mutant under a named preset's name, a preset
// engine does not know.
func customRuns(t *testing.T) map[string]Config {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	mutant := fixed
	mutant.Client.Mutations = engine.MutResendWithoutDup | engine.MutReuseInflightID
	memory := fixed
	memory.Name, memory.Client.Retransmit = "retransmit-memory", engine.RetransmitMemory
	periodic := fixed
	periodic.Name, periodic.Broker.Persistence, periodic.Broker.SnapshotEvery = "fixed+snapshot-3", engine.PersistPeriodic, 3
	prof := calmWith(func(p *Profile) {
		p.Name = "experiment"
		p.ChunkPPM, p.ResetPPM, p.CrashPPM, p.CrashPointPPM = 300_000, 5_000, 20_000, 1_000
		p.LatencyMin, p.LatencyMax, p.BackoffMin, p.SlowExtra = 2*ms, 9*ms, 50*ms, 700*ms
	})
	swarm := calmWith(func(p *Profile) { p.Name, p.LatencyMin, p.RestartMax = "swarm", 3*ms, 5*engine.Second })
	return map[string]Config{
		"custom-profile": {Seed: 11, Custom: prof, Profile: "crashy"},
		"custom-swarm":   {Seed: 12, Custom: swarm},
		"mutant-fixed":   {Seed: 13, Preset: mutant, Profile: "lossy"},
		"unknown-preset": {Seed: 14, Preset: memory, Profile: "crashy", Custom: prof},
		"periodic":       {Seed: 15, Preset: periodic, Profile: "crashy", Version: 4},
	}
}

// replay saves plan as text and runs what the text says.
func replay(t *testing.T, text string) Result {
	t.Helper()
	back, err := ParsePlan(text)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	cfg, err := ConfigOf(back.Header)
	if err != nil {
		t.Fatalf("ConfigOf: %v\n%s", err, text)
	}
	return Run(cfg, back)
}

// TestCustomRunsReplayFromText: a run with a custom profile or preset,
// saved with Plan.String and replayed through ParsePlan and ConfigOf, has
// the original's checksum. Canary: without its faults or policy line the
// replay is a different run.
func TestCustomRunsReplayFromText(t *testing.T) {
	for name, cfg := range customRuns(t) {
		plan, err := Generate(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := Run(cfg, plan)
		if want.Err != nil {
			t.Fatalf("%s: %v", name, want.Err)
		}
		text := plan.String()
		if got := replay(t, text); got.Err != nil || got.Checksum() != want.Checksum() {
			t.Errorf("%s: replay checksum %016x (%v), original %016x\n%s", name, got.Checksum(), got.Err, want.Checksum(), text)
		}
		var lines []string
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(l, "faults ") && !strings.HasPrefix(l, "policy ") {
				lines = append(lines, l)
			}
		}
		bare := strings.Join(lines, "\n")
		if bare == text {
			t.Errorf("%s: the plan has neither a faults nor a policy line:\n%s", name, text)
			continue
		}
		back, err := ParsePlan(resealed(bare))
		if err != nil {
			t.Fatal(err)
		}
		if rcfg, err := ConfigOf(back.Header); err == nil && Run(rcfg, back).Checksum() == want.Checksum() {
			t.Errorf("%s: the plan without its faults and policy lines replays the same run: the lines test nothing", name)
		}
	}
}

// TestNamedRunsHaveNoExtraLines: a run of named profile and preset prints
// the header it always did.
func TestNamedRunsHaveNoExtraLines(t *testing.T) {
	for _, preset := range engine.Presets() {
		h := HeaderOf(Config{Seed: 1, Profile: "lossy", Preset: preset})
		if h.Faults != nil || h.Policy != nil {
			t.Errorf("preset %s: header has faults %v policy %v", preset.Name, h.Faults, h.Policy)
		}
	}
	if h := HeaderOf(Config{Seed: 1}); h.Faults != nil || h.Policy != nil {
		t.Errorf("default config: header has faults %v policy %v", h.Faults, h.Policy)
	}
}

// TestHeaderLineMissingKey is the canary of the field lists: a faults or
// policy line that drops any one key is refused, naming the key.
func TestHeaderLineMissingKey(t *testing.T) {
	cfg := customRuns(t)["unknown-preset"]
	plan, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := plan.String()
	n := 0
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || (f[0] != "faults" && f[0] != "policy") {
			continue
		}
		for i := 1; i < len(f); i++ {
			key, _, _ := strings.Cut(f[i], "=")
			dropped := f[0] + " " + strings.Join(append(append([]string(nil), f[1:i]...), f[i+1:]...), " ")
			_, err := ParsePlan(strings.Replace(text, line, dropped, 1))
			if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), "missing "+key) {
				t.Errorf("%s without %s: error %v, want ErrPlan naming the missing key", f[0], key, err)
			}
			n++
		}
	}
	if n != 15+12 {
		t.Errorf("checked %d keys, want 15 faults keys and 12 policy keys", n)
	}
}

// TestHeaderLineErrors: bad faults and policy lines are refused with errors
// that name the line and the key.
func TestHeaderLineErrors(t *testing.T) {
	cfg := customRuns(t)["unknown-preset"]
	plan, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	good := plan.String()
	edit := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	cases := []struct{ text, want string }{
		{edit(" chunk=300000", " chunk=300000 colour=blue"), `line 7: header faults: unknown key "colour"`},
		{edit(" chunk=300000", " chunk=1000001"), "line 7: header faults: key chunk: \"1000001\" is not a probability"},
		{edit(" chunk=300000", " chunk=-1"), "key chunk"},
		{edit(" chunk=300000", " chunk=300000 chunk=1"), `key "chunk" given twice`},
		{edit(" chunk=300000", " chunk"), `argument "chunk" is not key=value`},
		{edit(" latency=2ms..9ms", " latency=2ms"), `key latency: "2ms" is not a range`},
		{edit(" latency=2ms..9ms", " latency=2ms..9h"), `key latency: duration "9h"`},
		{edit(" slowextra=700ms", " slowextra=fast"), "key slowextra: duration \"fast\""},
		{edit("client.retransmit=memory", "client.retransmit=disk"), `line 8: header policy: key client.retransmit: engine: bad policy text: retransmit store "disk"`},
		{edit("broker.persistence=every-change", "broker.persistence=sometimes"), "key broker.persistence"},
		{edit("client.mutations=none", "client.mutations=oops"), "key client.mutations"},
		{edit("broker.snapshot-every=0", "broker.snapshot-every=-3"), "key broker.snapshot-every"},
		{edit("broker.ack-order=after-callback", "broker.ack-order=later"), "key broker.ack-order"},
		{edit("policy client.", "policy brokr.x=1 client."), `unknown key "brokr.x"`},
		{edit("policy ", "policy\n#"), "line 8: header policy: missing client.retransmit"},
	}
	for _, c := range cases {
		if c.text == good {
			t.Fatalf("case %q does not edit the plan:\n%s", c.want, good)
		}
		_, err := ParsePlan(c.text)
		if !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want ErrPlan containing %q", err, c.want)
		}
	}
	back, err := ParsePlan(resealed(edit("preset retransmit-memory\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigOf(back.Header); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "policy line needs a preset name") {
		t.Errorf("policy line without a preset: error %v, want ErrConfig naming the missing preset", err)
	}
	back.Header.Policy, back.Header.Preset = nil, "retransmit-memory"
	if _, err := ConfigOf(back.Header); !errors.Is(err, ErrConfig) || !errors.Is(err, engine.ErrUnknownPreset) {
		t.Errorf("unknown preset without a policy line: error %v, want ErrConfig and ErrUnknownPreset", err)
	}
}

// TestHeaderVersionLine: a swarm plan whose clients draw their protocol
// level says "version mixed" (and reads back as the run's level 5, same
// checksum); a pinned level, or another scenario, says its level.
func TestHeaderVersionLine(t *testing.T) {
	pin4, err := ParseWorkload("version=4")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"swarm, drawn", Config{Seed: 3, Scenario: SwarmScenario, Version: 5}, "\nversion mixed\n"},
		{"swarm, pinned 3.1.1", Config{Seed: 3, Scenario: SwarmScenario, Version: 4, Workload: pin4}, "\nversion 4\n"},
		{"standard", Config{Seed: 3, Scenario: "standard", Version: 5}, "\nversion 5\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Generate(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			text := plan.String()
			if !strings.Contains(text, c.want) {
				t.Fatalf("header lacks %q:\n%.300s", c.want, text)
			}
			back, err := ParsePlan(text)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ConfigOf(back.Header)
			if err != nil || cfg.Version != c.cfg.Version || back.String() != text {
				t.Fatalf("read back: version %d (%v), want %d; same text: %v", cfg.Version, err, c.cfg.Version, back.String() == text)
			}
			if a, b := Run(c.cfg, plan).Checksum(), Run(cfg, back).Checksum(); a != b {
				t.Errorf("checksum %x, read back %x", a, b)
			}
		})
	}
}
