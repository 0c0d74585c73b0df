package engine

// idTable maps packet ids to pointers: a slice indexed by id, grown to the
// highest id set (ids are allocated lowest-free-first, so it stays short),
// with nil for an absent id. It replaces a map[uint16]*T on the per-packet
// paths: a lookup is an index, no hashing.
type idTable[T any] struct {
	s []*T
	n int // ids set
}

// get returns the pointer set for id, or nil.
func (t *idTable[T]) get(id uint16) *T {
	if int(id) < len(t.s) {
		return t.s[id]
	}
	return nil
}

// set sets id to v (non-nil).
func (t *idTable[T]) set(id uint16, v *T) {
	if n := int(id) + 1; n > len(t.s) {
		if n > cap(t.s) {
			s := make([]*T, n, max(8, 2*n))
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
	if int(id) < len(t.s) && t.s[id] != nil {
		t.s[id] = nil
		t.n--
	}
}

// len is the number of ids set.
func (t *idTable[T]) len() int { return t.n }

// reset removes every id.
func (t *idTable[T]) reset() {
	clear(t.s)
	t.n = 0
}
