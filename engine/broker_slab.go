package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// brokerPackets are the broker's slabs (box.go) of the packets it sends per
// message: each struct is handed out once and never reused, as Send.Packet
// requires.
type brokerPackets struct {
	pub slab[packet.Publish]
	ackSlabs
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
