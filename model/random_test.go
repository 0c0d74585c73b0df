package model

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomHistory draws an arbitrary, mostly nonsensical history: the checks
// must stay total on any input (no panic), report steps inside the history,
// sort their output and be deterministic.
func randomHistory(r *rand.Rand, n int) History {
	nodes := []string{BrokerNode, "p1", "p2", "s1", ""}
	msgs := []string{"m1", "m2", "m3", ""}
	var h History
	for range n {
		node := nodes[r.IntN(len(nodes))]
		h.Add(Event{
			Kind: Kind(r.IntN(int(Failed) + 2)),
			Node: node, Peer: nodes[r.IntN(len(nodes))],
			Packet: Packet{Type: uint8(r.IntN(17)), ID: uint16(r.IntN(4)), QoS: uint8(r.IntN(4)),
				Dup: r.IntN(2) == 0, Reason: uint8(r.IntN(2)) * 0x80, Topic: "t/a", Msg: msgs[r.IntN(len(msgs))],
				Sessions: r.IntN(2) == 0},
			Msg: msgs[r.IntN(len(msgs))], Topic: "t/a", Filter: []string{"t/#", "+", "#", ""}[r.IntN(4)],
			QoS: uint8(r.IntN(4)), Persistent: r.IntN(2) == 0, CleanStart: r.IntN(3) == 0,
			SessionPresent: r.IntN(2) == 0, HadState: r.IntN(2) == 0, Version: uint8(4 + r.IntN(2)),
			ReceiveMax: uint16(r.IntN(3)), Point: CrashPoint(r.IntN(7)),
		})
	}
	return h
}

func TestCheckTotalOnRandomHistories(t *testing.T) {
	if vs := Check(History{}, Options{}); len(vs) != 0 {
		t.Fatalf("empty history: %v", vs)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 300 {
		h := randomHistory(r, 1+r.IntN(120))
		vs := Check(h, Options{})
		for i, v := range vs {
			if v.Step < 0 || v.Step >= len(h.Events) {
				t.Fatalf("run %d: step %d outside %d events: %v", run, v.Step, len(h.Events), v)
			}
			if err := citesWell(v, len(h.Events)); err != "" {
				t.Fatalf("run %d: %s", run, err)
			}
			if v.Reason == "" || v.Invariant.String() == "" {
				t.Fatalf("run %d: empty violation %+v", run, v)
			}
			if i > 0 && vs[i-1].Step > v.Step {
				t.Fatalf("run %d: not sorted: %v", run, vs)
			}
		}
		if again := Check(h, Options{}); !reflect.DeepEqual(vs, again) {
			t.Fatalf("run %d: not deterministic", run)
		}
		f := FaultsOf(h)
		if got := CheckPromised(h, FixedPolicy()); len(got) > len(vs) {
			t.Fatalf("run %d: promised violations %d exceed all %d (faults %+v)", run, len(got), len(vs), f)
		}
	}
}
