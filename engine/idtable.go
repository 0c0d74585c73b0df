package engine

// idTable maps packet ids to pointers: a slice indexed by id for ids below
// idTableDirect, grown to the highest such id set, with nil for an absent
// id, and a map for the rest (a long-lived client's ids wrap through the
// whole range: the slice stays at most 8 KiB). It replaces a
// map[uint16]*T on the per-packet paths: a lookup of a small id is an
// index, no hashing.
type idTable[T any] struct {
	s []*T
	m map[uint16]*T // ids from idTableDirect up, created at the first
	n int           // ids set
}

// idTableDirect bounds the ids an idTable indexes directly.
const idTableDirect = 1024

// get returns the pointer set for id, or nil.
func (t *idTable[T]) get(id uint16) *T {
	if int(id) < len(t.s) {
		return t.s[id]
	}
	if id >= idTableDirect {
		return t.m[id]
	}
	return nil
}

// set sets id to v (non-nil).
func (t *idTable[T]) set(id uint16, v *T) {
	if id >= idTableDirect {
		if t.m == nil {
			t.m = make(map[uint16]*T)
		}
		if t.m[id] == nil {
			t.n++
		}
		t.m[id] = v
		return
	}
	if n := int(id) + 1; n > len(t.s) {
		if n > cap(t.s) {
			s := make([]*T, n, min(idTableDirect, max(8, 2*n)))
			copy(s, t.s)
			t.s = s
		}
		t.s = t.s[:n]
	}
	if t.s[id] == nil {
		t.n++
	}
	t.s[id] = v
}

// del removes id.
func (t *idTable[T]) del(id uint16) {
	switch {
	case int(id) < len(t.s):
		if t.s[id] != nil {
			t.s[id] = nil
			t.n--
		}
	case id >= idTableDirect:
		if t.m[id] != nil {
			delete(t.m, id)
			t.n--
		}
	}
}

// len is the number of ids set.
func (t *idTable[T]) len() int { return t.n }

// reset removes every id.
func (t *idTable[T]) reset() {
	clear(t.s)
	clear(t.m)
	t.n = 0
}
