package model

import (
	"fmt"
	"strings"
)

// CheckPacketIDUnique checks invariant 5: a new PUBLISH (QoS>0, DUP=0),
// SUBSCRIBE or UNSUBSCRIBE must carry a non-zero id that is not in flight in
// the same direction (sender->peer) [MQTT-2.2.1-3] (client) [MQTT-2.2.1-4]
// (server); v3.1.1 [MQTT-2.3.1-1] [MQTT-2.3.1-2] [MQTT-2.3.1-4]. The two
// directions are independent. An id is in flight from its send until the
// sender receives PUBACK, PUBCOMP, PUBREC >= 0x80, SUBACK or UNSUBACK; a
// CONNACK with Session Present=0 frees all of its sender's ids; SUBSCRIBE and
// UNSUBSCRIBE ids are freed when the connection ends. A PUBLISH that repeats
// the in-flight message on its id is a resend, judged by CheckRetransmit.
// A Refused event whose codec refusal cites the packet-id rule (the engine
// gave the packet id 0 and its own codec would not write it) is a violation
// too: the bug a codec without that check puts on the wire.
func CheckPacketIDUnique(h *History) []Violation { return runTracked(newIndex(h), &packetIDCheck{}) }

// packetIDCheck is CheckPacketIDUnique's state.
type packetIDCheck struct{ out []Violation }

func (c *packetIDCheck) observe(t *tracker, i int, e *Event) {
	switch e.Kind {
	case Sent:
		if r, since := judgeNewID(t, i, e); r != "" {
			c.out = append(c.out, NewViolation(PacketIDUnique, i, e.Node, r, since))
		}
	case Refused:
		if r := judgeRefusedID(e); r != "" {
			c.out = append(c.out, NewViolation(PacketIDUnique, i, e.Node, r, -1))
		}
	}
}

// idRules are the rules a codec cites when it refuses a PUBLISH (QoS>0),
// SUBSCRIBE or UNSUBSCRIBE for its packet identifier 0: v5 [MQTT-2.2.1-3],
// v3.1.1 [MQTT-2.3.1-1].
var idRules = []string{"[MQTT-2.2.1-3]", "[MQTT-2.3.1-1]"}

// judgeRefusedID returns why the Refused event e breaks the packet-id rule,
// or "" when its refusal is for something else.
func judgeRefusedID(e *Event) string {
	p := &e.Packet
	switch {
	case p.Type == PUBLISH && p.QoS > 0:
	case p.Type == SUBSCRIBE || p.Type == UNSUBSCRIBE:
	default:
		return ""
	}
	for _, r := range idRules {
		if strings.HasPrefix(e.Reason, r) {
			what := packetName(p.Type)
			if p.Type == PUBLISH {
				what = fmt.Sprintf("PUBLISH of msg %q", e.Msg)
			} else if e.Filter != "" {
				what += " of " + e.Filter
			}
			return fmt.Sprintf("new %s to %s never sent: the engine gave it a packet id its own codec refused (%s) %s",
				what, e.Peer, strings.TrimSpace(strings.TrimPrefix(e.Reason, r)), r)
		}
	}
	return ""
}

func (c *packetIDCheck) finish(*index) []Violation { return c.out }

// judgeNewID returns why the packet sent in e reuses an id, or "", and the
// step of the send that holds the id (-1 if none).
func judgeNewID(t *tracker, i int, e *Event) (string, int) {
	p := &e.Packet
	switch {
	case p.Type == PUBLISH && p.QoS > 0 && !p.Dup:
	case p.Type == SUBSCRIBE || p.Type == UNSUBSCRIBE:
	default:
		return "", -1
	}
	rule := "[MQTT-2.2.1-3]"
	if e.Node == BrokerNode {
		rule = "[MQTT-2.2.1-4]"
	}
	if p.ID == 0 {
		return fmt.Sprintf("%s to %s with packet id 0 %s", packetName(p.Type), e.Peer, rule), -1
	}
	f := t.sentState(i).get(p.ID)
	if f == nil || (p.Type == PUBLISH && f.kind == PUBLISH && t.samePublish(f, p)) {
		return "", -1
	}
	was := packetName(f.kind)
	if f.kind == PUBLISH {
		was = fmt.Sprintf("PUBLISH of msg %q", f.pub(t.x.h).Msg)
	}
	return fmt.Sprintf("new %s to %s reuses id %d, still in flight since step %d (%s) %s",
		packetName(p.Type), e.Peer, p.ID, f.step, was, rule), int(f.step)
}
