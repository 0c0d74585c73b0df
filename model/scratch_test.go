package model

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestScratchReuse proves a released pair table comes back to the next
// newPairs of the same call cleared, and that tables too short for the
// history are not reused.
func TestScratchReuse(t *testing.T) {
	h := benchHistory(20)
	x := newIndex(&h)
	x.sc = new(scratch)
	a := newPairs[int32](x)
	a.set(2, 3, 7)
	buf := a.dense
	releasePairs(x, &a)
	if a.dense != nil || len(x.sc.i32) != 1 {
		t.Fatalf("released: table %v, %d spares", a.dense != nil, len(x.sc.i32))
	}
	b := newPairs[int32](x)
	if &b.dense[0] != &buf[0] {
		t.Fatal("want the released table reused")
	}
	if v := b.get(2, 3); v != 0 {
		t.Fatalf("reused table holds %d, want it cleared", v)
	}
	x.sc.bools = append(x.sc.bools, make([]bool, 1))
	if c := newPairs[bool](x); len(c.dense) != len(x.nodes)*len(x.msgs) {
		t.Fatalf("got %d entries from a short spare, want %d", len(c.dense), len(x.nodes)*len(x.msgs))
	}
}

// TestPooledChecksAgree proves the memory one call leaves in the pool
// changes nothing for the next: calls on histories of every size, in turn,
// answer as checks on a fresh index do.
func TestPooledChecksAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for run := range 200 {
		var h History
		switch run % 3 {
		case 0:
			h = randomHistory(r, 1+r.IntN(200))
		case 1:
			h = wideHistory(r, 1+r.IntN(600), 2+r.IntN(12), 1+r.IntN(50), 5, true)
		default:
			h = benchHistory(1 + r.IntN(60))
		}
		fresh := check(newIndexOf(&h, false), Options{})
		if got := Check(h, Options{}); !reflect.DeepEqual(got, fresh) {
			t.Fatalf("run %d: pooled %v\nfresh %v", run, got, fresh)
		}
		if got, want := FaultsOf(h), faultsOf(newIndexOf(&h, false)); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: pooled faults %+v, fresh %+v", run, got, want)
		}
		x := newIndexOf(&h, false)
		want := check(x, Options{Only: Promises(FixedPolicy(), faultsOf(x))})
		if got := CheckPromised(h, FixedPolicy()); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: pooled promised %v\nfresh %v", run, got, want)
		}
	}
}
