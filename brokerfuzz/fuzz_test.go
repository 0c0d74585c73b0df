package brokerfuzz

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/live"
)

// serveOurs serves this project's broker (fixed preset) in process, with
// the given canary ("" for none).
func serveOurs(t *testing.T, canary string) Target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	b, err := live.ServeBroker(ln, live.BrokerOptions{Config: engine.DefaultBrokerConfig(p.Broker), Recorder: live.NewDiscardRecorder(), Canary: canary})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return Target{Name: "ours " + canary, Addr: b.Addr()}
}

// quick is the tests' timing: a closed connection is seen within 500 ms on
// loopback whatever the load, and a kept one costs no more.
var quick = Timing{Close: 500 * time.Millisecond}

// TestFuzzCanaryCaught: the broker that keeps a connection open after a
// malformed packet is caught as left-open within 25 cases, and the shrunk
// case replays: it trips the canary, not our broker.
func TestFuzzCanaryCaught(t *testing.T) {
	canary := serveOurs(t, "keep-open-on-malformed")
	rep, err := Fuzz(context.Background(), canary, Config{Seed: 7, Execs: 25, Timing: quick, ShrinkBudget: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var fd *Finding
	for _, f := range rep.Findings {
		if f.Oracles[OracleLeftOpen] > 0 && len(f.Oracles) == 1 && fd == nil {
			fd = f
		} else if len(f.Oracles) != 1 || f.Oracles[OracleLeftOpen] == 0 {
			t.Errorf("canary: a finding the canary does not explain: %s", f)
		}
	}
	if fd == nil {
		t.Fatalf("the keep-open canary was not caught in %d cases", rep.Execs)
	}
	if fd.MinSteps > 3 {
		t.Errorf("shrunk to %d steps, want at most 3:\n%s", fd.MinSteps, fd.Min)
	}
	c, err := ParseCase(strings.NewReader(fd.Min.String()))
	if err != nil {
		t.Fatal(err)
	}
	if vs, _ := Replay(canary, c, quick); !hasKey(vs, fd.Key) {
		t.Errorf("the replay file does not trip the canary: %v", vs)
	}
	if vs, _ := Replay(serveOurs(t, ""), c, quick); len(vs) != 0 {
		t.Errorf("the replay file trips our broker: %v", vs)
	}
}

// TestFuzzOursClean: our broker passes every oracle over 150 cases of a
// seed of its own.
func TestFuzzOursClean(t *testing.T) {
	rep, err := Fuzz(context.Background(), serveOurs(t, ""), Config{Seed: 20261202, Execs: 150, Timing: quick, ShrinkBudget: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range rep.Findings {
		t.Errorf("our broker: %s\n%s\n%s", fd, fd.MinViolation.Detail, fd.Min)
	}
}

// TestOraclesOnHandCases: each oracle named on a hand-written case against
// a fake broker that misbehaves in one way, and not against ours.
func TestOraclesOnHandCases(t *testing.T) {
	wild := Case{Steps: []Step{{Conn: 1, Version: 4, Data: conn4}, {Conn: 1, Version: 4, Data: rawPublish(4, 0x02, "fz/#", 9, nil, "fzm-9-1")}}}
	if vs, err := Replay(serveOurs(t, ""), wild, quick); err != nil || len(vs) != 0 {
		t.Fatalf("ours: %v %v", vs, err)
	}
	vs, err := Replay(serveOurs(t, "keep-open-on-malformed"), wild, quick)
	if err != nil || len(vs) != 1 || vs[0].Oracle != OracleLeftOpen || vs[0].Rule != "MQTT-4.8.0-1" || vs[0].Cause != "MQTT-3.3.2-2" {
		t.Fatalf("canary: %+v %v", vs, err)
	}
}

// TestAnswersReadInTheConnectsVersion: a step spliced from another case can
// put a 5.0 CONNECT on a connection meant for 3.1.1; the broker's answers
// are read in the CONNECT's version, so its CONNACK is seen (it was taken
// for an unanswered CONNECT when read as 3.1.1).
func TestAnswersReadInTheConnectsVersion(t *testing.T) {
	c := Case{Steps: []Step{{Conn: 1, Version: 4, Data: conn5}, {Conn: 1, Version: 4, Data: []byte{0xc0, 0}}}}
	if vs, err := Replay(serveOurs(t, ""), c, quick); err != nil || len(vs) != 0 {
		t.Fatalf("%v %v", vs, err)
	}
}
