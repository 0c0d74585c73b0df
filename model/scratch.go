package model

import "sync"

// scratch is working memory the checks of one call share: a check that is
// done with a dense pair table hands it back (releasePairs) and the next
// check's newPairs takes it, cleared, instead of allocating its own. A call
// borrows its scratch from scratchPool and gives it back at its end, so
// the next call (the next seed of a campaign) reuses the same memory,
// cleared: what a call computes never depends on what the memory held.
// Apart from names, which release clears, it holds no pointer, so a pooled
// scratch keeps no history alive.
type scratch struct {
	ev      []evIDs    // an index's per-event ids (borrowIndex)
	kinds   []evKind   // an index's per-event kinds
	i32     [][]int32  // spare dense tables of pairs[int32]
	bools   [][]bool   // spare dense tables of pairs[bool]
	flights [][]flight // spare flight tables of a tracker's directions

	names     []string   // an index's message ids (cleared when given back)
	slots     []int32    // an index's strIDs table
	accs      []accRef   // an index's Accepted events
	accepted  []accepted // collectMessages' list
	orderAccs []orderAcc // checkOrder's table
}

// scratchPool holds the scratch of finished calls.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooled bounds the entries of a buffer kept for the next call: a huge
// history's memory goes back to the collector.
const maxPooled = 1 << 18

// borrowIndex indexes h in a scratch from the pool; the caller gives it
// back with release once nothing it returns refers to the index.
func borrowIndex(h *History) *index {
	sc := scratchPool.Get().(*scratch)
	x := newIndexIn(h, false, sc)
	x.sc, x.pooled = sc, true
	return x
}

// release gives x's scratch (and, when x was borrowed, its per-event
// buffers) back to the pool; x must not be used after.
func (x *index) release() {
	sc := x.sc
	if sc == nil {
		return
	}
	x.sc = nil
	if x.pooled && cap(x.ev) <= maxPooled {
		sc.ev, sc.kinds = x.ev, x.kinds
		clear(x.msgs) // keep no string of the history alive
		sc.names, sc.slots, sc.accs = x.msgs, x.msgIDs.slots, x.accs
	}
	scratchPool.Put(sc)
}

// reuse returns (*buf)[:n] cleared if it is long enough, else a new slice;
// *buf is left empty either way (the slice is the caller's until release).
func reuse[E any](buf *[]E, n int) []E {
	b := *buf
	*buf = nil
	if cap(b) < n {
		return make([]E, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// withScratch returns a copy of x with a scratch of its own: the checks of
// one call on the copy share memory, and x itself is never modified (an
// Indexed may serve calls at the same time).
func (x *index) withScratch() *index {
	c := *x
	c.sc, c.pooled = scratchPool.Get().(*scratch), false
	return &c
}

// takeDense returns a zeroed table of n entries: a spare of x's scratch if
// one is long enough, else a new one.
func takeDense[T comparable](x *index, n int) []T {
	if x.sc != nil {
		var zero []T
		switch any(zero).(type) {
		case []int32:
			if b, ok := takeSpare(&x.sc.i32, n); ok {
				return any(b).([]T)
			}
		case []bool:
			if b, ok := takeSpare(&x.sc.bools, n); ok {
				return any(b).([]T)
			}
		}
	}
	return make([]T, n)
}

// takeSpare removes from *spares one that holds n entries and returns it
// cleared.
func takeSpare[E any](spares *[][]E, n int) ([]E, bool) {
	s := *spares
	for i, b := range s {
		if cap(b) >= n {
			s[i] = s[len(s)-1]
			*spares = s[:len(s)-1]
			b = b[:n]
			clear(b)
			return b, true
		}
	}
	return nil, false
}

// maxPairSpares and maxFlightSpares bound the spare tables a scratch keeps:
// pair tables live a check at a time, flight tables one per direction.
const (
	maxPairSpares   = 4
	maxFlightSpares = 16
)

// putSpare adds b to *spares, or in place of a shorter spare when there are
// limit already (and drops b if all are longer).
func putSpare[E any](spares *[][]E, b []E, limit int) {
	if cap(b) > maxPooled {
		return
	}
	s := *spares
	if len(s) < limit {
		*spares = append(s, b)
		return
	}
	for i := range s {
		if cap(s[i]) < cap(b) {
			s[i] = b
			return
		}
	}
}

// releasePairs hands p's dense table to x's scratch; p must not be used
// after.
func releasePairs[T comparable](x *index, p *pairs[T]) {
	if x.sc == nil || p.dense == nil {
		return
	}
	switch b := any(p.dense).(type) {
	case []int32:
		putSpare(&x.sc.i32, b, maxPairSpares)
	case []bool:
		putSpare(&x.sc.bools, b, maxPairSpares)
	}
	p.dense = nil
}
