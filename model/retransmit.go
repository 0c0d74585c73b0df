package model

import "fmt"

// CheckRetransmit checks invariants 3 and 6 of SPEC-NOTES in both directions
// (client->broker and broker->client). A QoS>0 PUBLISH that reuses the id of
// the same message (in flight, or completed and resent after a crash; a
// completed one only when the history names the message, see resentPast)
// is a resend, and must:
//   - carry DUP=1 [MQTT-3.3.1-1] and the original id, topic, QoS and payload
//     [MQTT-4.4.0-1];
//   - go out only on a new connection, after a CONNACK with Session Present=1
//     [MQTT-4.4.0-1] (the engine holds 3.1.1 to the same rule: it never
//     retries on a timer);
//   - follow the original send order of the messages resent on that
//     connection [MQTT-4.6.0-1];
//   - never follow that message's PUBREL [MQTT-4.3.3-6] (v3.1.1
//     [MQTT-4.3.3-1]), nor its PUBREC or PUBACK unless the sender crashed
//     since [MQTT-4.3.3-4] [MQTT-4.4.0-1].
//
// A PUBLISH with DUP=1 that resends nothing known is allowed only right
// after a session-present CONNACK (a stored copy whose first send was lost
// to a crash) [MQTT-3.3.1-1].
func CheckRetransmit(h *History) []Violation { return runTracked(newIndex(h), &retransmitCheck{}) }

// retransmitCheck is CheckRetransmit's state.
type retransmitCheck struct{ out []Violation }

func (c *retransmitCheck) observe(t *tracker, i int, e *Event) {
	if e.Kind != Sent || e.Packet.Type != PUBLISH || e.Packet.QoS == 0 {
		return
	}
	if r, cited := judgeResend(t, t.sentState(i), &e.Packet); r != "" {
		c.out = append(c.out, NewViolation(Retransmit, i, e.Node, r, cited...))
	}
}

func (c *retransmitCheck) finish(*index) []Violation { return c.out }

// judgeResend returns why the PUBLISH p sent on s breaks a retransmit rule,
// or "", and the steps the judgement rests on.
func judgeResend(t *tracker, s *dirState, p *Packet) (string, []int) {
	f := s.get(p.ID)
	if f == nil || f.kind != PUBLISH {
		if past := t.resentPast(s, p); past != nil {
			f = past
		}
	}
	if f == nil || f.kind != PUBLISH || (!p.Dup && !t.samePublish(f, p)) {
		if p.Dup && !s.sp {
			return fmt.Sprintf("PUBLISH id %d (msg %q) to %s has DUP=1 but resends nothing, outside a session-present reconnect [MQTT-3.3.1-1]", p.ID, p.Msg, s.to),
				[]int{s.spStep}
		}
		return "", nil // a first send; id reuse is PacketIDUnique's business
	}
	return judgeKnownResend(t, s, f, p)
}

// judgeKnownResend checks a resend of the known flight f. The reason is
// only formatted when a rule is broken (most resends are fine); the steps
// cited are the flight's last send and the PUBREL or CONNACK the rule
// broken refers to.
func judgeKnownResend(t *tracker, s *dirState, f *flight, p *Packet) (string, []int) {
	crashes := t.crashes[s.from]
	var why string
	cited := []int{int(f.step), -1}
	switch {
	case f.done && crashes == f.doneAt:
		why = " after it was acknowledged, with no crash since [MQTT-4.4.0-1]"
	case f.pubrelSent:
		why = fmt.Sprintf(" after its PUBREL at step %d [MQTT-4.3.3-6]", f.pubrelStep)
		cited[1] = int(f.pubrelStep)
	case f.pubrec && crashes == f.pubrecAt:
		why = " after its PUBREC; PUBREL was due [MQTT-4.3.3-4] [MQTT-4.4.0-1]"
	case !p.Dup:
		why = " with DUP=0 [MQTT-3.3.1-1]"
	case !t.samePublish(f, p):
		q := f.pub(t.x.h)
		why = fmt.Sprintf(" differs from the original (msg %q topic %q QoS %d) [MQTT-4.4.0-1]", q.Msg, q.Topic, q.QoS)
	case f.conn == s.epoch:
		why = fmt.Sprintf(" on the same connection it was sent on at step %d [MQTT-4.4.0-1]", f.step)
	case !s.sp:
		why = " without a session-present CONNACK on this connection [MQTT-4.4.0-1]"
		cited[1] = s.spStep
	case f.order() < s.lastSeq:
		why = " out of original order: a later message was resent before it [MQTT-4.6.0-1]"
		cited[1] = s.spStep
	default:
		return "", nil
	}
	return fmt.Sprintf("resent PUBLISH id %d (msg %q) to %s", p.ID, p.Msg, s.to) + why, cited
}
