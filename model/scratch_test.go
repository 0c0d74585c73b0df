package model

import "testing"

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
