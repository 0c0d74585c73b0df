package model

import "fmt"

// maxReceiveMax is the Receive Maximum when the CONNACK carries none.
const maxReceiveMax = 65535

// quotaConn is a client's current connection as CheckSendQuota sees it.
type quotaConn struct {
	v5      bool
	limit   int
	unacked idSet // ids of the unacked PUBLISHes
	n       int   // how many
}

// CheckSendQuota checks invariant 7 for v5 clients: the QoS>0 PUBLISHes a
// client sent on a connection and has not seen acknowledged (PUBACK,
// PUBCOMP, PUBREC >= 0x80) never exceed the broker's Receive Maximum from
// that connection's CONNACK (Connected.ReceiveMax; 0 means absent, 65535)
// [MQTT-3.3.4-7] [MQTT-4.9.0-2]. The quota is per connection: PUBLISHes sent
// on an earlier connection count only once resent on this one
// [MQTT-4.9.0-1]; a new connection starts at ConnOpened, ConnClosed, a crash
// or the client's CONNECT. The broker->client direction is not checked: histories do
// not carry the client's Receive Maximum.
func CheckSendQuota(h *History) []Violation { return checkSendQuota(newIndex(h)) }

// quotaEvents are the events checkSendQuota reads.
var quotaEvents = eventSet{
	kinds:    kindBits(ConnOpened, ConnClosed, Crash, Connected),
	sent:     typeBits(CONNECT, PUBLISH),
	received: typeBits(PUBACK, PUBCOMP, PUBREC),
}.codes()

func checkSendQuota(x *index) []Violation {
	conns := make([]quotaConn, len(x.nodes)) // per client: its current connection
	reset := func(c *quotaConn) {
		c.unacked.reset()
		*c = quotaConn{unacked: c.unacked}
	}
	get := func(node int32) *quotaConn { return &conns[node] }
	var out []Violation
	for i, k := range x.kinds {
		if !quotaEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if d.node == brokerID {
			continue
		}
		switch e.Kind {
		case ConnOpened, ConnClosed, Crash:
			reset(&conns[d.node])
		case Connected:
			if v := quotaConnected(get(d.node), i, e); v != nil {
				out = append(out, *v)
			}
		case Sent:
			if e.Packet.Type == CONNECT {
				reset(&conns[d.node])
			} else if v := quotaSent(get(d.node), i, e); v != nil {
				out = append(out, *v)
			}
		case Received:
			quotaReceived(get(d.node), &e.Packet)
		}
	}
	return out
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
	return &Violation{Step: i, Invariant: SendQuota, Node: e.Node,
		Reason: fmt.Sprintf("%d unacknowledged QoS>0 PUBLISHes sent before CONNACK on this connection, above the broker's Receive Maximum %d [MQTT-3.3.4-7] [MQTT-4.9.0-2]",
			c.n, c.limit)}
}

// quotaSent counts a QoS>0 PUBLISH and reports the quota overrun it causes.
func quotaSent(c *quotaConn, i int, e *Event) *Violation {
	p := &e.Packet
	if p.Type != PUBLISH || p.QoS == 0 || !c.unacked.add(p.ID) {
		return nil
	}
	c.n++
	if !c.v5 || c.n <= c.limit {
		return nil
	}
	return &Violation{Step: i, Invariant: SendQuota, Node: e.Node,
		Reason: fmt.Sprintf("PUBLISH id %d makes %d unacknowledged QoS>0 PUBLISHes on this connection, above the broker's Receive Maximum %d [MQTT-3.3.4-7] [MQTT-4.9.0-2]",
			p.ID, c.n, c.limit)}
}

// quotaReceived returns quota for the acks that end a PUBLISH flow.
func quotaReceived(c *quotaConn, p *Packet) {
	switch {
	case p.Type == PUBACK, p.Type == PUBCOMP, p.Type == PUBREC && p.Reason >= reasonFailure:
		if c.unacked.del(p.ID) {
			c.n--
		}
	}
}
