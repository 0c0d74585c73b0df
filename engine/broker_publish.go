package engine

import (
	"strconv"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// brokerMsg is an immutable application message shared by every session it
// was routed to. topic and payload share one buffer.
type brokerMsg struct {
	topic   []byte
	payload []byte
	props   *packet.Properties // forwarded v5 properties; nil when none
	// expires says the message has a v5 Message Expiry Interval (interval,
	// seconds); expiresAt is when it runs out, set when it is published.
	expires   bool
	interval  uint32
	expiresAt Time
	// originSeq is the sequence number of the pending inbound QoS 2 record
	// this message came from (0 when none): it tells, at restart, which
	// sessions already hold their copy.
	originSeq uint64
}

// brokerOut is one outbound message of a session.
type brokerOut struct {
	seq    uint64 // global order; the record key
	id     uint16 // packet id, 0 while queued
	msg    brokerMsg
	qos    packet.QoS
	retain bool
	pubrel bool   // PUBREC received, PUBREL sent or pending
	sent   bool   // PUBLISH sent at least once (resends carry DUP=1)
	conn   ConnID // connection its PUBLISH was last sent on
}

// brokerFanSend is a session touched by a fanout, or a QoS 0 copy for it.
type brokerFanSend struct {
	s    *brokerSession
	qos0 *brokerOut
}

// forwarded lists the v5 PUBLISH properties the broker passes on unchanged
// [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-20].
const forwarded = packet.PropSet(1<<packet.PropPayloadFormat | 1<<packet.PropContentType |
	1<<packet.PropResponseTopic | 1<<packet.PropCorrelationData)

// newBrokerMsg copies topic, payload and the forwarded properties out of
// the decoder's buffer.
func newBrokerMsg(topic, payload []byte, props *packet.Properties, v5 bool) brokerMsg {
	buf := make([]byte, len(topic)+len(payload))
	copy(buf, topic)
	copy(buf[len(topic):], payload)
	m := brokerMsg{topic: buf[:len(topic):len(topic)], payload: buf[len(topic):]}
	if v5 && props != nil && props.Present.Has(packet.PropMessageExpiry) {
		m.expires, m.interval = true, props.MessageExpiry
	}
	if v5 && props != nil && (props.Present&forwarded != 0 || len(props.User) > 0) {
		p := &packet.Properties{
			Present:         props.Present & forwarded,
			PayloadFormat:   props.PayloadFormat,
			ContentType:     props.ContentType,
			ResponseTopic:   props.ResponseTopic,
			CorrelationData: append([]byte(nil), props.CorrelationData...),
			User:            append([]packet.UserProperty(nil), props.User...),
		}
		m.props = p
	}
	return m
}

// handlePublish routes a client's PUBLISH: QoS 0 forwarded, QoS 1 stored
// then PUBACK, QoS 2 Method B (id stored, message forwarded, PUBREC;
// duplicates suppressed until PUBREL [MQTT-4.3.3-10]).
func (b *Broker) handlePublish(c *brokerConn, p *packet.Publish) {
	topic, ok := b.resolveAlias(c, p)
	if !ok {
		return
	}
	s := c.sess
	if p.QoS == 2 {
		if _, dup := s.inbound[p.PacketID]; dup {
			b.send(c, b.pkts.ack(packet.PUBREC, p.PacketID, 0)) // [MQTT-4.3.3-10] not forwarded again
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
	msg := newBrokerMsg(topic, p.Payload, &p.Props, c.version == packet.V5)
	msg.startExpiry(b.now)
	if p.QoS == 2 {
		s.inbound[p.PacketID] = c.id
		c.inQoS2++
		b.beginInbound(s, p.PacketID, &msg, p.Retain)
	}
	b.fanoutStore(msg, p.QoS, p.Retain, s.id, nil)
	if p.QoS == 2 {
		b.endInbound(s, p.PacketID)
	}
	b.fanoutSend()
	if !ackFirst && p.QoS > 0 {
		b.send(c, b.ackFor(p)) // [MQTT-4.3.2-4] [MQTT-4.3.3-9] after the message is owned (and durable)
	}
}

// startExpiry starts the message's Message Expiry Interval at now.
func (m *brokerMsg) startExpiry(now Time) {
	if m.expires {
		m.expiresAt = now + Time(int64(m.interval)*Second)
	}
}

// expired reports whether the message's lifetime has passed: a copy whose
// delivery has not started is then deleted [MQTT-3.3.2-5].
func (m *brokerMsg) expired(now Time) bool { return m.expires && now > m.expiresAt }

// propsAt returns the properties of a forwarded copy: the forwarded ones, and
// the Message Expiry Interval minus the time the message waited
// [MQTT-3.3.2-6].
func (m *brokerMsg) propsAt(now Time) packet.Properties {
	var p packet.Properties
	if m.props != nil {
		p = *m.props
	}
	if m.expires {
		left := max(int64(m.expiresAt-now), 0)
		p.Present = p.Present.With(packet.PropMessageExpiry)
		p.MessageExpiry = uint32((left + Second - 1) / Second)
	}
	return p
}

// ackFor returns the PUBACK or PUBREC of a QoS 1/2 PUBLISH.
func (b *Broker) ackFor(p *packet.Publish) packet.Packet {
	if p.QoS == 1 {
		return b.pkts.ack(packet.PUBACK, p.PacketID, 0)
	}
	return b.pkts.ack(packet.PUBREC, p.PacketID, 0)
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
		// [MQTT-3.3.2-12] the alias must be within the broker's Topic Alias Maximum.
		b.fail(c, &brokerErr{sentinel: ErrBrokerProtocol, reason: packet.TopicAliasInvalid, rule: "MQTT-3.3.2-12", msg: "topic alias out of range"})
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

// fanoutStore routes a message to every matching session (phase one): the
// retained store is updated, each session gets its copy (queued, or given a
// packet id when its window has room), and the durable changes are recorded.
// Nothing is sent until fanoutSend. from is the publishing client, for
// No Local [MQTT-3.8.3-3].
// skip lists sessions that already hold their copy (a fanout redone after
// a restart).
func (b *Broker) fanoutStore(m brokerMsg, qos packet.QoS, retain bool, from string, skip map[string]bool) {
	if retain {
		b.storeRetained(m, qos) // [MQTT-3.3.1-5] [MQTT-3.3.1-6]
	}
	b.fan = b.fan[:0]
	b.matches = b.tree.match(m.topic, b.matches[:0])
	for _, sm := range b.matches {
		if (sm.opts.NoLocal && sm.client == from) || skip[sm.client] {
			continue // [MQTT-3.8.3-3]
		}
		s := b.sessions[sm.client]
		out := brokerOut{msg: m, qos: min(qos, sm.opts.QoS)} // QoS downgrade [MQTT-3.8.4-8]
		// [MQTT-3.3.1-12] [MQTT-3.3.1-13] retain only with Retain As Published;
		// 3.1.1 [MQTT-3.3.1-9] always clears it on forwarding.
		out.retain = retain && s.version == packet.V5 && sm.opts.RetainAsPublished
		b.enqueue(s, out)
	}
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
	b.fan = b.fan[:0] // nobody is connected yet
	b.endInbound(s, p.id)
}

// fanoutSend is phase two: the durable changes are flushed (synced) and the
// touched sessions send what their windows allow.
func (b *Broker) fanoutSend() {
	if b.pol.Persistence == PersistEveryChange {
		b.store.flush(b)
	}
	for i := range b.fan {
		f := b.fan[i]
		b.fan[i] = brokerFanSend{}
		if f.qos0 != nil {
			if f.s.conn != nil {
				b.sendPublish0(f.s.conn, f.qos0)
			}
			continue
		}
		b.pump(f.s)
	}
	b.fan = b.fan[:0]
}

// enqueue gives a session its copy of a message. QoS 0 goes only to an
// online session. QoS 1/2 gets a packet id at once when the window has room
// and nothing waits before it; otherwise it waits in the bounded queue.
func (b *Broker) enqueue(s *brokerSession, out brokerOut) {
	if out.qos == 0 {
		if s.conn == nil {
			b.stats.DroppedQoS0++
			return
		}
		o := new(brokerOut) // out itself must not escape: one allocation for QoS 0 only
		*o = out
		b.fan = append(b.fan, brokerFanSend{s: s, qos0: o})
		return
	}
	out.seq = b.nextSeq()
	b.fan = append(b.fan, brokerFanSend{s: s})
	if c := s.conn; c != nil && len(s.queue) == 0 && c.outstanding+b.held(s) < c.window && s.ids.Len() < 65535 {
		id, err := s.ids.Alloc() // [MQTT-2.2.1-4] an id not in flight
		if err == nil {
			out.id = id
			s.inflight = append(s.inflight, out)
			b.saveOut(s, &s.inflight[len(s.inflight)-1])
			return
		}
	}
	if len(s.queue) >= b.cfg.MaxQueued {
		if b.cfg.QueueFull == DropNewest {
			b.stats.DroppedNewest++
			return
		}
		b.stats.DroppedOldest++
		b.delOut(s, s.queue[0].seq)
		s.queue[0] = brokerOut{}
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, out)
	b.saveOut(s, &s.queue[len(s.queue)-1])
}

// held counts the inflight messages waiting to be sent on the connection.
func (b *Broker) held(s *brokerSession) int {
	n := 0
	for i := s.heldIdx; i < len(s.inflight); i++ {
		if m := &s.inflight[i]; !m.pubrel && (s.conn == nil || m.conn != s.conn.id) {
			n++
		}
	}
	return n
}

// pump sends what the session's window allows: held inflight messages
// first, in order, then queued ones, each given a fresh packet id.
func (b *Broker) pump(s *brokerSession) {
	c := s.conn
	if c == nil {
		return
	}
	i := s.heldIdx
	for i < len(s.inflight) {
		m := &s.inflight[i]
		if m.pubrel || m.conn == c.id {
			i++
			continue
		}
		if c.outstanding >= c.window {
			s.heldIdx = i
			return
		}
		if b.sendPublish(c, s, i) {
			i++
		}
	}
	s.heldIdx = len(s.inflight)
	for len(s.queue) > 0 && c.outstanding < c.window && s.ids.Len() < 65535 {
		out := s.queue[0]
		s.queue[0] = brokerOut{}
		s.queue = s.queue[1:]
		if out.msg.expired(b.now) {
			b.stats.DroppedExpired++
			b.delOut(s, out.seq) // [MQTT-3.3.2-5]
			continue
		}
		id, err := s.ids.Alloc() // [MQTT-2.2.1-4]
		if err != nil {
			return
		}
		out.id = id
		s.inflight = append(s.inflight, out)
		n := len(s.inflight) - 1
		b.saveOut(s, &s.inflight[n])
		b.sendPublish(c, s, n)
		s.heldIdx = len(s.inflight)
	}
}

// sendPublish sends inflight message i on c, DUP=1 if it was sent before
// [MQTT-3.3.1-1]. A message too large for the client is dropped as if
// delivered [MQTT-3.1.2-25]; it then reports false (i is removed).
func (b *Broker) sendPublish(c *brokerConn, s *brokerSession, i int) bool {
	m := &s.inflight[i]
	dup := m.sent && b.pol.Mutations&MutResendWithoutDup == 0
	if !m.sent && m.msg.expired(b.now) {
		b.stats.DroppedExpired++
		b.removeOut(s, i) // [MQTT-3.3.2-5] delivery had not started
		return false
	}
	p := b.pkts.publish(packet.Publish{Dup: dup, QoS: m.qos, Retain: m.retain, Topic: m.msg.topic, PacketID: m.id, Payload: m.msg.payload})
	if c.version == packet.V5 && (m.msg.props != nil || m.msg.expires) {
		p.Props = m.msg.propsAt(b.now)
	}
	if !b.send(c, p) {
		b.stats.DroppedSize++
		b.removeOut(s, i)
		return false
	}
	m.sent, m.conn = true, c.id
	c.outstanding++
	b.stats.PublishesOut++
	return true
}

// sendPublish0 sends a QoS 0 copy [MQTT-4.3.1-1].
func (b *Broker) sendPublish0(c *brokerConn, m *brokerOut) {
	if m.msg.expired(b.now) {
		b.stats.DroppedExpired++
		return // [MQTT-3.3.2-5]
	}
	p := b.pkts.publish(packet.Publish{Retain: m.retain, Topic: m.msg.topic, Payload: m.msg.payload})
	if c.version == packet.V5 && (m.msg.props != nil || m.msg.expires) {
		p.Props = m.msg.propsAt(b.now)
	}
	if b.send(c, p) {
		b.stats.PublishesOut++
	} else {
		b.stats.DroppedSize++
	}
}

// removeOut ends inflight message i: its id is free again and its record is
// deleted (after the ack that ended it arrived).
func (b *Broker) removeOut(s *brokerSession, i int) {
	m := s.inflight[i]
	s.ids.Free(m.id)
	if c := s.conn; c != nil && m.conn == c.id {
		c.outstanding--
	}
	b.delOut(s, m.seq)
	copy(s.inflight[i:], s.inflight[i+1:])
	s.inflight[len(s.inflight)-1] = brokerOut{}
	s.inflight = s.inflight[:len(s.inflight)-1]
	if i < s.heldIdx {
		s.heldIdx--
	}
}

// findOut returns the index of the inflight message with packet id, or -1.
func findOut(s *brokerSession, id uint16) int {
	for i := range s.inflight {
		if s.inflight[i].id == id {
			return i
		}
	}
	return -1
}

// handlePuback completes a QoS 1 delivery [MQTT-4.3.2-3]; an unknown
// PUBACK is ignored.
func (b *Broker) handlePuback(c *brokerConn, p *packet.Puback) {
	s := c.sess
	i := findOut(s, p.PacketID)
	if i < 0 || s.inflight[i].qos != 1 {
		return
	}
	b.removeOut(s, i)
	b.pump(s)
}

// handlePubrec answers PUBREL [MQTT-4.3.3-4] after recording that the
// message is PUBREC'd (so it is never PUBLISHed again [MQTT-4.3.3-6]). A
// v5 PUBREC >= 0x80 ends the flow. An unknown id is answered PUBREL 0x92
// or, with the legacy policy, fails the connection.
func (b *Broker) handlePubrec(c *brokerConn, p *packet.Pubrec) {
	s := c.sess
	i := findOut(s, p.PacketID)
	if i < 0 || s.inflight[i].qos != 2 {
		b.unknownAck(c, b.pol.UnknownPubrec, b.pkts.ack(packet.PUBREL, p.PacketID, b.notFound(c)), "PUBREC", p.PacketID)
		return
	}
	if c.version == packet.V5 && p.Reason.IsError() {
		b.removeOut(s, i)
		b.pump(s)
		return
	}
	if m := &s.inflight[i]; !m.pubrel {
		m.pubrel = true
		b.saveOut(s, m)
	}
	b.send(c, b.pkts.ack(packet.PUBREL, p.PacketID, 0)) // [MQTT-4.3.3-4]
}

// handlePubcomp completes a QoS 2 delivery [MQTT-4.3.3-5]; an unknown
// PUBCOMP is ignored.
func (b *Broker) handlePubcomp(c *brokerConn, p *packet.Pubcomp) {
	s := c.sess
	i := findOut(s, p.PacketID)
	if i < 0 || !s.inflight[i].pubrel {
		return
	}
	b.removeOut(s, i)
	b.pump(s)
}

// handlePubrel releases an inbound QoS 2 id and answers PUBCOMP
// [MQTT-4.3.3-11]. An unknown id is answered PUBCOMP (0x92 in v5) or, with
// the legacy policy, fails the connection.
func (b *Broker) handlePubrel(c *brokerConn, p *packet.Pubrel) {
	s := c.sess
	conn, ok := s.inbound[p.PacketID]
	if !ok {
		b.unknownAck(c, b.pol.UnknownPubrel, b.pkts.ack(packet.PUBCOMP, p.PacketID, b.notFound(c)), "PUBREL", p.PacketID)
		return
	}
	delete(s.inbound, p.PacketID)
	if conn == c.id {
		c.inQoS2--
	}
	b.delInbound(s, p.PacketID)
	b.send(c, b.pkts.ack(packet.PUBCOMP, p.PacketID, 0)) // [MQTT-4.3.3-11]
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
