package sim

import (
	"unsafe"

	"github.com/mqttlab/mqttlab/engine"
)

// Boxing events without an allocation per event.
//
// Converting a struct such as engine.BytesReceived to the engine.Event
// interface copies it to a fresh heap object: one allocation per event. An
// interface value is two words, its type and a pointer to its data, so the
// same value can be built around a struct the world keeps: no allocation at
// all. The engine sees an ordinary Event; type switches and assertions
// behave exactly as for a plainly boxed value.
//
// What makes one slot per event type sound: an engine never keeps the Event
// it is stepped with. Client.Step and Broker.Step take the struct out of the
// interface by value in their type switch, and BytesReceived's contract is
// that the engine copies what it keeps (its Data is reused after Step
// returns anyway). The world writes a slot only to step the next event of
// that type, and it boxes one only when the engine's Step of the last one has
// returned: bytes arrive from the dispatch loop (never from inside a step),
// an Ack is fed after the step whose delivery it acknowledges, and a Publish
// comes from a plan op.

// ifaceWords is the runtime layout of a non-empty interface value.
type ifaceWords struct {
	tab  unsafe.Pointer // the itab: interface type and dynamic type
	data unsafe.Pointer // the boxed value
}

// eventSlot boxes values of one event type T as engine.Events, each in the
// same slot (see above for when that is sound).
type eventSlot[T engine.Event] struct {
	slot *T
	tab  unsafe.Pointer // itab of (engine.Event, T), taken from a plainly boxed T
}

// box returns v as an engine.Event, overwriting the last one boxed.
func (s *eventSlot[T]) box(v T) engine.Event {
	if s.slot == nil {
		s.slot = new(T)
		var zero T
		proto := engine.Event(zero)
		s.tab = (*ifaceWords)(unsafe.Pointer(&proto)).tab
	}
	*s.slot = v
	var e engine.Event
	w := (*ifaceWords)(unsafe.Pointer(&e))
	w.tab, w.data = s.tab, unsafe.Pointer(s.slot)
	return e
}

// worldEvents are the world's slots for the events it feeds most often.
type worldEvents struct {
	bytes   eventSlot[engine.BytesReceived]
	ack     eventSlot[engine.Ack]
	publish eventSlot[engine.Publish]
}

// byteArenaBlock is the size of a byte arena block.
const byteArenaBlock = 8192

// byteArena copies byte slices into blocks that are never reused: one
// allocation per block instead of one per copy. A copy is never written
// again and may be kept. The space left is block[off:]: a copy moves off,
// an int, so it stores no pointer (no GC write barrier while the collector
// marks).
type byteArena struct {
	block []byte
	off   int
}

// clone returns a copy of b (nil for nil), capped so that appending to it
// cannot reach the next copy.
func (a *byteArena) clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return a.appendBytes(b, "")
}

// cloneString returns the bytes of s in a fresh (never-reused) slice.
func (a *byteArena) cloneString(s string) []byte { return a.appendBytes(nil, s) }

// str returns b as a string whose bytes live in the arena: never written
// again, so the string is immutable as Go requires.
func (a *byteArena) str(b []byte) string {
	c := a.appendBytes(b, "")
	return unsafe.String(unsafe.SliceData(c), len(c))
}

// appendBytes copies b, or else s, into the arena.
func (a *byteArena) appendBytes(b []byte, s string) []byte {
	n := len(b) + len(s)
	if n > byteArenaBlock/4 {
		c := make([]byte, 0, n)
		return append(append(c, b...), s...)
	}
	if a.block == nil || a.off+n > len(a.block) {
		a.block, a.off = make([]byte, byteArenaBlock), 0
	}
	c := append(append(a.block[a.off:a.off:a.off+n], b...), s...)
	a.off += n
	return c
}

// Carved blocks start with room for carveMin pieces and double up to
// carveMax pieces.
const (
	carveMin = 4
	carveMax = 64
)

// carver hands out values and short slices of T carved from blocks: one
// allocation per many. What it hands out belongs to the taker (it may be
// written); the carver never hands the same space out again.
type carver[T any] struct {
	free []T // len 0; cap is the space left
	n    int // size of the current block
}

// slice returns an empty slice with room for n values; appending beyond
// them grows it as usual, never into the next piece.
func (c *carver[T]) slice(n int) []T {
	if cap(c.free) < n {
		c.n = min(max(2*c.n, carveMin), carveMax)
		c.free = make([]T, 0, n*c.n)
	}
	s := c.free[:0:n]
	c.free = c.free[n:n]
	return s
}

// one returns a pointer to a fresh zero T.
func (c *carver[T]) one() *T { return &c.slice(1)[:1][0] }
