package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// brokerSlab hands out packet structs carved from a shared block, so the
// hot path allocates one block per slabSize packets instead of one per
// packet. Each struct is handed out once and never reused, as Send.Packet
// requires; a block lives as long as any of its packets is referenced.
type brokerSlab[T any] struct{ free []T }

// slabSize is the number of packets per block.
const slabSize = 32

func (s *brokerSlab[T]) get() *T {
	if len(s.free) == 0 {
		s.free = make([]T, slabSize)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

// brokerPackets are the broker's slabs of the packets it sends per message.
type brokerPackets struct {
	pub     brokerSlab[packet.Publish]
	puback  brokerSlab[packet.Puback]
	pubrec  brokerSlab[packet.Pubrec]
	pubrel  brokerSlab[packet.Pubrel]
	pubcomp brokerSlab[packet.Pubcomp]
}

func (k *brokerPackets) publish(p packet.Publish) *packet.Publish {
	q := k.pub.get()
	*q = p
	return q
}

func (k *brokerPackets) ack(t packet.Type, id uint16, reason packet.ReasonCode) packet.Packet {
	switch t {
	case packet.PUBACK:
		q := k.puback.get()
		q.PacketID, q.Reason = id, reason
		return q
	case packet.PUBREC:
		q := k.pubrec.get()
		q.PacketID, q.Reason = id, reason
		return q
	case packet.PUBREL:
		q := k.pubrel.get()
		q.PacketID, q.Reason = id, reason
		return q
	}
	q := k.pubcomp.get()
	q.PacketID, q.Reason = id, reason
	return q
}
