package model

import "fmt"

// maxReceiveMax is the Receive Maximum when the CONNACK carries none.
const maxReceiveMax = 65535

// quotaConn is a client's current connection as CheckSendQuota sees it:
// the client's own sends (out) and the broker's sends it received (in).
type quotaConn struct {
	v5        bool
	limit     int   // the broker's Receive Maximum (CONNACK)
	unacked   idSet // ids of the client's unacked PUBLISHes
	n         int   // how many
	inLimit   int   // the client's Receive Maximum (its CONNECT); 0 means absent
	inUnacked idSet // ids of the broker's PUBLISHes the client has not acked
	inN       int   // how many
	window    int   // the broker's declared in-flight window (Options.Limits.Inflight; 0: none)
}

// CheckSendQuota checks invariant 7 for v5 connections, in both directions.
//
// Client to broker: the QoS>0 PUBLISHes a client sent on a connection and
// has not seen acknowledged (PUBACK, PUBCOMP, PUBREC >= 0x80) never exceed
// the broker's Receive Maximum from that connection's CONNACK
// (Connected.ReceiveMax; 0 means absent, 65535) [MQTT-3.3.4-7]
// [MQTT-4.9.0-2].
//
// Broker to client: the QoS>0 PUBLISHes a client received on a connection
// and has not acknowledged (sent PUBACK, PUBCOMP, PUBREC >= 0x80) never
// exceed the client's Receive Maximum from that connection's CONNECT (the
// ReceiveMax of the client's Sent CONNECT; 0 means absent, 65535)
// [MQTT-3.3.4-9] [MQTT-4.9.0-2]. This is judged from the client's events: on
// a FIFO connection every PUBLISH the client holds unacked when it receives
// another was sent before it and its ack not yet sent, so it was unacked at
// the broker when the broker sent the other; the count the client sees is
// never above the broker's. The broker is the node at fault.
//
// A broker that declares an in-flight window (BrokerLimits.Inflight) is
// held to it the same way on every connection, 3.1.1 ones too: no more
// QoS>0 PUBLISHes a client has not acknowledged than the window, nor than
// a v5 client's Receive Maximum when that is smaller.
//
// The quota is per connection: PUBLISHes sent on an earlier connection count
// only once resent on this one [MQTT-4.9.0-1]; a new connection starts at
// ConnOpened, ConnClosed, a crash or the client's CONNECT.
func CheckSendQuota(h *History) []Violation { return checkSendQuota(newIndex(h)) }

// quotaEvents are the events checkSendQuota reads.
var quotaEvents = eventSet{
	kinds:    kindBits(ConnOpened, ConnClosed, Crash, Connected),
	sent:     typeBits(CONNECT, PUBLISH, PUBACK, PUBCOMP, PUBREC),
	received: typeBits(PUBACK, PUBCOMP, PUBREC, PUBLISH),
}.codes()

func checkSendQuota(x *index) []Violation {
	conns := make([]quotaConn, len(x.nodes)) // per client: its current connection
	for i := range conns {
		conns[i].window = x.limits.Inflight
	}
	reset := func(c *quotaConn) {
		c.unacked.reset()
		c.inUnacked.reset()
		*c = quotaConn{unacked: c.unacked, inUnacked: c.inUnacked, window: c.window}
	}
	var out []Violation
	add := func(v *Violation) {
		if v != nil {
			out = append(out, *v)
		}
	}
	for i, k := range x.kinds {
		if !quotaEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if d.node == brokerID {
			continue
		}
		c := &conns[d.node]
		switch e.Kind {
		case ConnOpened, ConnClosed, Crash:
			reset(c)
		case Connected:
			add(quotaConnected(c, i, e))
			add(quotaInConnected(c, i, e))
		case Sent:
			add(quotaSentEvent(c, i, e, reset))
		case Received:
			add(quotaReceivedEvent(c, i, e))
		}
	}
	return out
}

// quotaSentEvent handles a packet the client sent: its CONNECT starts a new
// connection, its PUBLISH uses the broker's quota, its acks return the
// client's.
func quotaSentEvent(c *quotaConn, i int, e *Event, reset func(*quotaConn)) *Violation {
	switch e.Packet.Type {
	case CONNECT:
		reset(c)
		c.inLimit = int(e.ReceiveMax)
		return nil
	case PUBLISH:
		return quotaSent(c, i, e)
	}
	quotaAck(&c.inUnacked, &c.inN, &e.Packet)
	return nil
}

// quotaReceivedEvent handles a packet the client received: a PUBLISH uses
// the client's quota, an ack returns the broker's.
func quotaReceivedEvent(c *quotaConn, i int, e *Event) *Violation {
	if e.Packet.Type == PUBLISH {
		return quotaInPublish(c, i, e)
	}
	quotaAck(&c.unacked, &c.n, &e.Packet)
	return nil
}

// quotaConnected learns the connection's version and Receive Maximum, and
// judges the PUBLISHes already sent on it (resends may precede Connected).
func quotaConnected(c *quotaConn, i int, e *Event) *Violation {
	c.v5, c.limit = e.Version == 5, int(e.ReceiveMax)
	if c.limit == 0 {
		c.limit = maxReceiveMax
	}
	if !c.v5 || c.n <= c.limit {
		return nil
	}
	v := NewViolation(SendQuota, i, e.Node,
		fmt.Sprintf("%d unacknowledged QoS>0 PUBLISHes sent before CONNACK on this connection, above the broker's Receive Maximum %d [MQTT-3.3.4-7] [MQTT-4.9.0-2]",
			c.n, c.limit))
	return &v
}

// quotaSent counts a QoS>0 PUBLISH and reports the quota overrun it causes.
func quotaSent(c *quotaConn, i int, e *Event) *Violation {
	p := &e.Packet
	if p.QoS == 0 || !c.unacked.add(p.ID) {
		return nil
	}
	c.n++
	if !c.v5 || c.n <= c.limit {
		return nil
	}
	v := NewViolation(SendQuota, i, e.Node,
		fmt.Sprintf("PUBLISH id %d makes %d unacknowledged QoS>0 PUBLISHes on this connection, above the broker's Receive Maximum %d [MQTT-3.3.4-7] [MQTT-4.9.0-2]",
			p.ID, c.n, c.limit))
	return &v
}

// inLimitOf is the client's Receive Maximum on the connection: 65535 when
// its CONNECT carried none.
func (c *quotaConn) inLimitOf() int {
	if c.inLimit == 0 {
		return maxReceiveMax
	}
	return c.inLimit
}

// inCap is the most QoS>0 PUBLISHes the broker may have unacknowledged on
// the connection, and what sets it: a v5 client's Receive Maximum, or the
// broker's declared in-flight window when smaller (0: nothing to judge, a
// 3.1.1 connection of a broker that declares none).
func (c *quotaConn) inCap() (int, string) {
	limit, what := 0, ""
	if c.v5 {
		limit, what = c.inLimitOf(), "its Receive Maximum %d [MQTT-3.3.4-9] [MQTT-4.9.0-2]"
	}
	if c.window > 0 && (limit == 0 || c.window < limit) {
		limit, what = c.window, "the broker's declared in-flight window %d (-promise inflight)"
	}
	return limit, what
}

// quotaInConnected judges the broker's PUBLISHes the client received before
// it saw itself connected (a CONNACK and PUBLISHes decoded in one read).
func quotaInConnected(c *quotaConn, i int, e *Event) *Violation {
	limit, what := c.inCap()
	if limit == 0 || c.inN <= limit {
		return nil
	}
	v := NewViolation(SendQuota, i, BrokerNode,
		fmt.Sprintf("%s received %d unacknowledged QoS>0 PUBLISHes with its CONNACK, above "+what,
			e.Node, c.inN, limit))
	return &v
}

// quotaInPublish counts a QoS>0 PUBLISH the broker sent the client and
// reports the broker's quota overrun it shows.
func quotaInPublish(c *quotaConn, i int, e *Event) *Violation {
	p := &e.Packet
	if p.QoS == 0 || !c.inUnacked.add(p.ID) {
		return nil
	}
	c.inN++
	limit, what := c.inCap()
	if limit == 0 || c.inN <= limit {
		return nil
	}
	v := NewViolation(SendQuota, i, BrokerNode,
		fmt.Sprintf("PUBLISH id %d to %s makes %d QoS>0 PUBLISHes it has not acknowledged on this connection, above "+what,
			p.ID, e.Node, c.inN, limit))
	return &v
}

// quotaAck returns quota for the acks that end a PUBLISH flow: PUBACK,
// PUBCOMP, or PUBREC >= 0x80 (§4.9: each adds one to the send quota).
func quotaAck(unacked *idSet, n *int, p *Packet) {
	switch {
	case p.Type == PUBACK, p.Type == PUBCOMP, p.Type == PUBREC && p.Reason >= reasonFailure:
		if unacked.del(p.ID) {
			*n--
		}
	}
}
