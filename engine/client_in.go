package engine

import (
	"fmt"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// clientDelivery is an incoming QoS 1/2 message handed to the application and
// awaiting its Ack (AckAfterCallback only).
type clientDelivery struct {
	did   DeliveryID
	id    uint16
	qos   packet.QoS
	conn  ConnID // the connection its PUBACK/PUBREC is owed on
	acked bool
}

// clientInbound is the client's receive side.
type clientInbound struct {
	// awaitingRel holds the QoS2 ids delivered and PUBREC'd (or owed a
	// PUBREC), awaiting PUBREL (Method B), with their arrival sequence.
	awaitingRel seqTable
	pendingByID idTable[clientDelivery] // delivered, the application's Ack pending
	byDelivery  deliveryQueue           // the same, by clientDelivery id
	acks        headQueue               // this connection's owed acks, in arrival order
	nextDID     DeliveryID
	nextSeq     uint64
}

func (in *clientInbound) init() {
	in.nextDID, in.nextSeq = 1, 1
}

func (in *clientInbound) hasState() bool {
	return in.awaitingRel.len() > 0 || in.pendingByID.len() > 0
}

// connLost forgets the acks owed on the closed connection; the deliveries
// stay, so a resent PUBLISH is not delivered twice.
func (in *clientInbound) connLost() {
	in.acks.reset()
}

// pushAck queues an owed ack.
func (in *clientInbound) pushAck(d *clientDelivery) { in.acks.push(d) }

// sortedRelIDs lists the awaiting-PUBREL ids in increasing order.
func (in *clientInbound) sortedRelIDs() []uint16 {
	return in.awaitingRel.ids()
}

// handlePublish receives a PUBLISH: QoS 0 is delivered; QoS 1/2 is
// delivered once and acknowledged per the AckOrder policy; a QoS2 id
// awaiting PUBREL is answered PUBREC and not delivered again.
func (c *Client) handlePublish(p *packet.Publish) {
	p, ok := c.resolveAliasIn(p) // §3.3.2.3.4
	if !ok {
		return
	}
	switch p.QoS {
	case 0:
		c.deliver(p)
	case 1:
		c.receiveQoS1(p)
	default:
		c.receiveQoS2(p)
	}
}

// receiveQoS1: before-callback sends PUBACK then delivers; after-callback
// delivers and sends PUBACK on the application's Ack [MQTT-4.3.2-4].
func (c *Client) receiveQoS1(p *packet.Publish) {
	if c.cfg.Policy.AckOrder == LegacyAckBeforeCallback {
		if c.sendAck(packet.PUBACK, p.PacketID, 0) {
			c.deliver(p)
		}
		return
	}
	if d := c.in.pendingByID.get(p.PacketID); d != nil {
		c.rebind(d) // still with the application: its Ack answers this copy
		return
	}
	c.deliverPending(p)
}

// receiveQoS2 is Method B: deliver on PUBLISH, keep the id until PUBREL.
func (c *Client) receiveQoS2(p *packet.Publish) {
	if c.in.awaitingRel.has(p.PacketID) {
		// [MQTT-4.3.3-10] a duplicate before PUBREL: PUBREC again, no clientDelivery.
		c.sendAck(packet.PUBREC, p.PacketID, 0)
		return
	}
	if d := c.in.pendingByID.get(p.PacketID); d != nil {
		c.rebind(d) // [MQTT-4.3.3-10] delivered, the application's Ack pending
		return
	}
	if c.cfg.Policy.AckOrder == LegacyAckBeforeCallback {
		c.awaitRel(p.PacketID)
		if c.sendAck(packet.PUBREC, p.PacketID, 0) { // [MQTT-4.3.3-8]
			c.deliver(p)
		}
		return
	}
	c.deliverPending(p)
}

// deliverPending delivers and records the Ack the PUBACK/PUBREC waits for.
func (c *Client) deliverPending(p *packet.Publish) {
	d := c.dels.get()
	*d = clientDelivery{did: c.deliver(p), id: p.PacketID, qos: p.QoS, conn: c.conn}
	c.in.pendingByID.set(d.id, d)
	c.in.byDelivery.push(d)
	c.in.pushAck(d)
}

// rebind moves a pending clientDelivery's owed ack to the current connection.
func (c *Client) rebind(d *clientDelivery) {
	if d.conn != c.conn {
		d.conn = c.conn
		c.in.pushAck(d)
	}
}

// deliver hands a copy of the message to the application. Topic and
// payload are copied side by side into the byte arena: the application may
// keep both, and even modify the payload, which cannot reach the topic.
func (c *Client) deliver(p *packet.Publish) DeliveryID {
	did := c.in.nextDID
	c.in.nextDID++
	c.arena.reserve(len(p.Topic) + len(p.Payload))
	topic := c.arena.take(append(c.arena.free, p.Topic...))
	payload := c.arena.take(append(c.arena.free, p.Payload...))
	if p.Payload == nil {
		payload = nil
	}
	d, a := c.boxes.deliver.slot()
	d.Delivery = did
	m := &d.Msg
	m.Topic, m.Payload = unsafe.String(unsafe.SliceData(topic), len(topic)), payload
	m.QoS, m.Retain, m.Dup, m.PacketID = p.QoS, p.Retain, p.Dup, p.PacketID
	c.emit(a)
	return did
}

// handleAck: the application owns a clientDelivery. A QoS2 id now awaits PUBREL
// (persisted with QoS2Durable); the owed acks leave in arrival order
// [MQTT-4.6.0-2] [MQTT-4.6.0-3], on the connection they are owed on. An Ack
// of a clientDelivery the client no longer tracks (before-callback, or a discarded
// session) does nothing; an Ack whose connection closed sends nothing.
func (c *Client) handleAck(e Ack) {
	d := c.in.byDelivery.take(e.Delivery)
	if d == nil {
		return
	}
	if c.in.pendingByID.get(d.id) == d {
		c.in.pendingByID.del(d.id)
	}
	d.acked = true
	if d.qos == 2 {
		c.awaitRel(d.id)
	}
	c.flushAcks()
}

// flushAcks sends the owed acks at the head of the queue that are acked,
// moving the head past them (an emptied queue starts again at the front).
func (c *Client) flushAcks() {
	in := &c.in
	for d := in.acks.front(); d != nil && d.acked && c.state == csConnected; d = in.acks.front() {
		in.acks.popFront()
		if d.conn != c.conn {
			continue
		}
		var ok bool
		if d.qos == 1 {
			ok = c.sendAck(packet.PUBACK, d.id, 0) // [MQTT-4.3.2-4]
		} else {
			ok = c.sendAck(packet.PUBREC, d.id, 0) // [MQTT-4.3.3-8]
		}
		if !ok {
			return // the connection closed: connLost emptied the queue
		}
	}
}

// awaitRel records a QoS2 id awaiting PUBREL; with QoS2Durable the record
// is synced before the PUBREC leaves.
//
// Window: with AckAfterCallback the application's durable write happens
// before its Ack reaches this persist. A crash between the two leaves no
// record: after the reboot the broker resends the PUBLISH (it saw no
// PUBREC) and the message is delivered a second time. Only an application
// that dedupes by its own log closes that window.
func (c *Client) awaitRel(id uint16) {
	seq := c.in.nextSeq
	c.in.nextSeq++
	c.in.awaitingRel.put(id, seq)
	if c.cfg.Policy.IncomingQoS2 == QoS2Durable {
		c.persistPut(clientInKey(id), c.arena.take(clientAppendIn(c.arena.free, seq)))
	}
}

// handlePubrel completes an incoming QoS2 flow: the id is forgotten (its
// record deleted first, so a crash cannot leave a stale id that would
// swallow a new message), then PUBCOMP [MQTT-4.3.3-11]. An unknown id
// follows the UnknownPubrel policy.
func (c *Client) handlePubrel(p *packet.Pubrel) {
	if !c.in.awaitingRel.has(p.PacketID) {
		c.unknownPubrel(p.PacketID)
		return
	}
	c.in.awaitingRel.del(p.PacketID)
	if c.cfg.Policy.IncomingQoS2 == QoS2Durable {
		c.persistDelete(clientInKey(p.PacketID))
	}
	c.sendAck(packet.PUBCOMP, p.PacketID, 0) // [MQTT-4.3.3-11]
}

// unknownPubrel answers a PUBREL whose id is unknown: PUBCOMP 0x92 in v5,
// a plain PUBCOMP in 3.1.1 [MQTT-4.3.3-11], no callback, no record; or,
// legacy, the client is stuck (coreMQTT #271).
func (c *Client) unknownPubrel(id uint16) {
	if c.cfg.Policy.UnknownPubrel == LegacyUnknownAckFail {
		c.becomeStuck(fmt.Errorf("%w: PUBREL %d", ErrClientStuck, id))
		return
	}
	c.sendAck(packet.PUBCOMP, id, c.notFound()) // [MQTT-4.3.3-11]
}

// discardIncoming drops the incoming QoS2 state and its records, and every
// pending clientDelivery (a later Ack for them does nothing).
func (c *Client) discardIncoming() {
	if c.cfg.Policy.IncomingQoS2 == QoS2Durable {
		for _, id := range c.in.sortedRelIDs() {
			c.persistDelete(clientInKey(id))
		}
	}
	c.in.awaitingRel.reset()
	c.in.pendingByID.reset()
	c.in.byDelivery.reset()
	c.in.connLost()
}

// LoseIncomingQoS2State is a fault the lab injects: the client forgets, in
// memory only, its incoming QoS2 ids and pending deliveries, as a device
// that lost that state would (the situation of coreMQTT #271). Durable
// records are left alone.
func (c *Client) LoseIncomingQoS2State() {
	c.in.awaitingRel.reset()
	c.in.pendingByID.reset()
	c.in.byDelivery.reset()
	c.in.connLost()
}
