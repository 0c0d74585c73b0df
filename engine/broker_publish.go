package engine

import (
	"strconv"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// handlePublish routes a client's PUBLISH: QoS 0 forwarded, QoS 1 stored
// then PUBACK, QoS 2 Method B (id stored, message forwarded, PUBREC;
// duplicates suppressed until PUBREL [MQTT-4.3.3-10]).
func (b *Broker) handlePublish(c *brokerConn, p *packet.Publish) {
	topic, ok := b.resolveAlias(c, p)
	if !ok {
		return
	}
	s := c.sess
	denied := !b.mayPublish(c, topic)
	if denied && c.version == packet.V5 {
		b.refusePublish(c, p)
		return
	}
	if p.QoS == 2 {
		if s.inbound.has(p.PacketID) {
			b.sendAck(c, packet.PUBREC, p.PacketID) // [MQTT-4.3.3-10] not forwarded again
			return
		}
		if c.version == packet.V5 && c.inQoS2 >= int(b.cfg.ReceiveMaximum) {
			// [MQTT-3.3.4-9] more unacknowledged QoS 2 PUBLISHes than Receive Maximum.
			b.closeWith(c, packet.ReceiveMaximumExceeded, &brokerErr{sentinel: ErrBrokerReceiveMaximum,
				reason: packet.ReceiveMaximumExceeded, rule: "MQTT-3.3.4-9", msg: "too many QoS 2 PUBLISHes awaiting PUBREL"})
			return
		}
	}
	b.stats.PublishesIn++
	ackFirst := b.pol.AckOrder == LegacyAckBeforeCallback || b.pol.Mutations&MutAckBeforePersist != 0
	if ackFirst && p.QoS > 0 {
		b.sendNow(c, b.ackFor(p)) // legacy / canary: the ack leaves before the message is stored
	}
	msg := newBrokerMsg(&b.bytes, topic, p.Payload, &p.Props, c.version == packet.V5)
	msg.checked = true // decoded (an aliased topic was decoded with its first PUBLISH)
	msg.startExpiry(b.now)
	msg.unaging = b.pol.Mutations&MutExpiryUnchanged != 0
	if p.QoS == 2 {
		s.inbound.put(p.PacketID, uint64(c.id))
		c.inQoS2++
		if !denied {
			// A denied message has no fanout a restart could redo: its
			// pending record would route it after a crash (redoInbound),
			// which the ACL forbids.
			b.beginInbound(s, p.PacketID, &msg, p.Retain)
		}
	}
	if !denied { // a 3.1.1 client is acknowledged as usual; its message goes nowhere
		b.fanoutStore(msg, p.QoS, p.Retain, s.id, nil)
	}
	if p.QoS == 2 {
		b.endInbound(s, p.PacketID)
	}
	b.fanoutSend()
	if !ackFirst && p.QoS > 0 {
		b.sendAck(c, ackType(p), p.PacketID) // [MQTT-4.3.2-4] [MQTT-4.3.3-9] after the message is owned (and durable)
	}
}

// ackFor returns the PUBACK or PUBREC of a QoS 1/2 PUBLISH.
func (b *Broker) ackFor(p *packet.Publish) packet.Packet {
	return b.pkts.ack(ackType(p), p.PacketID, 0)
}

// ackType is the type of a QoS 1/2 PUBLISH's acknowledgement: PUBACK or
// PUBREC.
func ackType(p *packet.Publish) packet.Type {
	if p.QoS == 1 {
		return packet.PUBACK
	}
	return packet.PUBREC
}

// resolveAlias returns the topic of a PUBLISH, applying a v5 Topic Alias
// (§3.3.2.3.4); a bad alias closes the connection.
func (b *Broker) resolveAlias(c *brokerConn, p *packet.Publish) ([]byte, bool) {
	if c.version != packet.V5 || !p.Props.Present.Has(packet.PropTopicAlias) {
		if !validTopicName(p.Topic) {
			b.fail(c, &brokerErr{sentinel: ErrBrokerProtocol, reason: packet.TopicNameInvalid, rule: "MQTT-3.3.2-2", msg: "invalid topic name"})
			return nil, false
		}
		return p.Topic, true
	}
	a := p.Props.TopicAlias
	if a == 0 || a > b.cfg.TopicAliasMaximum {
		// The client MUST NOT send an alias above the CONNACK's Topic Alias
		// Maximum [MQTT-3.3.2-9] [MQTT-3.2.2-17], nor any when it is absent
		// [MQTT-3.2.2-18]; the broker accepts every alias up to it
		// [MQTT-3.3.2-12].
		rule := "MQTT-3.3.2-9"
		if b.cfg.TopicAliasMaximum == 0 {
			rule = "MQTT-3.2.2-18"
		}
		b.fail(c, &brokerErr{sentinel: ErrBrokerProtocol, reason: packet.TopicAliasInvalid, rule: rule, msg: "topic alias out of range"})
		return nil, false
	}
	if len(p.Topic) > 0 {
		if c.aliases == nil {
			c.aliases = make(map[uint16]string)
		}
		c.aliases[a] = string(p.Topic)
		return p.Topic, validTopicName(p.Topic)
	}
	t, ok := c.aliases[a]
	if !ok {
		// §3.3.4: an unknown alias with an empty topic is a Protocol Error.
		b.fail(c, protocolErr(packet.ProtocolError, "§3.3.4", "unknown topic alias %d", a))
		return nil, false
	}
	return []byte(t), true
}

// beginInbound makes an inbound QoS 2 PUBLISH durable before its copies
// are: with every-change persistence the id record, holding the message and
// marked pending, is synced first, so a crash that keeps only some of the
// copies is repaired at restart (the fanout is redone for the sessions
// without theirs) instead of forwarding the resent PUBLISH twice
// [MQTT-4.3.3-10] or losing it.
func (b *Broker) beginInbound(s *brokerSession, id uint16, m *brokerMsg, retain bool) {
	if b.pol.Persistence != PersistEveryChange || !b.durable(s) {
		return
	}
	m.originSeq = b.nextSeq()
	b.saveInbound(s, id, m.originSeq, m, retain)
	b.store.flush(b)
}

// endInbound marks the inbound id record done once the copies are synced:
// the sync comes first, or a crash could keep the mark and lose copies.
func (b *Broker) endInbound(s *brokerSession, id uint16) {
	if b.pol.Persistence == PersistEveryChange && b.durable(s) {
		b.store.flush(b)
	}
	b.saveInbound(s, id, 0, nil, false)
}

// redoInbound finishes, at the first Step after a restart, the fanout of an
// inbound QoS 2 message whose id record is still pending.
func (b *Broker) redoInbound(p brokerPendingIn) {
	s := b.sessions[p.client]
	if s == nil {
		return
	}
	skip := map[string]bool{}
	for id, ss := range b.sessions {
		for _, list := range [][]brokerOut{ss.inflight, ss.queue} {
			for i := range list {
				if list[i].msg.originSeq == p.msg.originSeq {
					skip[id] = true
				}
			}
		}
	}
	b.fanoutStore(p.msg, 2, p.retain, p.client, skip)
	b.resetFan() // nobody is connected yet
	b.endInbound(s, p.id)
}

// handlePubrel releases an inbound QoS 2 id and answers PUBCOMP
// [MQTT-4.3.3-11]. An unknown id is answered PUBCOMP (0x92 in v5) or, with
// the legacy policy, fails the connection.
func (b *Broker) handlePubrel(c *brokerConn, p *packet.Pubrel) {
	s := c.sess
	conn, ok := s.inbound.get(p.PacketID)
	if !ok {
		b.unknownAck(c, b.pol.UnknownPubrel, b.pkts.ack(packet.PUBCOMP, p.PacketID, b.notFound(c)), "PUBREL", p.PacketID)
		return
	}
	s.inbound.del(p.PacketID)
	if ConnID(conn) == c.id {
		c.inQoS2--
	}
	b.delInbound(s, p.PacketID)
	b.sendAck(c, packet.PUBCOMP, p.PacketID) // [MQTT-4.3.3-11]
}

// notFound is the reason code of an answer to an unknown id: 0x92 in v5,
// none in 3.1.1.
func (b *Broker) notFound(c *brokerConn) packet.ReasonCode {
	if c.version == packet.V5 {
		return packet.PacketIdentifierNotFound
	}
	return packet.Success
}

// unknownAck answers a PUBREL/PUBREC for an unknown packet id: with
// UnknownAckAnswer the answer goes out (no state is created); with the legacy
// policy the connection fails.
func (b *Broker) unknownAck(c *brokerConn, pol UnknownAck, answer packet.Packet, what string, id uint16) {
	if pol == UnknownAckAnswer {
		b.send(c, answer) // [MQTT-4.3.3-11]
		return
	}
	err := &brokerErr{sentinel: ErrBrokerUnknownAck, reason: packet.PacketIdentifierNotFound, rule: "MQTT-4.3.3-11",
		msg: what + " for unknown packet id " + strconv.Itoa(int(id))}
	b.emit(CloseConn{Conn: c.id, Reason: err})
	b.dropConn(c)
}
