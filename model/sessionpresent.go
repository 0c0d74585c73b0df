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
//     [MQTT-3.1.2-4];
//   - sessions are whole or gone: once the broker answered a client Session
//     Present=0 (it discarded the old session, or had none), no copy the old
//     session held comes back, on any later connection and across any
//     broker crash: the broker sends the client no PUBLISH (RETAIN=0) of a
//     message it last received before that CONNACK [MQTT-3.1.2-4]
//     [MQTT-3.2.2-3] (a half-deleted session a restart restored would;
//     the copies a shared subscription hands on from another member, and
//     retained copies a SUBACK brings, are not the old session's: a client
//     that joined a group is not judged, nor is a RETAIN=1 PUBLISH).
func CheckSessionPresent(h *History) []Violation {
	x := newIndex(h)
	return runTracked(x, newSessionPresentCheck(x))
}

// sessionPresentCheck is CheckSessionPresent's state.
type sessionPresentCheck struct {
	mustClose []int // client id -> step of the SP=1 CONNACK it must refuse, or -1
	out       []Violation
	// discarded is, per client, the step of the broker's last accepting
	// CONNACK with Session Present=0 + 1 (0: none); grouped marks the
	// clients that asked for a shared subscription; recv lists each
	// message's Received PUBLISH steps at the broker, in order (whole).
	discarded []int32
	grouped   []bool
	recv      map[int32][]int32
}

func newSessionPresentCheck(x *index) *sessionPresentCheck {
	c := &sessionPresentCheck{mustClose: make([]int, len(x.nodes)), discarded: make([]int32, len(x.nodes)),
		grouped: make([]bool, len(x.nodes)), recv: map[int32][]int32{}}
	for id := range c.mustClose {
		c.mustClose[id] = -1
	}
	for i, k := range x.kinds {
		if k.kind == Sent && k.typ == SUBSCRIBE && x.ev[i].node != brokerID && isSharedFilter(x.h.Events[i].Packet.Filter) {
			c.grouped[x.ev[i].node] = true
		}
		if k.kind == Received && k.typ == PUBLISH && x.ev[i].node == brokerID && x.ev[i].msg != 0 {
			c.recv[x.ev[i].msg] = append(c.recv[x.ev[i].msg], int32(i))
		}
	}
	return c
}

// isSharedFilter reports whether f is a shared subscription's filter.
func isSharedFilter(f string) bool { return len(f) > 7 && f[:7] == "$share/" }

// judgeWhole judges a PUBLISH the broker sent at step i: a copy of a
// message it last received before it discarded the client's session must
// not come back (the session is whole or gone).
func (c *sessionPresentCheck) judgeWhole(x *index, i int, e *Event) {
	peer, msg := x.ev[i].peer, x.ev[i].msg
	d := c.discarded[peer]
	if d == 0 || e.Packet.Retain || msg == 0 || c.grouped[peer] {
		return
	}
	rs := c.recv[msg]
	last := int32(-1)
	for _, r := range rs {
		if r < int32(i) {
			last = r
		}
	}
	if last < 0 || last >= d-1 {
		return
	}
	c.add(i, BrokerNode, fmt.Sprintf("PUBLISH of msg %q to %s, received at step %d, before Session Present=0 at step %d discarded the session that held it: a session is whole or gone, across any crash [MQTT-3.1.2-4] [MQTT-3.2.2-3]",
		e.Packet.Msg, e.Peer, last, d-1), int(last), int(d-1))
}

func (c *sessionPresentCheck) add(i int, node, reason string, cited ...int) {
	c.out = append(c.out, NewViolation(SessionPresent, i, node, reason, cited...))
}

func (c *sessionPresentCheck) observe(t *tracker, i int, e *Event) {
	node := t.x.ev[i].node
	switch e.Kind {
	case Connected:
		if e.CleanStart && e.SessionPresent {
			c.add(i, BrokerNode, fmt.Sprintf("CONNACK to %s has Session Present=1 for Clean Start=1 [MQTT-3.2.2-2]", e.Node))
		}
		if e.SessionPresent && !e.HadState {
			c.mustClose[node] = i
		}
	case Sent:
		if node == brokerID {
			switch {
			case e.Packet.Type == CONNACK && !e.Packet.Sessions && e.Packet.Reason < 0x80:
				c.discarded[t.x.ev[i].peer] = int32(i + 1)
			case e.Packet.Type == PUBLISH:
				c.judgeWhole(t.x, i, e)
			}
		}
		if e.Packet.Type == CONNECT {
			c.mustClose[node] = -1 // a new connection: the old one was closed
		}
		if at := c.mustClose[node]; at >= 0 && e.Packet.Type != DISCONNECT {
			c.add(i, e.Node, fmt.Sprintf("sent %s after Session Present=1 at step %d without holding a session; it must close [MQTT-3.2.2-4]",
				packetName(e.Packet.Type), at), at)
			c.mustClose[node] = -1
		}
		s := t.sentState(i)
		if r := judgeDiscarded(s, &e.Packet); r != "" {
			c.add(i, e.Node, r, s.spStep)
		}
	case ConnClosed, ConnOpened, Crash:
		c.mustClose[node] = -1
	}
}

func (c *sessionPresentCheck) finish(x *index) []Violation {
	if !x.connClosed {
		return c.out // the history does not record connection ends
	}
	for _, id := range x.byName() {
		if at := c.mustClose[id]; at >= 0 {
			c.add(at, x.nodes[id], "kept the connection open after Session Present=1 without holding a session [MQTT-3.2.2-4]")
		}
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
	case p.Type == PUBREL && !l.pubrecs.has(p.ID):
		return fmt.Sprintf("PUBREL id %d to %s after Session Present=0 at step %d with no PUBREC for it on this connection [MQTT-3.2.2-5]",
			p.ID, l.to, l.spStep)
	}
	return ""
}
