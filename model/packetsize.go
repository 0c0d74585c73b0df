package model

import "fmt"

// A v5 client announces in its CONNECT the largest packet it accepts. The
// broker MUST NOT send it a larger one [MQTT-3.1.2-25]: "Where a Packet is
// too large to send, the Server MUST discard it without sending it and then
// behave as if it had completed sending that Application Message" (MQTT 5.0
// §3.1.2.11.4). A copy too large for its subscriber is therefore not owed
// (NoLoss, the routing checks); a copy that fits still is.
//
// Whether a copy is too large is decided on its encoded size, computed here
// from what the history records: the topic, payload, QoS and Message Expiry
// of the PUBLISH the broker received, and that PUBLISH's own encoded size
// (Packet.Size), from which the bytes of the other properties the broker
// forwards unaltered are read (Payload Format Indicator, Content Type,
// Response Topic, Correlation Data, User Properties [MQTT-3.3.2-4]
// [MQTT-3.3.2-15] [MQTT-3.3.2-17] [MQTT-3.3.2-20]). Where the broker's own
// choices change the size (a Topic Alias in place of the topic name, when
// the client allows aliases [MQTT-3.1.2-26]; which Subscription
// Identifiers go along) the size is a range, and the copy may be dropped
// when its largest permitted encoding is too large. Without aliases and
// Subscription Identifiers the range is one size: exactly the copies the
// spec lets go are excused.

// varintLen is the length in bytes of n as a Variable Byte Integer (MQTT
// 5.0 §1.5.5).
func varintLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16_384:
		return 2
	case n < 2_097_152:
		return 3
	}
	return 4
}

// remainingOf returns the Remaining Length of a packet whose encoded size
// is size (a 1-byte fixed header, the Remaining Length's varint, then that
// many bytes), or -1 if no length fits.
func remainingOf(size int) int {
	for l := 1; l <= 4; l++ {
		if rem := size - 1 - l; rem >= 0 && varintLen(rem) == l {
			return rem
		}
	}
	return -1
}

// appMsg is what every copy of a publication carries: its topic's and
// payload's lengths, whether it has a Message Expiry Interval (5 bytes,
// always forwarded [MQTT-3.3.2-6]), and the bytes of the other properties
// forwarded unaltered.
type appMsg struct {
	topic, payload int
	expiry         bool
	other          int
}

// appOf reads the application message of wire, a PUBLISH as the broker
// received it (as recorded: its Topic may be empty when it used a Topic
// Alias), whose topic is topic. Without a recorded Size the other
// properties count as none.
func appOf(wire *Packet, topic string) appMsg {
	a := appMsg{topic: len(topic), payload: len(wire.Payload), expiry: wire.Expiry != 0}
	if wire.Size == 0 {
		return a
	}
	props := remainingOf(int(wire.Size)) - 2 - len(wire.Topic) - len(wire.Payload)
	if wire.QoS > 0 {
		props -= 2 // the packet id
	}
	if props <= 0 {
		return a // 3.1.1: no properties
	}
	for l := 1; l <= 4; l++ { // props is the Property Length's varint and the properties
		if p := props - l; p >= 0 && varintLen(p) == l {
			a.other = p
			break
		}
	}
	if wire.TopicAlias != 0 {
		a.other -= 3 // the Topic Alias is the connection's, not forwarded [MQTT-3.3.2-7]
	}
	if a.expiry {
		a.other -= 5
	}
	a.other = max(a.other, 0)
	return a
}

// publishSize returns the encoded size of a PUBLISH with a topic name of
// topic bytes, a packet id when qos > 0, and on v5 properties of props bytes.
func publishSize(topic, payload int, qos uint8, v5 bool, props int) int {
	rem := 2 + topic + payload
	if qos > 0 {
		rem += 2
	}
	if v5 {
		rem += varintLen(props) + props
	}
	return 1 + varintLen(rem) + rem
}

// sizeLimit is what a client announced in one CONNECT: the largest packet
// it accepts (0: no limit), whether it allows Topic Aliases, and (over the
// whole history) the most bytes the Subscription Identifiers of its
// subscriptions can add to a copy.
type sizeLimit struct {
	step   int32 // the broker's Received CONNECT
	max    uint32
	alias  bool
	subIDs int
}

// maxCopySize returns the largest encoded size a QoS qos copy of a to a v5
// client under l may have: the full topic name, a Topic Alias if the client
// allows them, and every Subscription Identifier it may carry
// [MQTT-3.3.4-3].
func (l *sizeLimit) maxCopySize(a appMsg, qos uint8) int {
	props := a.other + l.subIDs
	if a.expiry {
		props += 5
	}
	if l.alias {
		props += 3 // a Topic Alias set along with the topic name
	}
	return publishSize(a.topic, a.payload, qos, true, props)
}

// tooLarge reports whether the broker may drop a QoS qos copy of a under
// l for its size: some encoding it may choose exceeds the client's Maximum
// Packet Size [MQTT-3.1.2-25].
func (l *sizeLimit) tooLarge(a appMsg, qos uint8) bool {
	return l.max > 0 && l.maxCopySize(a, qos) > int(l.max)
}

// sizeLimits is every client's announced limits, in the order the broker
// received its CONNECTs, and the bytes its Subscription Identifiers may add.
type sizeLimits struct {
	x      *index
	byNode [][]sizeLimit
	subIDs []int
}

// newSizeLimits reads the broker's Received CONNECTs and SUBSCRIBEs.
func newSizeLimits(x *index) *sizeLimits {
	s := &sizeLimits{x: x, byNode: make([][]sizeLimit, len(x.nodes))}
	ids := map[liveKey]int{} // client, filter -> the largest bytes an id of it takes
	subIDs := make([]int, len(x.nodes))
	for i, k := range x.kinds {
		if k.kind != Received || (k.typ != CONNECT && k.typ != SUBSCRIBE) || x.ev[i].node != brokerID {
			continue
		}
		c, p := x.ev[i].peer, &x.h.Events[i].Packet
		if k.typ == CONNECT {
			s.byNode[c] = append(s.byNode[c], sizeLimit{step: int32(i), max: p.MaxSize, alias: p.TopicAlias > 0})
			continue
		}
		for _, id := range p.SubIDs {
			k := liveKey{c, p.Filter}
			if n := 1 + varintLen(int(id)); n > ids[k] {
				subIDs[c] += n - ids[k]
				ids[k] = n
			}
		}
	}
	for c := range s.byNode {
		for j := range s.byNode[c] {
			s.byNode[c][j].subIDs = subIDs[c]
		}
	}
	s.subIDs = subIDs
	return s
}

// limitOf returns what client c announced in CONNECT p.
func (s *sizeLimits) limitOf(c int32, p *Packet) sizeLimit {
	return sizeLimit{max: p.MaxSize, alias: p.TopicAlias > 0, subIDs: s.subIDs[c]}
}

// excused reports whether the broker may have dropped for its size the
// QoS>=1 copy to client c of m, which it received at step m.ref: the copy
// is too large for the connection the client had then or for a later one.
// A message the broker never received is not excused.
func (s *sizeLimits) excused(m *accepted, c int32) bool {
	if m.ref == m.step {
		return false
	}
	a := appOf(&s.x.orig.Events[m.ref].Packet, s.x.topics[m.tid])
	ls := s.byNode[c]
	from := 0
	for j := range ls {
		if ls[j].step < m.ref {
			from = j
		}
	}
	for j := from; j < len(ls); j++ {
		if ls[j].tooLarge(a, m.qos) {
			return true // [MQTT-3.1.2-25]
		}
	}
	return false
}

// CheckMaxPacketSize checks both directions of the Maximum Packet Size.
// The broker never sends a client a PUBLISH whose encoded size
// (Packet.Size, as the wire carried it) exceeds the Maximum Packet Size the
// client announced in the CONNECT of that connection [MQTT-3.1.2-25]; a
// client never sends the broker a PUBLISH larger than the Maximum Packet
// Size of the broker's CONNACK on that connection [MQTT-3.2.2-15]. Each is
// reported once per connection, at its first such PUBLISH. A client's
// Refused PUBLISH that cites [MQTT-3.2.2-15] must be due: its size
// (Packet.Size) above the limit of the client's last CONNACK (a refusal of
// a PUBLISH that fits withholds a message the spec lets through). A
// PUBLISH or refusal without a recorded size is not judged.
func CheckMaxPacketSize(h *History) []Violation { return checkMaxPacketSize(newIndex(h)) }

// maxSizeEvents are the events checkMaxPacketSize reads.
var maxSizeEvents = eventSet{kinds: kindBits(Refused), sent: typeBits(PUBLISH, CONNECT), received: typeBits(CONNECT, CONNACK)}.codes()

// sizeConn is one side of a connection as checkMaxPacketSize follows it:
// the limit its peer announced, where, and whether it was reported.
type sizeConn struct {
	max      uint32
	connect  int32 // the broker's Received CONNECT; the client's Received CONNACK (-1: none yet)
	reported bool
}

func checkMaxPacketSize(x *index) []Violation {
	conns := make([]sizeConn, len(x.nodes))   // the broker's side, per client
	clients := make([]sizeConn, len(x.nodes)) // each client's side: the broker's limit
	for i := range clients {
		clients[i].connect = -1
	}
	var out []Violation
	for i, k := range x.kinds {
		if !maxSizeEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		p := &e.Packet
		if d.node != brokerID {
			if d.peer != brokerID && k.kind != Refused {
				continue
			}
			if v := judgeClientSize(&clients[d.node], i, k.kind, e); v != "" {
				out = append(out, NewViolation(MaxPacketSize, i, e.Node, v, int(clients[d.node].connect)))
			}
			continue
		}
		if k.kind == Sent && p.Type != PUBLISH || k.kind == Received && p.Type != CONNECT {
			continue
		}
		c := &conns[d.peer]
		if k.kind == Received {
			*c = sizeConn{max: p.MaxSize, connect: int32(i)}
			continue
		}
		if c.max == 0 || p.Size <= c.max || c.reported {
			continue
		}
		c.reported = true
		out = append(out, NewViolation(MaxPacketSize, i, BrokerNode, fmt.Sprintf(
			"a %d-byte PUBLISH of msg %q sent to %s, whose CONNECT announced a Maximum Packet Size of %d [MQTT-3.1.2-25]",
			p.Size, p.Msg, x.nodes[d.peer], c.max), int(c.connect)))
	}
	return out
}

// judgeClientSize follows one client's event e (step i) towards the broker
// and returns why it breaks [MQTT-3.2.2-15], or "". c is the client's
// connection as its events show it: its CONNECT clears the limit, the
// broker's CONNACK sets it.
func judgeClientSize(c *sizeConn, i int, k Kind, e *Event) string {
	p := &e.Packet
	switch {
	case k == Sent && p.Type == CONNECT:
		c.max, c.connect, c.reported = 0, -1, false
	case k == Received && p.Type == CONNACK:
		c.max, c.connect = p.MaxSize, int32(i)
	case k == Sent && p.Type == PUBLISH:
		if c.max == 0 || p.Size <= c.max || c.reported {
			return ""
		}
		c.reported = true
		return fmt.Sprintf("a %d-byte PUBLISH of msg %q sent to the broker, whose CONNACK announced a Maximum Packet Size of %d [MQTT-3.2.2-15]",
			p.Size, p.Msg, c.max)
	case k == Refused && refusedTooLarge(e) && p.Size != 0:
		if c.max != 0 && p.Size > c.max {
			return ""
		}
		limit := "no Maximum Packet Size on this connection"
		if c.max != 0 {
			limit = fmt.Sprintf("a Maximum Packet Size of %d", c.max)
		}
		return fmt.Sprintf("a %d-byte PUBLISH of msg %q refused as too large for the broker, whose CONNACK announced %s: it was due to be sent [MQTT-3.2.2-15]",
			p.Size, e.Msg, limit)
	}
	return ""
}
