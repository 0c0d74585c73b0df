package engine

import (
	"github.com/mqttlab/mqttlab/engine/packet"
)

// brokerOut is one outbound message of a session.
type brokerOut struct {
	seq    uint64 // global order; the record key
	key    string // the record key (keyOut of the session and seq) once built: see outRecKey
	msg    brokerMsg
	conn   ConnID // connection its PUBLISH was last sent on
	id     uint16 // packet id, 0 while queued
	qos    packet.QoS
	retain bool
	pubrel bool   // PUBREC received, PUBREL sent or pending
	sent   bool   // PUBLISH sent at least once (resends carry DUP=1)
	share  uint32 // the shared subscription group it was given to, 0 for none
	// from is the seq of the copy an ending member's session held, which
	// handOn gave this one in place of (0 for none): a restart that finds
	// both drops that one (dropHandedOn).
	from uint64
}

// brokerFanSend is a session touched by a fanout, or a QoS 0 copy for it,
// in the reused fan slice. A QoS 0 copy's message is in the fan0 slice
// beside it: the usual entry (a session to pump) is one pointer to copy.
type brokerFanSend struct {
	s  *brokerSession
	q0 int // 1 + the index of its QoS 0 copy in fan0; 0: pump the session
}

// brokerFanQoS0 is the message of a fanout's QoS 0 copy.
type brokerFanQoS0 struct {
	msg    brokerMsg
	retain bool
	share  uint32 // the group the copy goes for (0: the session's ordinary copy)
}

// resetFan empties the fanout's lists.
func (b *Broker) resetFan() {
	clear(b.fan0)
	b.fan, b.fan0 = b.fan[:0], b.fan0[:0]
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
	b.resetFan()
	if b.pol.Mutations&MutCopyPerSubscription != 0 {
		b.matches = b.tree.matchEach(m.topic(), b.matches[:0]) // canary: a copy per subscription
	} else {
		b.matches = b.tree.match(m.topic(), b.matches[:0])
	}
	for _, sm := range b.matches {
		if (sm.opts.NoLocal && sm.client == from) || skip[sm.client] || !b.mayReceive(sm.s, m.topic()) {
			continue // [MQTT-3.8.3-3]; or the ACL denies the subscriber this topic
		}
		s := sm.s
		out := brokerOut{msg: m, qos: b.grantedQoS(qos, sm.opts.QoS)} // QoS downgrade [MQTT-3.8.4-8]
		// [MQTT-3.3.1-12] [MQTT-3.3.1-13] retain only with Retain As Published;
		// 3.1.1 [MQTT-3.3.1-9] always clears it on forwarding.
		out.retain = retain && s.version == packet.V5 && sm.opts.RetainAsPublished
		b.enqueue(s, out)
	}
	if len(b.groupKeys) > 0 {
		b.fanoutShared(m, qos, retain, skip)
	}
}

// fanoutSend is phase two: the durable changes are flushed (synced) and the
// touched sessions send what their windows allow.
func (b *Broker) fanoutSend() {
	if b.pol.Persistence == PersistEveryChange {
		b.store.flush(b)
	}
	for i := range b.fan {
		f := &b.fan[i]
		s, q0 := f.s, f.q0
		f.s = nil
		if q0 > 0 {
			if s.conn != nil {
				q := &b.fan0[q0-1]
				out := brokerOut{msg: q.msg, retain: q.retain, share: q.share}
				b.sendPublish0(s.conn, &out)
			}
			continue
		}
		b.pump(s)
	}
	b.resetFan()
}

// enqueue gives a session its copy of a message. QoS 0 goes only to an
// online session. QoS 1/2 gets a packet id at once when the window has room
// and nothing waits before it; otherwise it waits in the bounded queue.
func (b *Broker) enqueue(s *brokerSession, out brokerOut) {
	if out.qos == 0 {
		if s.conn == nil {
			b.stats.DroppedQoS0++
			b.dropped(s, &out.msg, DropQoS0Offline)
			return
		}
		b.fan0 = append(b.fan0, brokerFanQoS0{msg: out.msg, retain: out.retain, share: out.share})
		b.fan = append(b.fan, brokerFanSend{s: s, q0: len(b.fan0)})
		return
	}
	if s.conn == nil && b.finiteNoQueue(s) {
		return // the canary: nothing kept for a finite session while it is away
	}
	out.seq = b.nextSeq()
	b.fan = append(b.fan, brokerFanSend{s: s})
	if c := s.conn; c != nil && len(s.queue) == 0 && c.outstanding+b.held(s) < c.window && s.ids.Len() < 65535 {
		id, err := s.ids.Alloc() // [MQTT-2.2.1-4] an id not in flight
		if err == nil {
			out.id = id
			s.pushInflight(out)
			b.saveOut(s, &s.inflight[len(s.inflight)-1])
			return
		}
	}
	if len(s.queue) >= b.queueBound() {
		if b.cfg.QueueFull == DropNewest {
			b.stats.DroppedNewest++
			b.dropped(s, &out.msg, DropQueueFull)
			return
		}
		b.stats.DroppedOldest++
		b.dropped(s, &s.queue[0].msg, DropQueueFull)
		b.delOut(s, &s.queue[0])
		s.queue[0] = brokerOut{}
		s.queue = s.queue[1:]
	}
	s.pushQueue(out)
	b.saveOut(s, &s.queue[len(s.queue)-1])
}

// queueBound is the number of queued copies at which a session's queue is
// full: MaxQueued, one less under the MutQueueBelowBound canary (at least
// one), which then drops a copy the declared bound keeps [MQTT-4.1.0-1].
func (b *Broker) queueBound() int {
	if b.cfg.Policy.Mutations&MutQueueBelowBound != 0 && b.cfg.MaxQueued > 1 {
		return b.cfg.MaxQueued - 1
	}
	return b.cfg.MaxQueued
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
			b.dropped(s, &out.msg, DropExpired)
			b.delOut(s, &out) // [MQTT-3.3.2-5]
			continue
		}
		id, err := s.ids.Alloc() // [MQTT-2.2.1-4]
		if err != nil {
			return
		}
		out.id = id
		s.pushInflight(out)
		n := len(s.inflight) - 1
		b.saveOut(s, &s.inflight[n])
		b.sendPublish(c, s, n)
		s.heldIdx = len(s.inflight)
	}
}

// sendPublish sends inflight message i on c, DUP=1 if it was sent before
// [MQTT-3.3.1-1]. A message too large for the client is dropped as if
// delivered [MQTT-3.1.2-25]; it then reports false (i is removed), except
// a QoS 2 resend (releaseTooLarge), which reports true.
func (b *Broker) sendPublish(c *brokerConn, s *brokerSession, i int) bool {
	m := &s.inflight[i]
	dup := m.sent && b.pol.Mutations&MutResendWithoutDup == 0
	if !m.sent && m.msg.expired(b.now) {
		b.stats.DroppedExpired++
		b.dropped(s, &m.msg, DropExpired)
		b.removeOut(s, i) // [MQTT-3.3.2-5] delivery had not started
		return false
	}
	p := b.pkts.publishN(dup, m, c.version == packet.V5 && (m.msg.props != nil || m.msg.expires), b.now)
	p = b.withSubIDs(c, s, m, p)
	if !b.sendPub(c, p, m.msg.checked) {
		b.stats.DroppedSize++
		id := uint16(0)
		if m.sent {
			id = m.id // a resend: the id was on the wire, and is free again
		}
		b.droppedID(s, &m.msg, DropTooLarge, id)
		if m.sent && m.qos == 2 {
			b.releaseTooLarge(c, s, m)
			return true
		}
		b.removeOut(s, i)
		return false
	}
	m.sent, m.conn = true, c.id
	c.outstanding++
	b.stats.PublishesOut++
	return true
}

// releaseTooLarge ends the QoS 2 flow of m, whose resend is too large for
// the client and was discarded as if its sending had completed
// [MQTT-3.1.2-25]: its PUBLISH went out before (a first copy by topic
// alias may fit where the resend, which must name its topic on the new
// connection [MQTT-3.3.2-7], does not), and its PUBREC never came, so the
// client may hold the id awaiting PUBREL, answering a new PUBLISH with it
// as a duplicate until then [MQTT-4.3.3-10]. The broker goes on as after
// a PUBREC: it records the flow as PUBREL'd (never PUBLISHed again
// [MQTT-4.3.3-6]), sends PUBREL and frees the id at PUBCOMP
// [MQTT-4.3.3-5]; a client that never got the PUBLISH answers PUBCOMP
// 0x92 (Packet Identifier not found), as in any recovery.
func (b *Broker) releaseTooLarge(c *brokerConn, s *brokerSession, m *brokerOut) {
	m.pubrel = true
	b.saveOut(s, m)
	b.sendAck(c, packet.PUBREL, m.id) // [MQTT-3.1.2-25] [MQTT-4.3.3-5]
}

// sendPublish0 sends a QoS 0 copy [MQTT-4.3.1-1].
func (b *Broker) sendPublish0(c *brokerConn, m *brokerOut) {
	if m.msg.expired(b.now) {
		b.stats.DroppedExpired++
		b.dropped(c.sess, &m.msg, DropExpired)
		return // [MQTT-3.3.2-5]
	}
	p := b.pkts.publish0(m, c.version == packet.V5 && (m.msg.props != nil || m.msg.expires), b.now)
	if b.sendPub(c, b.withSubIDs(c, c.sess, m, p), m.msg.checked) {
		b.stats.PublishesOut++
	} else {
		b.stats.DroppedSize++
		b.dropped(c.sess, &m.msg, DropTooLarge)
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
	b.delOut(s, &m)
	s.dropInflight(i)
	if i < s.heldIdx {
		s.heldIdx--
	}
}

// dropInflight removes inflight message i, keeping the others in order.
func (s *brokerSession) dropInflight(i int) {
	switch n := len(s.inflight); {
	case n == 1:
		s.inflight[0] = brokerOut{}
		s.inflight = s.inflBase[:0] // empty: the whole array again
	case i < n/2:
		// The usual ack, of one of the oldest messages: those before it
		// move up one and the window slides (pushInflight reclaims the
		// front); fewer moves of pointer-holding structs than shifting
		// the rest down.
		copy(s.inflight[1:i+1], s.inflight[:i])
		s.inflight[0] = brokerOut{}
		s.inflight = s.inflight[1:]
	default:
		copy(s.inflight[i:], s.inflight[i+1:])
		s.inflight[n-1] = brokerOut{}
		s.inflight = s.inflight[:n-1]
	}
}

// pushInflight appends m to the inflight messages. They are a window that
// ends at the end of inflBase (dropInflight slides it past an acked oldest
// message); a full window with room before it moves down to the front of
// the array instead of growing it.
func (s *brokerSession) pushInflight(m brokerOut) {
	s.inflight, s.inflBase = slideAppend(s.inflight, s.inflBase, m)
}

// pushQueue appends m to the queued messages: a window of queueBase like
// the inflight messages (pump and DropOldest take from its front), so a
// queue that keeps moving reuses its array instead of reallocating it each
// time its end is reached.
func (s *brokerSession) pushQueue(m brokerOut) {
	s.queue, s.queueBase = slideAppend(s.queue, s.queueBase, m)
}

// slideAppend appends m to w, a window that ends at the end of its array
// base (its front slides as entries are taken, their slots zeroed): a full
// window with room before it moves down to the front of the array instead
// of growing it. It returns the window and its array.
func slideAppend(w, base []brokerOut, m brokerOut) ([]brokerOut, []brokerOut) {
	if n := len(w); n == cap(w) {
		if gap := cap(base) - n; gap > 0 {
			all := base[:cap(base)]
			copy(all, w)
			clear(all[n:])
			w = all[:n]
		} else {
			w = append(w, m)
			return w, w[:0]
		}
	}
	return append(w, m), base
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
	b.pumpOnAck(s)
}

// pumpOnAck sends what the window an ack opened allows; the
// MutNoPumpOnAck canary leaves the queue waiting for the next publication.
func (b *Broker) pumpOnAck(s *brokerSession) {
	if b.pol.Mutations&MutNoPumpOnAck == 0 {
		b.pump(s)
	}
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
		b.pumpOnAck(s)
		return
	}
	if m := &s.inflight[i]; !m.pubrel {
		m.pubrel = true
		b.saveOut(s, m)
	}
	b.sendAck(c, packet.PUBREL, p.PacketID) // [MQTT-4.3.3-4]
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
	b.pumpOnAck(s)
}

// finiteNoQueue reports whether the MutFiniteSessionNoQueue canary treats
// s as a session that holds no messages while away: one whose Session
// Expiry Interval is finite and not 0.
func (b *Broker) finiteNoQueue(s *brokerSession) bool {
	return b.pol.Mutations&MutFiniteSessionNoQueue != 0 && s.expiry != 0 && s.expiry != expiryNever
}
