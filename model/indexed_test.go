package model

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestIndexedAgrees proves one Indexed answers every question exactly as
// the one-shot functions do, however many questions it is asked and in any
// order, on small and wide random histories.
func TestIndexedAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	policies := []Policy{FixedPolicy(), {}, {Retransmit: RetransmitMemory, QoS2Durable: true}}
	for run := range 300 {
		var h History
		if run%2 == 0 {
			h = randomHistory(r, 1+r.IntN(150))
		} else {
			h = wideHistory(r, 1+r.IntN(300), 3+r.IntN(30), 2+r.IntN(40), 5, run%4 == 1)
		}
		ix := IndexOf(h)
		for _, p := range policies {
			if got, want := ix.CheckPromised(p), CheckPromised(h, p); !reflect.DeepEqual(got, want) {
				t.Fatalf("run %d: CheckPromised(%+v): indexed %v, one-shot %v", run, p, got, want)
			}
		}
		if got, want := ix.Faults(), FaultsOf(h); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: faults: indexed %+v, one-shot %+v", run, got, want)
		}
		for _, only := range []Set{0, All(), Promises(FixedPolicy(), ix.Faults()), SetOf(NoLoss, Order)} {
			if got, want := ix.Check(Options{Only: only}), Check(h, Options{Only: only}); !reflect.DeepEqual(got, want) {
				t.Fatalf("run %d: Check(%v): indexed %v, one-shot %v", run, only, got, want)
			}
		}
	}
}

// TestIndexedCanary proves the shared index still finds a violation: a QoS2
// message delivered twice to one subscriber breaks QoS2ExactlyOnce.
func TestIndexedCanary(t *testing.T) {
	h := History{Events: []Event{
		{Kind: Accepted, Node: "p1", Msg: "m1", Topic: "t/a", QoS: 2},
		{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 2},
		{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 2},
	}}
	vs := IndexOf(h).Check(Options{Only: SetOf(QoS2ExactlyOnce)})
	if len(vs) != 1 || vs[0].Invariant != QoS2ExactlyOnce || vs[0].Step != 2 {
		t.Fatalf("want one QoS2ExactlyOnce violation at step 2, got %v", vs)
	}
}

// TestCheckUnderAgrees proves CheckUnder answers as FaultsOf then Check,
// and hands choose the faults FaultsOf derives.
func TestCheckUnderAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for run := range 200 {
		h := wideHistory(r, 1+r.IntN(300), 2+r.IntN(10), 2+r.IntN(30), 5, run%2 == 0)
		want := FaultsOf(h)
		var seen Faults
		f, vs := CheckUnder(h, func(f Faults) Options {
			seen = f
			return Options{Only: Promises(Policy{}, f)}
		})
		if !reflect.DeepEqual(f, want) || !reflect.DeepEqual(seen, want) {
			t.Fatalf("run %d: faults %+v, choose saw %+v, want %+v", run, f, seen, want)
		}
		if w := Check(h, Options{Only: Promises(Policy{}, want)}); !reflect.DeepEqual(vs, w) {
			t.Fatalf("run %d: CheckUnder %v\nCheck %v", run, vs, w)
		}
	}
}
