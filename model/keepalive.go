package model

import "fmt"

// kaConn is a client's connection as checkClientKeepAlive sees it.
type kaConn struct {
	active  bool
	ka      int64 // the keep-alive interval in effect, ns (0: off)
	last    int64 // time of the client's last send (or of its CONNACK)
	lastAt  int   // its step
	pingOut bool  // a PINGREQ awaits its PINGRESP
}

// keepAliveEvents are the events checkClientKeepAlive reads.
var keepAliveEvents = eventSet{
	kinds:    kindBits(Connected, ConnClosed, Crash),
	allSent:  true,
	received: typeBits(CONNACK, PINGRESP),
}.codes()

// CheckClientKeepAlive checks that a client keeps its connection alive:
// while connected it never lets more than the Keep Alive interval pass
// without sending a packet [MQTT-3.1.2-23] (v5 [MQTT-3.1.2-20]), the
// interval being its CONNECT's Keep Alive or, in v5, the CONNACK's Server
// Keep Alive when present [MQTT-3.2.2-21]. The interval is measured from
// the client's last send (or its CONNACK, the earliest a keep-alive timer
// can start) to its next send, or to the end of the connection as the
// client saw it, with Options.Slack of tolerance for the recorder's timing
// uncertainty. A client waiting for the PINGRESP of its PINGREQ is
// excused: it closes the connection when none comes [MQTT-3.1.2-24].
func CheckClientKeepAlive(h *History) []Violation { return checkClientKeepAlive(newIndex(h)) }

func checkClientKeepAlive(x *index) []Violation {
	conns := make([]kaConn, len(x.nodes))
	var out []Violation
	// judge reports a silence ending at step i: a send of packet type typ,
	// or (typ 0) the connection's end. The reason is formatted only then.
	judge := func(i int, c *kaConn, now int64, node string, typ uint8) {
		if !c.active || c.ka == 0 || c.pingOut || now-c.last <= c.ka+x.slack {
			return
		}
		what := "connection ended"
		if typ != 0 {
			what = "sent " + packetName(typ)
		}
		out = append(out, NewViolation(ClientKeepAlive, i, node, fmt.Sprintf(
			"%s %dms after its last send at step %d: longer than its Keep Alive of %ds [MQTT-3.1.2-23]",
			what, (now-c.last)/1e6, c.lastAt, c.ka/1e9), c.lastAt))
	}
	for i, k := range x.kinds {
		if !keepAliveEvents.has(k) {
			continue
		}
		d := &x.ev[i]
		if d.node == brokerID || d.node == emptyID {
			continue
		}
		e := &x.h.Events[i]
		c := &conns[d.node]
		switch e.Kind {
		case Sent:
			if e.Packet.Type == CONNECT {
				*c = kaConn{active: true, ka: int64(e.Packet.KeepAlive) * 1e9, last: e.Time, lastAt: i}
				continue
			}
			judge(i, c, e.Time, e.Node, e.Packet.Type)
			c.last, c.lastAt = e.Time, i
			if e.Packet.Type == PINGREQ {
				c.pingOut = true
			}
		case Received:
			if e.Packet.Type == PINGRESP {
				c.pingOut = false
			} else if e.Packet.KeepAlive > 0 {
				c.ka = int64(e.Packet.KeepAlive) * 1e9 // [MQTT-3.2.2-21]
			}
		case Connected:
			c.last, c.lastAt = e.Time, i
		case ConnClosed:
			judge(i, c, e.Time, e.Node, 0)
			c.active = false
		case Crash:
			c.active = false
		}
	}
	return out
}
