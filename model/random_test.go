package model

import (
	"fmt"
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
			if err := explainedOrder(vs, i); err != "" {
				t.Fatalf("run %d: %s: %v", run, err, vs)
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

// explainedOrder checks vs[i]'s place in Check's order: roots (nothing
// explains them) by step; a violation explained by a root after it, and
// after the violations that root explains at earlier steps.
func explainedOrder(vs []Violation, i int) string {
	v := vs[i]
	if i == 0 {
		if v.ExplainedBy != "" {
			return "the first violation is explained"
		}
		return ""
	}
	prev := vs[i-1]
	if v.ExplainedBy == "" {
		r := i - 1
		for r > 0 && vs[r].ExplainedBy != "" {
			r--
		}
		if vs[r].Step > v.Step {
			return fmt.Sprintf("root at step %d after root at step %d", v.Step, vs[r].Step)
		}
		return ""
	}
	root := fmt.Sprintf("%s at step %d", prev.Invariant, prev.Step)
	if prev.ExplainedBy != "" {
		root = prev.ExplainedBy
		if prev.Step > v.Step {
			return fmt.Sprintf("explained violations out of step order at %d", v.Step)
		}
	}
	if root != v.ExplainedBy {
		return fmt.Sprintf("violation at step %d explained by %q follows %q", v.Step, v.ExplainedBy, root)
	}
	return ""
}
