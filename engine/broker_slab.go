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
	last0 brokerLast0
}

// brokerLast0 is the QoS 0 PUBLISH handed out last and what it was built
// from. A QoS 0 copy carries no packet id, so the copies of one message to
// its subscribers are the same packet: like acks (box.go), one read-only
// value serves them all.
type brokerLast0 struct {
	p      *packet.Publish
	buf    *byte // the message's buffer: never reused (box.go), and kept alive by p
	n      int
	mp     *packet.Properties // the message's forwarded properties
	retain bool
	props  bool // v5 properties were set
	at     Time // when: the Message Expiry Interval left depends on it
}

// brokerActions are the broker's slabs (box.go) of the actions it emits per
// message.
type brokerActions struct {
	send    actionSlab[Send]
	persist actionSlab[Persist]
}

// publish0 returns the QoS 0 PUBLISH of out's message: the last one when it
// was built from the same message, flags and time, else a fresh one.
// withProps says the copy carries the message's v5 properties as at now.
func (k *brokerPackets) publish0(out *brokerOut, withProps bool, now Time) *packet.Publish {
	key := brokerLast0{buf: unsafe.SliceData(out.msg.buf), n: len(out.msg.buf), mp: out.msg.props,
		retain: out.retain, props: withProps, at: now}
	if l := &k.last0; l.p != nil && l.buf == key.buf && l.n == key.n && l.mp == key.mp &&
		l.retain == key.retain && l.props == key.props && l.at == key.at {
		return l.p
	}
	p := k.publish(false, 0, out.retain, 0, &out.msg)
	if withProps {
		p.Props = out.msg.propsAt(now)
	}
	key.p = p
	k.last0 = key
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
