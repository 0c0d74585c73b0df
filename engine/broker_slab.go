package engine

import (
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// brokerPackets are the broker's slabs (box.go) of the packets it sends per
// message: each struct is handed out once and never reused, as Send.Packet
// requires.
type brokerPackets struct {
	pub slab[packet.Publish]
	ackSlabs
	last0 brokerLast0 // the last QoS 0 PUBLISH
	lastN brokerLast0 // the last QoS 1 or 2 PUBLISH
}

// brokerLast0 is a PUBLISH handed out last and what it was built from.
// Nothing in a PUBLISH names its connection: the QoS 0 copies of one message
// to its subscribers are the same packet, and so are QoS 1 and 2 copies
// given the same packet id (each session allocates its ids lowest-free-first,
// so subscribers often agree). Like acks (box.go), one read-only value
// serves them all.
type brokerLast0 struct {
	p      *packet.Publish
	buf    *byte // the message's buffer: never reused (box.go), and kept alive by p
	n      int
	mp     *packet.Properties // the message's forwarded properties
	at     Time               // when: the Message Expiry Interval left depends on it
	id     uint16
	qos    packet.QoS
	dup    bool
	retain bool
	props  bool // v5 properties were set
}

// brokerActions are the broker's slabs (box.go) of the actions it emits per
// message.
type brokerActions struct {
	send    actionSlab[Send]
	persist actionSlab[Persist]
}

// rewind reuses every slab's current block (BrokerConfig.ReuseActions).
func (a *brokerActions) rewind() {
	a.send.rewind()
	a.persist.rewind()
}

// publish0 returns the QoS 0 PUBLISH of out's message: the last one when it
// was built from the same message, flags and time, else a fresh one.
// withProps says the copy carries the message's v5 properties as at now.
func (k *brokerPackets) publish0(out *brokerOut, withProps bool, now Time) *packet.Publish {
	return k.shared(&k.last0, false, 0, out.retain, 0, &out.msg, withProps, now)
}

// publishN is publish0 for a QoS 1 or 2 copy (packet id id, DUP dup).
func (k *brokerPackets) publishN(dup bool, out *brokerOut, withProps bool, now Time) *packet.Publish {
	return k.shared(&k.lastN, dup, out.qos, out.retain, out.id, &out.msg, withProps, now)
}

// shared returns the PUBLISH of m with these flags, id and properties (as at
// now when withProps): last's when it was built from the same, else a fresh
// one, then remembered in last.
func (k *brokerPackets) shared(last *brokerLast0, dup bool, qos packet.QoS, retain bool, id uint16, m *brokerMsg, withProps bool, now Time) *packet.Publish {
	key := brokerLast0{buf: unsafe.SliceData(m.buf), n: len(m.buf), mp: m.props, at: now,
		id: id, qos: qos, dup: dup, retain: retain, props: withProps}
	if l := last; l.p != nil && l.buf == key.buf && l.n == key.n && l.mp == key.mp && l.at == key.at &&
		l.id == key.id && l.qos == key.qos && l.dup == key.dup && l.retain == key.retain && l.props == key.props {
		return l.p
	}
	p := k.publish(dup, qos, retain, id, m)
	if withProps {
		p.Props = m.propsAt(now)
	}
	// Field by field: no typed copy of the struct (a bulk write barrier
	// while the GC marks).
	last.p, last.buf, last.n, last.mp, last.at = p, key.buf, key.n, key.mp, key.at
	last.id, last.qos, last.dup, last.retain, last.props = key.id, key.qos, key.dup, key.retain, key.props
	return p
}

// publish returns a fresh PUBLISH of m with these flags and packet id, and
// no properties. Only the non-zero fields are written into the slab's zero
// struct: copying a whole Publish costs a 300-byte move with write barriers.
func (k *brokerPackets) publish(dup bool, qos packet.QoS, retain bool, id uint16, m *brokerMsg) *packet.Publish {
	q := k.pub.get()
	q.Dup, q.QoS, q.Retain, q.PacketID = dup, qos, retain, id
	q.Topic, q.Payload = m.topic(), m.payload()
	return q
}
