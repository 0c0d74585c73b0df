package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// calmWith returns the calm profile edited by f.
func calmWith(f func(p *Profile)) *Profile {
	p, _ := ProfileByName("calm")
	f(&p)
	return &p
}

// mustWorld builds a world of the small scenario and applies ops.
func mustWorld(t *testing.T, cfg Config, ops ...string) *World {
	t.Helper()
	if cfg.Scenario == "" {
		cfg.Scenario = "small"
	}
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, w, ops...)
	return w
}

func apply(t *testing.T, w *World, ops ...string) {
	t.Helper()
	for _, s := range ops {
		op, err := ParseOp(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(op); err != nil {
			t.Fatal(err)
		}
	}
}

// count returns how many events of kind k (for node, if not empty) the
// history holds, and how many of them match pred.
func count(h model.History, k model.Kind, node string, pred func(e model.Event) bool) int {
	n := 0
	for _, e := range h.Events {
		if e.Kind == k && (node == "" || e.Node == node) && (pred == nil || pred(e)) {
			n++
		}
	}
	return n
}

func delivered(h model.History, node, msg string) int {
	return count(h, model.Delivered, node, func(e model.Event) bool { return e.Msg == msg })
}

var setup = []string{"connect p1", "connect s1", "advance 100ms", "subscribe s1 filter=t/# qos=2", "advance 100ms"}

func TestCalmDelivery(t *testing.T) {
	w := mustWorld(t, Config{}, setup...)
	apply(t, w, "publish p1 topic=t/a qos=1 msg=p1-1", "publish p1 topic=t/a qos=2 msg=p1-2", "advance 1s")
	h := w.History()
	for _, m := range []string{"p1-1", "p1-2"} {
		if delivered(h, "s1", m) != 1 {
			t.Errorf("%s delivered %d times, want once", m, delivered(h, "s1", m))
		}
	}
	if !w.RunUntilQuiet() {
		t.Fatalf("calm world not quiet: %s", w.pendingReport())
	}
}

func TestPartitionHoldsBytesUntilHeal(t *testing.T) {
	w := mustWorld(t, Config{}, setup...)
	apply(t, w, "partition s1", "publish p1 topic=t/a qos=1 msg=p1-1", "advance 10s")
	if n := delivered(w.History(), "s1", "p1-1"); n != 0 {
		t.Fatalf("delivered %d times across a partition", n)
	}
	if !w.conns[w.nodes[w.byName["s1"]].app.conn-1].dir[dirDown].pending() {
		t.Fatal("no bytes held for s1 during the partition")
	}
	apply(t, w, "heal s1", "advance 1s")
	if n := delivered(w.History(), "s1", "p1-1"); n != 1 {
		t.Errorf("delivered %d times after heal, want once", n)
	}
}

func TestChunkedDeliveryStillDecodes(t *testing.T) {
	prof := calmWith(func(p *Profile) { p.ChunkPPM = 1_000_000 })
	w := mustWorld(t, Config{Seed: 5, Custom: prof}, setup...)
	apply(t, w, "publish p1 topic=t/a qos=1 msg=p1-1", "publish p1 topic=t/a qos=2 msg=p1-2", "advance 1s")
	if w.Stats().Faults["chunked"] == 0 {
		t.Fatal("no packet was chunked")
	}
	// Some read must have carried less than a whole packet.
	partial := false
	for _, line := range strings.Split(w.Trace(), "\n") {
		if strings.Contains(line, " bytes ") && (strings.HasSuffix(line, " n=1") || strings.HasSuffix(line, " n=2") || strings.HasSuffix(line, " n=3")) {
			partial = true
		}
	}
	if !partial {
		t.Error("no read of 1-3 bytes: chunks did not split packets")
	}
	for _, m := range []string{"p1-1", "p1-2"} {
		if delivered(w.History(), "s1", m) != 1 {
			t.Errorf("%s delivered %d times through chunked streams, want once", m, delivered(w.History(), "s1", m))
		}
	}
	if !w.RunUntilQuiet() {
		t.Errorf("not quiet: %s", w.pendingReport())
	}
}

func TestHalfOpenFoundByKeepAlive(t *testing.T) {
	w := mustWorld(t, Config{}, setup...)
	s1 := w.nodes[w.byName["s1"]]
	c := w.conns[s1.app.conn-1]
	w.halfOpen(c, sideClient+2) // nobody is told
	apply(t, w, "advance 30s")
	if !c.alive[sideClient] || !c.alive[sideBroker] {
		t.Fatal("a side learnt of the half-open connection without keep-alive")
	}
	apply(t, w, "advance 150s")
	if c.alive[sideClient] || c.alive[sideBroker] {
		t.Fatalf("keep-alive did not close the half-open connection (client alive %v, broker alive %v)", c.alive[sideClient], c.alive[sideBroker])
	}
	if s1.app.conn == c.id || !s1.app.connected {
		t.Error("s1 did not reconnect on a new connection")
	}
}

func TestResetSeenByEachSide(t *testing.T) {
	w := mustWorld(t, Config{}, setup...)
	s1 := w.nodes[w.byName["s1"]]
	c := w.conns[s1.app.conn-1]
	w.reset(c)
	apply(t, w, "advance 20ms")
	closes := count(w.History(), model.ConnClosed, "", nil)
	if closes != 2 {
		t.Errorf("%d ConnClosed events after a reset, want one per side", closes)
	}
	apply(t, w, "advance 2s", "publish p1 topic=t/a qos=1 msg=p1-1", "advance 1s")
	if delivered(w.History(), "s1", "p1-1") != 1 {
		t.Error("s1 did not get a message after reconnecting")
	}
}

func TestCrashLosesUnsyncedKeepsSynced(t *testing.T) {
	prof := calmWith(func(p *Profile) { p.LoseUnsyncedPPM = 1_000_000 })
	w := mustWorld(t, Config{Custom: prof}, setup...)
	b := w.nodes[0]
	b.disk.Persist(engine.Persist{Op: engine.Put, Key: "zz/unsynced", Value: []byte("x")})
	synced := len(b.disk.synced)
	apply(t, w, "crash broker")
	if _, ok := b.disk.get("zz/unsynced"); ok {
		t.Error("an unsynced write survived a crash that loses all of them")
	}
	if len(b.disk.synced) != synced || synced == 0 {
		t.Errorf("%d synced records after the crash, want the %d before", len(b.disk.synced), synced)
	}
	// s1 learns of the reboot only through keep-alive (60 s + ping timeout).
	apply(t, w, "restart broker", "advance 3s", "publish p1 topic=t/a qos=1 msg=p1-1", "advance 90s")
	// The broker's persisted session and subscription came back.
	if delivered(w.History(), "s1", "p1-1") != 1 {
		t.Error("no delivery after the broker restarted from its records")
	}
}

func TestCrashInCallbackLegacyLosesMessage(t *testing.T) {
	// Canary for the liveness report: with ack-before-callback, a crash
	// inside the callback loses a QoS1 message, and the run is reported stuck
	// naming the undelivered message.
	pre, err := engine.PresetByName("legacy-ack-order")
	if err != nil {
		t.Fatal(err)
	}
	lost := false
	for k := 1; k <= 60 && !lost; k++ {
		cfg := Config{Scenario: "small", Preset: pre, Crash: CrashMode{Node: "s1", K: k}, LivenessBound: 5 * 60 * engine.Second}
		plan, _ := Generate(cfg)
		r := Run(cfg, plan)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		crashedIn := count(r.History(), model.Crash, "s1", func(e model.Event) bool { return e.Point == model.CrashInCallbackPre })
		if crashedIn > 0 && !r.Quiet {
			last := r.History().Events[len(r.History().Events)-1]
			if last.Kind != model.Stuck || !strings.Contains(last.Reason, "undelivered s1<-p1-") {
				t.Fatalf("stuck run's last event %+v does not name the undelivered message", last)
			}
			lost = true
		}
	}
	if !lost {
		t.Error("no crash point in the callback lost a message under ack-before-callback")
	}
}

func TestExhaustiveCrashPoints(t *testing.T) {
	base := Config{Scenario: "small"}
	plan, _ := Generate(base)
	r := Run(base, plan)
	if r.Err != nil || !r.Quiet {
		t.Fatalf("fault-free small run: err %v quiet %v", r.Err, r.Quiet)
	}
	for _, node := range []string{"s1", "p1", "broker"} {
		n := r.CrashPoints[node]
		if n < 4 {
			t.Fatalf("%s passed %d crash points, want several", node, n)
		}
		for k := 1; k <= n; k++ {
			cfg := base
			cfg.Crash = CrashMode{Node: node, K: k}
			rk := Run(cfg, plan)
			if rk.Err != nil {
				t.Fatalf("%s k=%d: %v", node, k, rk.Err)
			}
			if c := count(rk.History(), model.Crash, "", nil); c != 1 || count(rk.History(), model.Crash, node, nil) != 1 {
				t.Fatalf("%s k=%d: %d crashes, want exactly one of %s", node, k, c, node)
			}
			if !rk.Quiet {
				t.Errorf("%s k=%d: fixed preset not quiet: %s", node, k, rk.History().Events[len(rk.History().Events)-1].Reason)
			}
		}
	}
}

func TestLoseQoS2StateEmitsStateLost(t *testing.T) {
	w := mustWorld(t, Config{}, setup...)
	apply(t, w, "lose-qos2 s1", "advance 2s")
	h := w.History()
	if count(h, model.StateLost, "s1", nil) != 1 || count(h, model.Restart, "s1", nil) != 1 {
		t.Error("lose-qos2 did not record StateLost and a restart")
	}
	apply(t, w, "publish p1 topic=t/a qos=2 msg=p1-9", "advance 2s")
	if delivered(w.History(), "s1", "p1-9") != 1 {
		t.Error("s1 did not receive after its QoS2 state was lost")
	}
}

func TestApplyErrors(t *testing.T) {
	w := mustWorld(t, Config{})
	if err := w.Apply(Op{Kind: OpCrash, Node: "nobody"}); err == nil || !strings.Contains(err.Error(), `no node "nobody"`) {
		t.Errorf("crash of an unknown node: %v", err)
	}
	if err := w.Apply(Op{Kind: OpPublish, Node: BrokerName, Topic: "t", Msg: "m"}); err == nil {
		t.Error("publish on the broker accepted")
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Profile: "stormy"}, `unknown fault profile "stormy"`},
		{Config{Scenario: "huge"}, `unknown scenario "huge"`},
		{Config{Version: 3}, "Version 3"},
		{Config{Crash: CrashMode{Node: "zz", K: 1}}, `Crash.Node "zz"`},
		{Config{Custom: calmWith(func(p *Profile) { p.ResetPPM = 2_000_000 })}, "ResetPPM"},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) error %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		filter, topic string
		want          bool
	}{
		{"t/#", "t/a", true}, {"t/#", "t", true}, {"t/+", "t/a", true}, {"t/+", "t/a/b", false},
		{"t/a", "t/a", true}, {"t/a", "t/b", false}, {"#", "$SYS/x", false}, {"+/a", "x/a", true},
		{"t/+/c", "t/b/c", true}, {"t", "t/a", false},
	}
	for _, c := range cases {
		if got := Match(c.filter, c.topic); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.filter, c.topic, got)
		}
	}
}

// TestSourceOverrideRuns drives whole runs from fuzzer-style bytes and from
// an always-hostile source: no panic, and the same bytes replay the same.
func TestSourceOverrideRuns(t *testing.T) {
	gen := NewRand(NewPCGSource(3))
	for i := 0; i < 30; i++ {
		data := make([]byte, gen.IntN(4000))
		for j := range data {
			data[j] = byte(gen.IntN(256))
		}
		run := func() Result {
			cfg := Config{Source: NewByteSource(data), Profile: "swarm", Version: uint8(4 + i%2)}
			plan, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Source = NewByteSource(data)
			return Run(cfg, plan)
		}
		a, b := run(), run()
		if a.Err != nil {
			t.Fatalf("bytes %d: %v", i, a.Err)
		}
		if a.Checksum() != b.Checksum() {
			t.Errorf("bytes %d: the same bytes gave checksums %016x and %016x", i, a.Checksum(), b.Checksum())
		}
	}
	cfg := Config{Source: maxSource{}, Profile: "swarm", Scenario: "small", LivenessBound: 60 * engine.Second}
	plan, _ := Generate(cfg)
	if r := Run(cfg, plan); r.Err != nil {
		t.Fatalf("hostile source: %v", r.Err)
	}
}

// TestZeroSourceIsFaultFree checks the all-zero source gives a run without
// any fault that reaches quiescence.
func TestZeroSourceIsFaultFree(t *testing.T) {
	cfg := Config{Source: zeroSource{}, Profile: "swarm"}
	plan, _ := Generate(cfg)
	r := Run(cfg, plan)
	if r.Err != nil || !r.Quiet || r.Stats.Crashes != 0 || len(r.Stats.Faults) != 0 {
		t.Errorf("zero source: err %v quiet %v crashes %d faults %v", r.Err, r.Quiet, r.Stats.Crashes, r.Stats.Faults)
	}
}
