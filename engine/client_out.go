package engine

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// clientOutState is where an outgoing QoS 1/2 message is in its flow.
type clientOutState uint8

const (
	coPublished clientOutState = iota + 1 // awaiting PUBACK/PUBREC (sent or not yet)
	coReleased                            // PUBREL sent, awaiting PUBCOMP
)

// clientOutMsg is one outgoing QoS 1/2 message the client owns.
type clientOutMsg struct {
	id      uint16
	seq     uint64 // acceptance order: the original send order [MQTT-4.6.0-1]
	relSeq  uint64 // PUBREC arrival order, the PUBREL order [MQTT-4.6.0-4]
	cmd     CmdID
	state   clientOutState
	sent    bool // the PUBLISH left at least once in this flow: resends carry DUP=1
	counted bool // counts against the current connection's send quota
	done    bool // acknowledged or dropped; skipped in the pending queue
	pkt     packet.Publish
	wire    []byte // the PUBLISH encoded with DUP=0
}

// clientOutbound is the client's send side: the packet ids of its direction, the
// messages it owns in acceptance order, and the send quota.
type clientOutbound struct {
	ids      IDAllocator
	byID     idTable[clientOutMsg]
	order    []*clientOutMsg // every message owned, by seq
	pending  []*clientOutMsg // waiting for quota on this connection, FIFO
	head     int
	quota    int // may go below 0 when resent PUBRELs exceed a smaller quota
	quotaMax int
	nextSeq  uint64
	nextRel  uint64
}

func (o *clientOutbound) init(m Mutation) {
	o.ids.Mutations = m
	o.nextSeq, o.nextRel = 1, 1
}

// resetQuota starts a connection's quota at the broker's Receive Maximum
// (v5) or the configured window (3.1.1) [MQTT-4.9.0-1].
func (o *clientOutbound) resetQuota(max int) {
	o.quota, o.quotaMax = max, max
	o.pending, o.head = o.pending[:0], 0
}

// add takes ownership of a message.
func (o *clientOutbound) add(m *clientOutMsg) {
	o.byID.set(m.id, m)
	o.order = appendPtr(o.order, m)
}

// remove ends a message's flow: its id is free again and its quota slot
// returns [MQTT-4.9.0-*].
func (o *clientOutbound) remove(m *clientOutMsg) {
	if o.byID.get(m.id) == m {
		o.byID.del(m.id)
	}
	switch i := slices.Index(o.order, m); {
	case i == 0: // the oldest, as acks mostly come: no copy of the rest
		o.order[0] = nil
		o.order = o.order[1:]
	case i > 0:
		o.order = slices.Delete(o.order, i, i+1)
	}
	if o.byID.get(m.id) == nil { // (under MutReuseInflightID two messages share an id)
		o.ids.Free(m.id)
	}
	if m.counted && o.quota < o.quotaMax {
		o.quota++
	}
	m.counted, m.done = false, true
}

// clientBytes views an immutable string as bytes without copying. The codec and
// the world only read it.
func clientBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// handlePublishCmd accepts an application message. QoS 0 needs a
// connection. QoS 1/2 gets a packet id and, with RetransmitDurable, a synced
// copy with DUP set before it is Accepted and first sent.
func (c *Client) handlePublishCmd(e Publish) {
	if e.QoS > 2 {
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: QoS %d", ErrClientBadCommand, e.QoS))
		return
	}
	if e.MessageExpiry != 0 && c.v != packet.V5 {
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: Message Expiry needs Version 5", ErrClientBadCommand))
		return
	}
	if e.QoS == 0 {
		c.publishQoS0(e)
		return
	}
	id, err := c.out.ids.Alloc() // [MQTT-2.2.1-3]
	if err != nil {
		c.complete(e.Cmd, Failed, err)
		return
	}
	m := c.msgs.get()
	m.id, m.cmd, m.state = id, e.Cmd, coPublished
	m.pkt.QoS, m.pkt.Retain, m.pkt.PacketID = e.QoS, e.Retain, id
	m.pkt.Topic, m.pkt.Payload = clientBytes(e.Topic), e.Payload
	m.pkt.Props = publishProps(e.MessageExpiry)
	m.wire, err = c.encode(&m.pkt) // the retransmit copy: never written again
	if err != nil {
		c.out.ids.Free(id)
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: %w", ErrClientBadCommand, err))
		return
	}
	if err := c.tooLarge(packet.PUBLISH, len(m.wire)); err != nil && c.state == csConnected {
		c.out.ids.Free(id)
		c.complete(e.Cmd, Failed, err) // [MQTT-3.2.2-15] never Accepted
		return
	}
	m.pkt.Payload = m.wire[len(m.wire)-len(e.Payload):] // own the payload
	m.seq = c.out.nextSeq
	c.out.nextSeq++
	if c.cfg.Policy.Retransmit == RetransmitDurable {
		c.persistPut(clientOutKey(id), c.arena.take(clientAppendOut(c.arena.free, m))) // stored, DUP set, before the first send
	}
	c.complete(e.Cmd, Accepted, nil)
	c.out.add(m)
	if c.state == csConnected {
		c.out.pending = appendPtr(c.out.pending, m)
		c.pump()
	}
}

// publishProps are the properties of an application PUBLISH: the Message
// Expiry Interval when it is set [MQTT-3.3.2-5].
func publishProps(expiry uint32) packet.Properties {
	var p packet.Properties
	if expiry != 0 {
		p.Present = p.Present.With(packet.PropMessageExpiry)
		p.MessageExpiry = expiry
	}
	return p
}

// publishQoS0 sends a QoS 0 PUBLISH with DUP=0 [MQTT-4.3.1-1]; it is not
// session state and never waits for quota [MQTT-4.9.0-2].
func (c *Client) publishQoS0(e Publish) {
	if c.state != csConnected {
		c.complete(e.Cmd, Failed, ErrClientNotConnected)
		return
	}
	p := c.pubs.get() // carved from the client's slab: never reused, as Send.Packet requires
	p.Retain, p.Topic, p.Payload = e.Retain, clientBytes(e.Topic), e.Payload
	p.Props = publishProps(e.MessageExpiry)
	data, err := c.encode(p)
	if err != nil {
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: %w", ErrClientBadCommand, err))
		return
	}
	if err := c.tooLarge(packet.PUBLISH, len(data)); err != nil {
		c.complete(e.Cmd, Failed, err) // [MQTT-3.2.2-15]
		return
	}
	p.Payload = data[len(data)-len(e.Payload):]
	c.sendBytes(data, p)
	c.complete(e.Cmd, Accepted, nil)
}

// pump sends queued PUBLISHes in order while the quota allows
// [MQTT-3.3.4-7] [MQTT-4.9.0-2]. Other packets never wait [MQTT-3.3.4-8].
// A message too large for the broker's Maximum Packet Size fails instead
// of leaving [MQTT-3.2.2-15] and takes no quota.
func (c *Client) pump() {
	o := &c.out
	for o.quota > 0 && o.head < len(o.pending) && c.state == csConnected {
		m := o.pending[o.head]
		o.pending[o.head] = nil
		o.head++
		if m.done || m.state != coPublished {
			continue
		}
		if err := c.tooLarge(packet.PUBLISH, len(m.wire)); err != nil {
			c.dropOut(m, err) // [MQTT-3.2.2-15] failed, not sent
			continue
		}
		c.sendPublish(m)
		m.counted = true
		o.quota--
	}
	if o.head == len(o.pending) {
		o.pending, o.head = o.pending[:0], 0
	}
}

// sendPublish sends m: its first send with DUP=0 [MQTT-4.3.2-2]
// [MQTT-4.3.3-2], a resend with DUP=1 [MQTT-3.3.1-1].
func (c *Client) sendPublish(m *clientOutMsg) {
	if !m.sent {
		m.sent = true
		c.sendBytes(m.wire, &m.pkt)
		return
	}
	dup := true
	if c.cfg.Policy.Mutations&MutResendWithoutDup != 0 {
		dup = false // canary: a resend without DUP
	}
	data := c.arena.take(append(c.arena.free, m.wire...))
	p := c.pubs.get()
	*p = m.pkt
	if dup {
		data[0] |= clientDupFlag
		p.Dup = true
	}
	c.sendBytes(data, p)
}

// clientDupFlag is the DUP bit of a PUBLISH fixed header.
const clientDupFlag = 0x08

// handlePuback completes a QoS 1 message. The stored copy is deleted only
// after the state update [MQTT-4.3.2-3]; a reason >= 0x80 means the message
// is acknowledged and must not be resent [MQTT-4.4.0-2].
func (c *Client) handlePuback(p *packet.Puback) {
	m := c.out.byID.get(p.PacketID)
	if m == nil || m.pkt.QoS != 1 {
		return // an ack for nothing in flight: ignored
	}
	c.finishOut(m, p.Reason)
}

// handlePubcomp completes a QoS 2 message.
func (c *Client) handlePubcomp(p *packet.Pubcomp) {
	m := c.out.byID.get(p.PacketID)
	if m == nil || m.state != coReleased {
		return // an ack for nothing in flight: ignored
	}
	c.finishOut(m, p.Reason)
}

// finishOut ends a message's flow: state update (id and quota freed),
// Complete, then the stored copy deleted, then the next queued PUBLISH.
func (c *Client) finishOut(m *clientOutMsg, reason packet.ReasonCode) {
	durable := c.cfg.Policy.Retransmit == RetransmitDurable
	if durable && c.cfg.Policy.Mutations&MutDeleteBeforeUpdate != 0 {
		c.persistDelete(clientOutKey(m.id)) // canary: delete before the state update
		durable = false
	}
	c.out.remove(m)
	if reason.IsError() {
		c.complete(m.cmd, Failed, fmt.Errorf("%w: reason %#02x", ErrClientPublishRefused, byte(reason)))
	} else {
		c.complete(m.cmd, Acknowledged, nil)
	}
	if durable {
		c.persistDelete(clientOutKey(m.id))
	}
	c.pump()
}

// handlePubrec moves a QoS 2 message to PUBREL [MQTT-4.3.3-4]: the stored
// record becomes a PUBREL record (one synced Put replaces the PUBLISH copy),
// then PUBREL leaves. An unknown id follows the UnknownPubrec policy.
func (c *Client) handlePubrec(p *packet.Pubrec) {
	m := c.out.byID.get(p.PacketID)
	if m == nil || m.pkt.QoS != 2 {
		c.unknownPubrec(p.PacketID)
		return
	}
	if p.Reason.IsError() {
		c.finishOut(m, p.Reason) // [MQTT-4.4.0-2] the id is free again
		return
	}
	if m.state == coPublished {
		m.state = coReleased
		m.relSeq = c.out.nextRel
		c.out.nextRel++
		if c.cfg.Policy.Retransmit == RetransmitDurable {
			if c.cfg.Policy.Mutations&MutDeleteBeforeUpdate != 0 {
				c.persistDelete(clientOutKey(m.id)) // canary: delete before the update
			}
			c.persistPut(clientOutKey(m.id), c.arena.take(clientAppendOut(c.arena.free, m)))
		}
	}
	c.sendAck(packet.PUBREL, m.id, 0) // a repeated PUBREC gets PUBREL again
}

// unknownPubrec answers a PUBREC whose id is not in flight: PUBREL 0x92 in
// v5, a plain PUBREL in 3.1.1, no record, no callback; or, legacy, the
// client is stuck (coreMQTT #271).
func (c *Client) unknownPubrec(id uint16) {
	if c.cfg.Policy.UnknownPubrec == LegacyUnknownAckFail {
		c.becomeStuck(fmt.Errorf("%w: PUBREC %d", ErrClientStuck, id))
		return
	}
	c.sendAck(packet.PUBREL, id, c.notFound())
}

// notFound is 0x92 Packet Identifier not found in v5, 0 in 3.1.1.
func (c *Client) notFound() packet.ReasonCode {
	if c.v == packet.V5 {
		return packet.PacketIdentifierNotFound
	}
	return 0
}

// resendSession resends after a session-present CONNACK, the only time the
// client resends [MQTT-4.4.0-1]: first the PUBRELs in PUBREC order
// [MQTT-4.6.0-4] (never blocked by the quota [MQTT-3.3.4-8], but counted in
// it), then the PUBLISHes with DUP=1, original ids, original order
// [MQTT-4.6.0-1], as the quota allows; the excess waits in order. A released
// message's PUBLISH is never resent [MQTT-4.3.3-6].
func (c *Client) resendSession() {
	o := &c.out
	rel := make([]*clientOutMsg, 0, len(o.order))
	for _, m := range o.order {
		if m.state == coReleased {
			rel = append(rel, m)
		}
	}
	slices.SortFunc(rel, func(a, b *clientOutMsg) int { return cmpSeq(a.relSeq, b.relSeq) })
	for _, m := range rel {
		if c.cfg.Policy.Mutations&MutPublishAfterPubrel != 0 {
			c.sendPublish(m) // canary: PUBLISH after its PUBREL
		}
		if !c.sendAck(packet.PUBREL, m.id, 0) {
			return
		}
		m.counted = true
		o.quota--
	}
	c.queueUnreleased()
}

// startFresh starts the flows of a new session: queued messages go out as
// new PUBLISHes with DUP=0.
func (c *Client) startFresh() {
	for _, m := range c.out.order {
		m.sent = false
	}
	c.queueUnreleased()
}

// queueUnreleased queues every message awaiting PUBACK/PUBREC in order and
// sends what the quota allows.
func (c *Client) queueUnreleased() {
	for _, m := range c.out.order {
		if m.state == coPublished {
			c.out.pending = appendPtr(c.out.pending, m)
		}
	}
	c.pump()
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sessionLost handles Session Present 0 while the client holds state
// [MQTT-3.2.2-5]: the old session's flows are discarded.
//
// A QoS 2 message whose PUBLISH left in the lost session (sent at least
// once, or restored from a record: it may have been) is dropped: it
// Completes Failed with ErrClientSessionDiscarded and its record is
// deleted. The broker may have received it and routed it before it lost
// the session; its record of the packet id, which would have recognised a
// resend [MQTT-4.3.3-10], went with the session, so a PUBLISH of it in the
// new session is a new message and would be delivered twice. Nothing can
// tell whether the broker had it: the application, told it failed, decides
// (the spec's exactly-once holds; the message may be lost, and the lab's
// NoLoss excuses exactly such a message). Messages already PUBREC'd belong
// to the broker that lost them: their flow cannot finish, so they fail the
// same way.
//
// Choice: the other messages awaiting PUBACK/PUBREC are not dropped: a QoS
// 1 message may arrive twice [MQTT-4.3.2-5], and a QoS 2 message never sent
// reached no session. The application was told they were Accepted, so they
// are published as NEW messages of the new session: fresh flows with DUP=0
// (their ids are free in the new session, so they keep them), in their
// original order. Their stored copies stay: they now stand for the new
// flows. The incoming QoS2 ids and their records are discarded too.
//
// MutRepublishLostQoS2 (a canary) restores the old bug: the sent QoS 2
// messages are published again as new ones too.
func (c *Client) sessionLost() {
	republish := c.cfg.Policy.Mutations&MutRepublishLostQoS2 != 0
	for _, m := range slices.Clone(c.out.order) {
		if m.state == coReleased || (m.sent && m.pkt.QoS == 2 && !republish) {
			c.dropOut(m, ErrClientSessionDiscarded) // [MQTT-3.2.2-5] [MQTT-4.3.3-10]
		}
	}
	c.discardIncoming()
}

// discardSession is a clean start [MQTT-3.1.2-4]: every message whose flow
// started (sent at least once, or restored from a record) fails with
// ErrClientSessionDiscarded and its record is deleted, as are the incoming
// QoS2 records and the session marker. Messages accepted but never sent are
// not session state (v5 §4.1): they stay queued and go out as new
// PUBLISHes of the new session.
//
// The records go in this order: the outgoing messages', the marker, the
// incoming QoS2 records. A crash part way leaves one of three states a
// rebooted client reads right (restore):
//   - the marker with some outgoing records: the session as it was, less
//     messages already failed; it resumes with Clean Start 0;
//   - incoming records without a marker, which no other history leaves
//     (the marker is stored at the CONNACK, before any PUBLISH can come):
//     the client finishes the clean start instead of resuming with Clean
//     Start 0 a session whose QoS2 ids it partly forgot, which would
//     deliver a resent PUBLISH again [MQTT-4.3.3-10];
//   - outgoing records without a marker: messages accepted and never sent
//     (no PUBLISH goes before the marker, and a sent one's record goes
//     before it), which the client keeps and sends as new.
func (c *Client) discardSession() {
	for _, m := range slices.Clone(c.out.order) {
		if m.sent || m.state == coReleased {
			c.dropOut(m, ErrClientSessionDiscarded)
		}
	}
	if c.marker {
		c.persistDelete(clientKeySession)
		c.marker = false
	}
	c.discardIncoming()
	c.hasSession = false
}

// dropOut ends a message without an acknowledgement: Complete Failed, its
// record deleted.
func (c *Client) dropOut(m *clientOutMsg, err error) {
	c.out.remove(m)
	c.complete(m.cmd, Failed, err)
	if c.cfg.Policy.Retransmit == RetransmitDurable {
		c.persistDelete(clientOutKey(m.id))
	}
}

// dropOnConnLoss is LegacyRetransmitNone: the PUBLISHes sent and not yet
// acknowledged are forgotten; they never complete. PUBRELs and messages never
// sent stay. The other policies keep everything.
func (c *Client) dropOnConnLoss() {
	o := &c.out
	for _, m := range o.order {
		m.counted = false
	}
	o.pending, o.head = o.pending[:0], 0
	if c.cfg.Policy.Retransmit != LegacyRetransmitNone {
		return
	}
	kept := o.order[:0]
	for _, m := range o.order {
		if m.state == coPublished && m.sent {
			o.byID.del(m.id)
			o.ids.Free(m.id)
			m.done = true
			continue
		}
		kept = append(kept, m)
	}
	clear(o.order[len(kept):])
	o.order = kept
}
