package model

import "fmt"

// CheckSessionPresent checks invariant 8 (Session Present handling):
//   - the broker answers Clean Start=1 with Session Present=0 [MQTT-3.2.2-2]
//     (v3.1.1 [MQTT-3.2.2-1]);
//   - a client that gets Session Present=1 while it holds no session
//     (Connected.HadState=false) closes the connection: it sends nothing
//     but DISCONNECT before the connection ends [MQTT-3.2.2-4] (a connection
//     still open at the end of the history counts only when the history
//     records ConnClosed events);
//   - after a CONNACK with Session Present=0 neither side resends anything
//     of the old session on that connection: no PUBLISH with DUP=1 and no
//     PUBREL except in answer to a PUBREC received on it [MQTT-3.2.2-5]
//     [MQTT-3.1.2-4].
func CheckSessionPresent(h *History) []Violation {
	return runTracked(h, &sessionPresentCheck{mustClose: map[string]int{}})
}

// sessionPresentCheck is CheckSessionPresent's state.
type sessionPresentCheck struct {
	mustClose map[string]int // client -> step of the SP=1 CONNACK it must refuse
	out       []Violation
}

func (c *sessionPresentCheck) add(i int, node, reason string) {
	c.out = append(c.out, Violation{Step: i, Invariant: SessionPresent, Node: node, Reason: reason})
}

func (c *sessionPresentCheck) observe(t *tracker, i int, e *Event) {
	switch e.Kind {
	case Connected:
		if e.CleanStart && e.SessionPresent {
			c.add(i, BrokerNode, fmt.Sprintf("CONNACK to %s has Session Present=1 for Clean Start=1 [MQTT-3.2.2-2]", e.Node))
		}
		if e.SessionPresent && !e.HadState {
			c.mustClose[e.Node] = i
		}
	case Sent:
		if e.Packet.Type == CONNECT {
			delete(c.mustClose, e.Node) // a new connection: the old one was closed
		}
		if at, ok := c.mustClose[e.Node]; ok && e.Packet.Type != DISCONNECT {
			c.add(i, e.Node, fmt.Sprintf("sent %s after Session Present=1 at step %d without holding a session; it must close [MQTT-3.2.2-4]",
				packetName(e.Packet.Type), at))
			delete(c.mustClose, e.Node)
		}
		if r := judgeDiscarded(t.sentState(e), &e.Packet); r != "" {
			c.add(i, e.Node, r)
		}
	case ConnClosed, ConnOpened, Crash:
		delete(c.mustClose, e.Node)
	}
}

func (c *sessionPresentCheck) finish(h *History) []Violation {
	if !hasKind(h, ConnClosed) {
		return c.out // the history does not record connection ends
	}
	for _, node := range sortedKeys(c.mustClose) {
		c.add(c.mustClose[node], node, "kept the connection open after Session Present=1 without holding a session [MQTT-3.2.2-4]")
	}
	return c.out
}

// judgeDiscarded returns why p, sent on l, resends old-session state after a CONNACK
// with Session Present=0 on this connection, or "".
func judgeDiscarded(l *dirState, p *Packet) string {
	if !l.connacked || l.sp {
		return ""
	}
	switch {
	case p.Type == PUBLISH && p.Dup:
		return fmt.Sprintf("PUBLISH id %d (msg %q) to %s with DUP=1 after Session Present=0 at step %d: the old session must be discarded [MQTT-3.2.2-5]",
			p.ID, p.Msg, l.to, l.spStep)
	case p.Type == PUBREL && !l.pubrecs[p.ID]:
		return fmt.Sprintf("PUBREL id %d to %s after Session Present=0 at step %d with no PUBREC for it on this connection [MQTT-3.2.2-5]",
			p.ID, l.to, l.spStep)
	}
	return ""
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}
