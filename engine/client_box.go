package engine

import "unsafe"

// Boxing without an allocation per action.
//
// Converting a struct such as Send or Complete to the Action interface copies
// it to a fresh heap object: one allocation per action, the largest share of
// the client's garbage. An interface value is two words, its type and a
// pointer to its (immutable) data, so the same value can be built around a
// struct carved from a block of many: one allocation per actionSlabSize
// actions. Consumers see an ordinary Action: type switches, assertions and
// comparisons behave exactly as for a plainly boxed value.
//
// The rule that makes it sound is the one the compiler's boxing follows: a
// struct handed out by box is never written again, so nobody holding the
// Action ever sees it change. Slabs only move forward; a block lives as long
// as any of its actions is referenced.

// ifaceWords is the runtime layout of a non-empty interface value.
type ifaceWords struct {
	tab  unsafe.Pointer // the itab: interface type and dynamic type
	data unsafe.Pointer // the boxed value
}

// actionSlabSize is the number of actions of one type per block.
const actionSlabSize = 32

// actionSlab boxes values of one action type T as Actions, carving them from
// blocks that are never reused.
type actionSlab[T Action] struct {
	free []T
	tab  unsafe.Pointer // itab of (Action, T), taken from a plainly boxed T
}

// box returns v as an Action.
func (s *actionSlab[T]) box(v T) Action {
	if len(s.free) == 0 {
		s.free = make([]T, actionSlabSize)
		if s.tab == nil {
			var zero T
			proto := Action(zero)
			s.tab = (*ifaceWords)(unsafe.Pointer(&proto)).tab
		}
	}
	p := &s.free[0]
	*p = v
	s.free = s.free[1:]
	var a Action
	w := (*ifaceWords)(unsafe.Pointer(&a))
	w.tab, w.data = s.tab, unsafe.Pointer(p)
	return a
}

// clientActions are the client's slabs of the actions it emits per message.
type clientActions struct {
	send     actionSlab[Send]
	complete actionSlab[Complete]
	deliver  actionSlab[Deliver]
	persist  actionSlab[Persist]
	timer    actionSlab[SetTimer]
}

// clientSlab hands out structs of type T carved from blocks, each once,
// never reused: a packet handed out in Send.Packet, a message or delivery the
// client tracks by pointer.
type clientSlab[T any] struct{ free []T }

func (s *clientSlab[T]) get() *T {
	if len(s.free) == 0 {
		s.free = make([]T, actionSlabSize)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// clientArenaBlock is the size of a byte arena block.
const clientArenaBlock = 4096

// clientArena hands out byte space carved from blocks that are never
// reused, so encoded packets, record values and delivered messages cost no
// allocation of their own. Space once handed out is never written again by
// the client: Send.Data, Persist.Value and Deliver's message may be kept.
type clientArena struct{ free []byte } // len 0; cap is the space left

// take hands out b, the result of appending to a.free, capped so that
// appending to it cannot reach the next piece, and moves the free space past
// it. A b larger than the space left is its own allocation (the append grew
// it); a fresh block is then started for what follows.
func (a *clientArena) take(b []byte) []byte {
	if len(b) <= cap(a.free) {
		a.free = a.free[len(b):len(b)]
	} else {
		a.free = make([]byte, 0, clientArenaBlock)
	}
	return b[:len(b):len(b)]
}

// reserve makes sure n bytes fit in the free space.
func (a *clientArena) reserve(n int) {
	if cap(a.free) < n {
		a.free = make([]byte, 0, max(n, clientArenaBlock))
	}
}
