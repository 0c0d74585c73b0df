package engine

import (
	"math"
	"slices"
)

// seqTable maps packet ids to uint64 values (a client's sequence numbers,
// a broker session's ConnIDs; called sequences below), like idTable: a
// slice indexed by id for ids below idTableDirect, grown to the highest
// such id set, and a map for the rest. A stored value may be anything, 0
// included (a sequence restored from a record, a ConnID of none), so a
// slot holds the sequence plus one, 0 meaning absent; the one sequence that
// cannot be shifted, math.MaxUint64, goes to the map whatever its id. An id
// is in the slice or in the map, never both. It replaces a
// map[uint16]uint64 on the per-packet paths.
type seqTable struct {
	s []uint64          // sequence+1 by id; 0: absent
	m map[uint16]uint64 // the other ids, created at the first
	n int               // ids set
}

// get returns the sequence set for id and whether one is.
func (t *seqTable) get(id uint16) (uint64, bool) {
	if int(id) < len(t.s) && t.s[id] != 0 {
		return t.s[id] - 1, true
	}
	if t.m != nil {
		seq, ok := t.m[id]
		return seq, ok
	}
	return 0, false
}

// has reports whether id is set.
func (t *seqTable) has(id uint16) bool {
	_, ok := t.get(id)
	return ok
}

// put sets id to seq.
func (t *seqTable) put(id uint16, seq uint64) {
	t.del(id)
	t.n++
	if id >= idTableDirect || seq == math.MaxUint64 {
		if t.m == nil {
			t.m = make(map[uint16]uint64)
		}
		t.m[id] = seq
		return
	}
	if n := int(id) + 1; n > len(t.s) {
		if n > cap(t.s) {
			s := make([]uint64, n, min(idTableDirect, max(8, 2*n)))
			copy(s, t.s)
			t.s = s
		}
		t.s = t.s[:n]
	}
	t.s[id] = seq + 1
}

// del removes id.
func (t *seqTable) del(id uint16) {
	if int(id) < len(t.s) && t.s[id] != 0 {
		t.s[id] = 0
		t.n--
		return
	}
	if _, ok := t.m[id]; ok {
		delete(t.m, id)
		t.n--
	}
}

// len is the number of ids set.
func (t *seqTable) len() int { return t.n }

// reset removes every id.
func (t *seqTable) reset() {
	clear(t.s)
	clear(t.m)
	t.n = 0
}

// ids lists the ids set, in increasing order.
func (t *seqTable) ids() []uint16 {
	ids := make([]uint16, 0, t.n)
	for id, v := range t.s {
		if v != 0 {
			ids = append(ids, uint16(id))
		}
	}
	if len(t.m) > 0 {
		for id := range t.m {
			ids = append(ids, id)
		}
		slices.Sort(ids)
	}
	return ids
}
