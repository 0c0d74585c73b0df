package engine

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrIDsExhausted is returned when all 65535 packet identifiers of one
// direction are in flight.
var ErrIDsExhausted = errors.New("engine: all 65535 packet identifiers are in flight")

// ErrIDInUse is returned by IDAllocator.Claim for an id already in flight.
var ErrIDInUse = errors.New("engine: packet identifier already in flight")

// IDAllocator hands out the packet identifiers of one direction (the client's
// outgoing PUBLISH/SUBSCRIBE/UNSUBSCRIBE, or a broker session's outgoing
// PUBLISH). PUBLISH, SUBSCRIBE and UNSUBSCRIBE share one id set per direction
// [MQTT-2.2.1-3] [MQTT-2.3.1-2]; the two directions are independent, so each
// side of a session keeps its own allocator.
//
// Allocation is deterministic: the lowest free id after the last one handed
// out, wrapping from 65535 to 1. An id is never reused while in flight: it
// stays taken until Free. The zero value is ready to use; do not copy an
// IDAllocator after its first use (copies would share their in-flight set).
//
// The in-flight set grows with the highest id used, so an allocator that only
// ever hands out small ids (most of them: engines are rebuilt at every
// reboot) costs a few words, not the 8 KiB of all 65535.
type IDAllocator struct {
	used []uint64 // bit id%64 of word id/64 is set while id is in flight; words past the end are zero
	last uint16   // the id handed out last (0 before the first)
	n    int      // ids in flight
	// zeroOut: under MutPacketIDZero, id 0 is out (it is not in the set).
	zeroOut bool

	// Mutations holds the lab's deliberate bugs; MutReuseInflightID,
	// MutPacketIDZero and MutExhaustedReuse matter here: Alloc then hands
	// out the last id again while it is still in flight, wraps from 65535
	// to 0, or with every id in flight hands out the last one again.
	Mutations Mutation
}

// InUse reports whether id is in flight.
func (a *IDAllocator) InUse(id uint16) bool {
	w := int(id >> 6)
	return w < len(a.used) && a.used[w]&(1<<(id&63)) != 0
}

// Len reports how many ids are in flight.
func (a *IDAllocator) Len() int { return a.n }

// Alloc returns the lowest free id after the last one handed out, wrapping,
// and marks it in flight [MQTT-2.2.1-3] [MQTT-2.3.1-2]. It fails with
// ErrIDsExhausted when every id is in flight.
func (a *IDAllocator) Alloc() (uint16, error) {
	if a.Mutations&MutReuseInflightID != 0 && a.last != 0 && a.InUse(a.last) {
		return a.last, nil // canary: hand out an id that is still in flight
	}
	if a.n >= 65535 {
		if a.Mutations&MutExhaustedReuse != 0 {
			return a.last, nil // canary: the last id again, though in flight
		}
		return 0, ErrIDsExhausted // refused: never an id in flight [MQTT-2.2.1-3]
	}
	if a.Mutations&MutPacketIDZero != 0 && a.last == 65535 && !a.zeroOut {
		a.last, a.zeroOut = 0, true
		return 0, nil // canary: the counter wrapped to 0 [MQTT-2.2.1-3]
	}
	id, ok := a.freeFrom(uint32(a.last) + 1)
	if !ok {
		id, _ = a.freeFrom(1)
	}
	a.set(id)
	a.last = id
	return id, nil
}

// freeFrom returns the lowest free non-zero id >= from, if any.
func (a *IDAllocator) freeFrom(from uint32) (uint16, bool) {
	if from == 0 {
		from = 1
	}
	for w := from >> 6; w < idWords; w++ {
		free := ^uint64(0)
		if w < uint32(len(a.used)) {
			free = ^a.used[w]
		}
		if w == from>>6 {
			free &= ^uint64(0) << (from & 63)
		}
		if w == 0 {
			free &^= 1 // id 0 is never used [MQTT-2.2.1-3]
		}
		if free != 0 {
			return uint16(w<<6 | uint32(bits.TrailingZeros64(free))), true
		}
	}
	return 0, false
}

// Claim marks a specific id in flight, as when state is restored from durable
// records. It fails for id 0 and for an id already in flight.
func (a *IDAllocator) Claim(id uint16) error {
	if id == 0 {
		return fmt.Errorf("%w: packet identifier 0 is invalid", ErrIDInUse)
	}
	if a.InUse(id) {
		return fmt.Errorf("%w: %d", ErrIDInUse, id)
	}
	a.set(id)
	return nil
}

// SetLast sets the id after which the next search starts, so a restored
// allocator continues where the old one stopped.
func (a *IDAllocator) SetLast(id uint16) { a.last = id }

// Free returns id to the pool once its flow is complete (PUBACK, PUBCOMP,
// PUBREC >= 0x80, SUBACK, UNSUBACK). Freeing a free id is a no-op.
func (a *IDAllocator) Free(id uint16) {
	if id == 0 {
		a.zeroOut = false
	}
	if id != 0 && a.InUse(id) {
		a.used[id>>6] &^= 1 << (id & 63)
		a.n--
	}
}

// Reset frees every id and restarts the search at 1.
func (a *IDAllocator) Reset() {
	clear(a.used)
	a.last = 0
	a.n = 0
	a.zeroOut = false
}

// idWords is the number of words of a full in-flight set (ids 0 to 65535).
const idWords = 1 << 16 / 64

func (a *IDAllocator) set(id uint16) {
	if w := int(id >> 6); w >= len(a.used) {
		n := min(max(w+1, 2*len(a.used), 4), idWords)
		a.used = append(a.used, make([]uint64, n-len(a.used))...)
	}
	a.used[id>>6] |= 1 << (id & 63)
	a.n++
}
