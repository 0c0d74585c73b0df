package sim

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
)

func TestOpTextForms(t *testing.T) {
	cases := []struct {
		text string
		op   Op
	}{
		{"connect p1", Op{Kind: OpConnect, Node: "p1"}},
		{"connect p1 clean", Op{Kind: OpConnect, Node: "p1", Clean: true}},
		{"subscribe s1 filter=t/# qos=2", Op{Kind: OpSubscribe, Node: "s1", Topic: "t/#", QoS: 2}},
		{"unsubscribe s1 filter=t/+", Op{Kind: OpUnsubscribe, Node: "s1", Topic: "t/+"}},
		{"publish p1 topic=a/b qos=1 msg=p1-17", Op{Kind: OpPublish, Node: "p1", Topic: "a/b", QoS: 1, Msg: "p1-17"}},
		{"publish p1 topic=a/b qos=0 msg=m retain", Op{Kind: OpPublish, Node: "p1", Topic: "a/b", Msg: "m", Retain: true}},
		{"disconnect p2", Op{Kind: OpDisconnect, Node: "p2"}},
		{"crash s1", Op{Kind: OpCrash, Node: "s1"}},
		{"restart broker", Op{Kind: OpRestart, Node: "broker"}},
		{"stop s2", Op{Kind: OpStop, Node: "s2"}},
		{"partition p1", Op{Kind: OpPartition, Node: "p1"}},
		{"heal p1", Op{Kind: OpHeal, Node: "p1"}},
		{"slow p1 200ms", Op{Kind: OpSlow, Node: "p1", D: 200 * engine.Millisecond}},
		{"slow p1 0s", Op{Kind: OpSlow, Node: "p1"}},
		{"lose-qos2 s1", Op{Kind: OpLoseQoS2, Node: "s1"}},
		{"advance 500ms", Op{Kind: OpAdvance, D: 500 * engine.Millisecond}},
		{"advance 1500us", Op{Kind: OpAdvance, D: 1_500_000}},
		{"advance 2m", Op{Kind: OpAdvance, D: 120 * engine.Second}},
		{"advance 7ns", Op{Kind: OpAdvance, D: 7}},
	}
	for _, c := range cases {
		if got := c.op.String(); got != c.text {
			t.Errorf("String of %+v = %q, want %q", c.op, got, c.text)
		}
		got, err := ParseOp(c.text)
		if err != nil {
			t.Errorf("ParseOp(%q): %v", c.text, err)
			continue
		}
		if got != c.op {
			t.Errorf("ParseOp(%q) = %+v, want %+v", c.text, got, c.op)
		}
	}
}

func TestOpParseErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"jump p1", `unknown op "jump"`},
		{"publish p1 topic=a qos=1", "needs topic= and msg="},
		{"publish p1 topic=a qos=3 msg=m", "qos 3 is not 0, 1 or 2"},
		{"subscribe s1 qos=1", "needs filter="},
		{"advance", "advance wants one duration"},
		{"advance 5 parsecs", "advance wants one duration"},
		{"advance 5h", `unit "h"`},
		{"advance ms", "does not start with a number"},
		{"crash", "crash wants a node name"},
		{"crash topic=a", "wants a node name first"},
		{"connect p1 retain", `does not take argument "retain"`},
	}
	for _, c := range cases {
		_, err := ParseOp(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseOp(%q) error %v, want one containing %q", c.text, err, c.want)
		}
	}
}

func TestPlanParseErrorsNameTheLine(t *testing.T) {
	good := "mqttlab-plan 1\nseed 3\nprofile calm\npreset fixed\nscenario small\nversion 5\n---\nconnect p1\n"
	cases := []struct{ text, want string }{
		{strings.Replace(good, "connect p1", "connect p1\nfly p1", 1), "line 9: unknown op \"fly\""},
		{strings.Replace(good, "seed 3", "seed x", 1), "line 2: header seed"},
		{strings.Replace(good, "seed 3", "colour blue", 1), "line 2: unknown header \"colour\""},
		{strings.Replace(good, "---\n", "", 1), `line 7: unknown header "connect"`},
		{"mqttlab-plan 1\nseed 3\n", `no "---" line`},
		{strings.Replace(good, "mqttlab-plan 1", "mqttlab-plan 9", 1), "format 9 is not 2"},
	}
	for _, c := range cases {
		_, err := ParsePlan(c.text)
		if err == nil || !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePlan error %v, want ErrPlan containing %q", err, c.want)
		}
	}
	if _, err := ParsePlan(good); err != nil {
		t.Errorf("good plan: %v", err)
	}
}

func TestDurationRoundTrip(t *testing.T) {
	for _, d := range []engine.Duration{0, 1, 999, 1000, 1_000_000, 1_500_000, engine.Second, 90 * engine.Second, 120 * engine.Second, 123_456_789} {
		s := FormatDuration(d)
		got, err := ParseDuration(s)
		if err != nil || got != d {
			t.Errorf("%d -> %q -> %d, %v", d, s, got, err)
		}
	}
}

// TestGeneratedPlansRoundTrip prints and parses back the plans of every
// scenario and profile over many seeds, crash-at headers included.
func TestGeneratedPlansRoundTrip(t *testing.T) {
	kinds := map[OpKind]bool{}
	for _, scen := range Scenarios() {
		for _, prof := range Profiles() {
			for seed := uint64(0); seed < 25; seed++ {
				cfg := Config{Seed: seed, Profile: prof.Name, Scenario: scen.Name}
				if seed%5 == 1 {
					cfg.Crash = CrashMode{Node: "p1", K: int(seed)}
				}
				p, err := Generate(cfg)
				if err != nil {
					t.Fatalf("Generate %s/%s/%d: %v", scen.Name, prof.Name, seed, err)
				}
				back, err := ParsePlan(p.String())
				if err != nil {
					t.Fatalf("parse back %s/%s/%d: %v", scen.Name, prof.Name, seed, err)
				}
				if !reflect.DeepEqual(back, p) {
					t.Fatalf("round trip of %s/%s/%d differs:\n%s\nvs\n%s", scen.Name, prof.Name, seed, p, back)
				}
				for _, op := range p.Ops {
					kinds[op.Kind] = true
				}
			}
		}
	}
	// The generator must exercise every plan-level fault somewhere.
	for _, k := range []OpKind{OpConnect, OpSubscribe, OpPublish, OpAdvance, OpCrash, OpRestart, OpPartition, OpHeal, OpSlow, OpLoseQoS2} {
		if !kinds[k] {
			t.Errorf("no generated plan has a %s op", k)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	cfg := Config{Seed: 99, Profile: "swarm"}
	a, _ := Generate(cfg)
	b, _ := Generate(cfg)
	if a.String() != b.String() {
		t.Error("the same config generated two different plans")
	}
	c, _ := Generate(Config{Seed: 100, Profile: "swarm"})
	if a.String() == c.String() {
		t.Error("seeds 99 and 100 generated the same plan")
	}
}
