package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// brokerPackets are the broker's slabs (box.go) of the packets it sends per
// message: each struct is handed out once and never reused, as Send.Packet
// requires.
type brokerPackets struct {
	pub     slab[packet.Publish]
	puback  slab[packet.Puback]
	pubrec  slab[packet.Pubrec]
	pubrel  slab[packet.Pubrel]
	pubcomp slab[packet.Pubcomp]
}

// brokerActions are the broker's slabs (box.go) of the actions it emits per
// message.
type brokerActions struct {
	send    actionSlab[Send]
	persist actionSlab[Persist]
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
