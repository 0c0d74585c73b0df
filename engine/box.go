package engine

import (
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Boxing without an allocation per action, and structs and bytes carved from
// blocks: the allocation-saving machinery shared by the client and the broker.
//
// Converting a struct such as Send or Complete to the Action interface copies
// it to a fresh heap object: one allocation per action, the largest share of
// an engine's garbage. An interface value is two words, its type and a
// pointer to its (immutable) data, so the same value can be built around a
// struct carved from a block of many: one allocation per block of actions.
// Consumers see an ordinary Action: type switches, assertions and
// comparisons behave exactly as for a plainly boxed value.
//
// The rule that makes it sound is the one the compiler's boxing follows: a
// struct handed out by box is never written again, so nobody holding the
// Action ever sees it change. (slot hands out the struct and its Action
// before the fields are filled: the engine fills them at once, before its
// Step returns, and never again.) Slabs only move forward; a block lives as
// long as any of its actions is referenced. The same rule holds for slab
// (structs handed out by pointer, e.g. Send.Packet) and byteArena
// (Send.Data, Persist.Value, delivered messages): space once handed out is
// never reused.
//
// The other side of the rule is the consumers': nobody writes Send.Packet,
// Send.Data or Persist.Value (Client.Step, Broker.Step). That is what lets
// read-only values be shared: the Success acknowledgements and their wire
// bytes below (sharedAck), a broker's QoS 0 PUBLISH to every subscriber
// (brokerLast0), a client's retransmit copy of a PUBLISH as the Send.Data of
// its first send.

// ifaceWords is the runtime layout of a non-empty interface value.
type ifaceWords struct {
	tab  unsafe.Pointer // the itab: interface type and dynamic type
	data unsafe.Pointer // the boxed value
}

// Slab blocks start small and double up to slabMax values, and to no more
// than slabMaxBytes for large types (a block's unused tail is lost when its
// engine is dropped), so that an engine that lives for a few packets (the
// sim rebuilds one at every reboot) does not pay for full blocks of every
// type.
const (
	slabMin      = 4
	slabMax      = 32
	slabMaxBytes = 4096
)

// nextBlock is the size of the block of values of size bytes each after one
// of n values (0: none yet).
func nextBlock(n int, size uintptr) int {
	most := slabMax
	if size > 0 {
		most = max(slabMin, min(slabMax, slabMaxBytes/int(size)))
	}
	return min(max(2*n, slabMin), most)
}

// actionSlab boxes values of one action type T as Actions, carving them from
// blocks that are never reused.
//
// The next free value is an index into the current block, not a slice of
// what is left: handing one out then writes an int, not a slice pointer
// (with its write barrier check).
type actionSlab[T Action] struct {
	block []T
	next  int            // index of the next free value of block
	tab   unsafe.Pointer // itab of (Action, T), taken from a plainly boxed T
}

// box returns v as an Action.
func (s *actionSlab[T]) box(v T) Action {
	p, a := s.slot()
	*p = v
	return a
}

// slot returns a zero T of its own and the Action boxing it. The caller
// fills the T's fields before the Action leaves the engine (before Step
// returns) and never writes it afterwards. Filling fields in the caller's
// concrete code spares the generic whole-struct copy of box (a typed memory
// move, with a bulk write barrier while the GC marks) on the hot Send and
// Persist paths.
func (s *actionSlab[T]) slot() (*T, Action) {
	if s.next == len(s.block) {
		s.refill()
	}
	p := &s.block[s.next]
	s.next++
	var a Action
	w := (*ifaceWords)(unsafe.Pointer(&a))
	w.tab, w.data = s.tab, unsafe.Pointer(p)
	return p, a
}

// rewind hands the current block out again from its start, zeroed (slot
// promises a zero T): for a Step whose caller is done with every Action
// boxed before it (ReuseActions).
func (s *actionSlab[T]) rewind() {
	clear(s.block[:s.next])
	s.next = 0
}

// refill starts the next block (slot's slow path, kept out of it so that
// slot inlines).
func (s *actionSlab[T]) refill() {
	var zero T
	s.block, s.next = make([]T, nextBlock(len(s.block), unsafe.Sizeof(zero))), 0
	if s.tab == nil {
		proto := Action(zero)
		s.tab = (*ifaceWords)(unsafe.Pointer(&proto)).tab
	}
}

// boxShared returns *p as an Action without copying it: p must never be
// written again, like a struct of an actionSlab.
func boxShared[T Action](p *T) Action {
	var zero T
	a := Action(zero)
	(*ifaceWords)(unsafe.Pointer(&a)).data = unsafe.Pointer(p)
	return a
}

// slab hands out structs of type T carved from blocks, each once, never
// reused: a packet handed out in Send.Packet, a message or delivery tracked
// by pointer.
type slab[T any] struct {
	block []T
	next  int // index of the next free value of block (see actionSlab)
}

// get returns a zero T of its own.
func (s *slab[T]) get() *T {
	if s.next == len(s.block) {
		s.refill()
	}
	p := &s.block[s.next]
	s.next++
	return p
}

// refill starts the next block (get's slow path).
func (s *slab[T]) refill() {
	var zero T
	s.block, s.next = make([]T, nextBlock(len(s.block), unsafe.Sizeof(zero))), 0
}

// Byte arena blocks start at arenaMin bytes and double up to arenaMax.
const (
	arenaMin = 512
	arenaMax = 8192
)

// byteArena hands out byte space carved from blocks that are never reused,
// so encoded packets, record values and messages cost no allocation of their
// own. Space once handed out is never written again by the engine: Send.Data,
// Persist.Value and Deliver's message may be kept.
type byteArena struct {
	free []byte // len 0; cap is the space left
	n    int    // size of the current block
}

// grow starts a fresh block with room for at least need bytes.
func (a *byteArena) grow(need int) {
	a.n = min(max(2*a.n, arenaMin), arenaMax)
	a.free = make([]byte, 0, max(need, a.n))
}

// take hands out b, the result of appending to a.free, capped so that
// appending to it cannot reach the next piece, and moves the free space past
// it. A b larger than the space left is its own allocation (the append grew
// it); a fresh block is then started for what follows.
func (a *byteArena) take(b []byte) []byte {
	if len(b) <= cap(a.free) {
		a.free = a.free[len(b):len(b)]
	} else {
		a.grow(0)
	}
	return b[:len(b):len(b)]
}

// takeString is take for bytes that are a string: the space is never
// written again, so the string is immutable as Go requires.
func (a *byteArena) takeString(b []byte) string {
	b = a.take(b)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// arenaSmall is room for a typical small packet or record: writers start a
// fresh block rather than let one outgrow the little space left.
const arenaSmall = 64

// reserve makes sure n bytes fit in the free space.
func (a *byteArena) reserve(n int) {
	if cap(a.free) < n {
		a.grow(n)
	}
}

// ackSlabs are the slabs of the four acknowledgement packets (PUBACK,
// PUBREC, PUBREL, PUBCOMP) that client and broker send per message.
type ackSlabs struct {
	puback  slab[packet.Puback]
	pubrec  slab[packet.Pubrec]
	pubrel  slab[packet.Pubrel]
	pubcomp slab[packet.Pubcomp]
}

// ack returns an acknowledgement packet of type t (PUBCOMP for any other
// type) with packet id id and reason rc. A Success ack for an id below
// sharedAckIDs is the shared one of sharedAcks; any other is carved fresh.
func (k *ackSlabs) ack(t packet.Type, id uint16, rc packet.ReasonCode) packet.Packet {
	if rc == packet.Success && id < sharedAckIDs {
		return sharedAcks.get(t, id)
	}
	switch t {
	case packet.PUBACK:
		a := k.puback.get()
		a.PacketID, a.Reason = id, rc
		return a
	case packet.PUBREC:
		a := k.pubrec.get()
		a.PacketID, a.Reason = id, rc
		return a
	case packet.PUBREL:
		a := k.pubrel.get()
		a.PacketID, a.Reason = id, rc
		return a
	}
	a := k.pubcomp.get()
	a.PacketID, a.Reason = id, rc
	return a
}

// Acknowledgements are the most frequent packets an engine sends, and
// nearly all are Success with no properties for a small packet id: identical
// values. Since a packet handed out in Send.Packet is never written again by
// anyone, one read-only value per (type, id) can be handed out by every
// engine, from every goroutine, instead of a fresh 280-byte struct per ack.
// Packet ids are allocated lowest-free-first, so small ids dominate: in the
// standard sim scenario every ack has an id below 192.
const sharedAckIDs = 256

// sharedAcks holds the Success acks of ids below sharedAckIDs. Built once at
// package initialisation and never written again.
var sharedAcks = newAckTable()

// ackTable is one read-only Success ack per type and packet id.
type ackTable struct {
	puback  [sharedAckIDs]packet.Puback
	pubrec  [sharedAckIDs]packet.Pubrec
	pubrel  [sharedAckIDs]packet.Pubrel
	pubcomp [sharedAckIDs]packet.Pubcomp
}

func newAckTable() *ackTable {
	t := new(ackTable)
	for id := range uint16(sharedAckIDs) {
		t.puback[id].PacketID = id
		t.pubrec[id].PacketID = id
		t.pubrel[id].PacketID = id
		t.pubcomp[id].PacketID = id
	}
	return t
}

// get returns the shared Success ack of type t (PUBCOMP for any other type)
// for id < sharedAckIDs.
func (t *ackTable) get(typ packet.Type, id uint16) packet.Packet {
	switch typ {
	case packet.PUBACK:
		return &t.puback[id]
	case packet.PUBREC:
		return &t.pubrec[id]
	case packet.PUBREL:
		return &t.pubrel[id]
	}
	return &t.pubcomp[id]
}

// sharedAckWires holds the wire bytes of the shared acks: a Success ack
// without properties encodes the same in 3.1.1 and 5.0 (v5's shortest
// form), so the bytes are encoded once, at package initialisation, and
// handed out read-only in Send.Data like the packets themselves.
var sharedAckWires = newAckWires()

// ackWires is the encoding of every shared ack: type, flags, Remaining
// Length 2 and the packet id, per type (PUBACK..PUBCOMP) and id.
type ackWires [4][sharedAckIDs][4]byte

func newAckWires() *ackWires {
	w := new(ackWires)
	for i, t := range [...]packet.Type{packet.PUBACK, packet.PUBREC, packet.PUBREL, packet.PUBCOMP} {
		flags := byte(0)
		if t == packet.PUBREL {
			flags = 2 // [MQTT-3.6.1-1]
		}
		for id := range uint16(sharedAckIDs) {
			w[i][id] = [4]byte{byte(t)<<4 | flags, 2, byte(id >> 8), byte(id)}
		}
	}
	return w
}

// sharedAckWire returns the wire bytes of p for version v when p is one of
// the shared acks (box.go) and the codec would encode it, else nil: the
// encoding is then skipped. Packet id 0 is left to the codec, which
// refuses it.
func sharedAckWire(v packet.Version, p packet.Packet) []byte {
	if v != packet.V311 && v != packet.V5 {
		return nil
	}
	var i int
	var id uint16
	var shared bool
	switch a := p.(type) {
	case *packet.Puback:
		i, id, shared = 0, a.PacketID, isSharedAck(a, a.PacketID, &sharedAcks.puback)
	case *packet.Pubrec:
		i, id, shared = 1, a.PacketID, isSharedAck(a, a.PacketID, &sharedAcks.pubrec)
	case *packet.Pubrel:
		i, id, shared = 2, a.PacketID, isSharedAck(a, a.PacketID, &sharedAcks.pubrel)
	case *packet.Pubcomp:
		i, id, shared = 3, a.PacketID, isSharedAck(a, a.PacketID, &sharedAcks.pubcomp)
	}
	if !shared || id == 0 {
		return nil
	}
	return sharedAckWires[i][id][:]
}

// sharedAck returns the shared Success ack of type t (PUBACK to PUBCOMP)
// and packet id id, with its wire bytes for version v: what ackSlabs.ack
// and sharedAckWire give for it, found without a type switch. It returns
// nil, nil when there is none (another reason, type or version, or an id
// of 0 or from sharedAckIDs up): the caller then takes the general path.
func sharedAck(v packet.Version, t packet.Type, id uint16, rc packet.ReasonCode) (packet.Packet, []byte) {
	if rc != packet.Success || id == 0 || id >= sharedAckIDs || (v != packet.V311 && v != packet.V5) ||
		t < packet.PUBACK || t > packet.PUBCOMP {
		return nil, nil
	}
	return sharedAcks.get(t, id), sharedAckWires[t-packet.PUBACK][id][:]
}

// isSharedAck reports whether p is the shared ack of id in table.
func isSharedAck[T any](p *T, id uint16, table *[sharedAckIDs]T) bool {
	return id < sharedAckIDs && p == &table[id]
}
