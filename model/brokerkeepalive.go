package model

import "fmt"

// CheckBrokerKeepAlive checks that the broker closes a connection for keep-alive
// only when it was idle: a connection whose Keep Alive is K (the CONNECT's,
// or the CONNACK's Server Keep Alive when it sent one [MQTT-3.2.2-21]) may
// be closed for keep-alive once the broker has received no packet on it
// for 1.5 × K [MQTT-3.1.2-22] (3.1.1 [MQTT-3.1.2-24]), never sooner. A
// broker's ConnClosed with Packet.Reason KeepAliveTimeout less than 1.5 × K
// after the last packet it received from that client (or after the
// CONNECT) is a violation; the broker is at fault.
//
// Judged from the broker's own events, counting whole packets only: a
// packet still arriving in pieces counts from its last byte, which is
// never before the broker heard its first, so doubt goes to the broker. A
// connection's clock starts at the broker's ConnOpened with that client; a
// broker crash ends every connection.
func CheckBrokerKeepAlive(h *History) []Violation { return checkBrokerKeepAlive(newIndex(h)) }

// brokerKAEvents are the events checkBrokerKeepAlive reads: the broker's.
var brokerKAEvents = eventSet{
	kinds:    kindBits(ConnOpened, ConnClosed, Crash),
	sent:     typeBits(CONNACK),
	received: ^uint32(0), // every packet restarts the keep-alive
}.codes()

// brokerKAConn is the broker's connection with one client as the check sees it.
type brokerKAConn struct {
	ka       int64 // Keep Alive in nanoseconds (0: none)
	last     int64 // virtual time of the last whole packet received
	lastStep int   // its step, or -1
	connect  int   // step of the CONNECT, or -1
}

func checkBrokerKeepAlive(x *index) []Violation {
	cs := make([]brokerKAConn, len(x.nodes))
	for c := range cs {
		cs[c] = brokerKAConn{lastStep: -1, connect: -1}
	}
	var out []Violation
	for i, k := range x.kinds {
		if !brokerKAEvents.has(k) || x.ev[i].node != brokerID {
			continue
		}
		e := &x.h.Events[i]
		switch e.Kind {
		case Crash:
			for c := range cs {
				cs[c] = brokerKAConn{lastStep: -1, connect: -1}
			}
		case ConnOpened:
			cs[x.peerOf(i)] = brokerKAConn{lastStep: -1, connect: -1}
		case Received:
			c := &cs[x.peerOf(i)]
			c.last, c.lastStep = e.Time, i
			if e.Packet.Type == CONNECT {
				c.ka, c.connect = int64(e.Packet.KeepAlive)*1e9, i
			}
		case Sent:
			if c := &cs[x.peerOf(i)]; e.Packet.KeepAlive > 0 {
				c.ka = int64(e.Packet.KeepAlive) * 1e9 // Server Keep Alive overrides [MQTT-3.2.2-21]
			}
		case ConnClosed:
			c := &cs[x.peerOf(i)]
			if v := judgeBrokerKAClose(c, i, e, x.slack); v != nil {
				out = append(out, *v)
			}
			*c = brokerKAConn{lastStep: -1, connect: -1}
		}
	}
	return out
}

// judgeBrokerKAClose judges the broker's close of c in event i, allowing
// slack ns of timing uncertainty (Options.Slack).
func judgeBrokerKAClose(c *brokerKAConn, i int, e *Event, slack int64) *Violation {
	if e.Packet.Reason != KeepAliveTimeout || c.ka == 0 || c.lastStep < 0 {
		return nil
	}
	idle, limit := e.Time-c.last, c.ka*3/2
	if idle+slack >= limit {
		return nil
	}
	v := NewViolation(BrokerKeepAlive, i, BrokerNode,
		fmt.Sprintf("closed the connection of %s for keep-alive %s after the last packet it received (step %d), before 1.5 × Keep Alive %d s = %s [MQTT-3.1.2-22] [MQTT-3.1.2-24]",
			e.Peer, seconds(idle), c.lastStep, c.ka/1e9, seconds(limit)), c.lastStep, c.connect)
	return &v
}

// seconds formats a virtual duration in nanoseconds as seconds.
func seconds(ns int64) string {
	return fmt.Sprintf("%d.%03d s", ns/1e9, ns%1e9/1e6)
}
