package model

import "fmt"

// CheckQoS2ExactlyOnce checks invariant 2: per subscriber, a message
// delivered at QoS 2 or QoS 0 is delivered at most once (QoS2: the receiver
// MUST NOT deliver a duplicate onward [MQTT-4.3.3-10], across reconnects and
// restarts when its state is durable; QoS0: "at most once delivery", §4.3.1);
// QoS1 may repeat [MQTT-4.3.2-5], and so may a QoS 1 publish delivered at
// QoS 0 (each resend of the publisher is a new message to the broker). And no subscriber is ever delivered a
// message that no client published (no creation): a message counts as
// published when its publisher app got Accepted, or when a client sent it in
// a PUBLISH (an engine may send, or resend from its durable store, a message
// whose Accepted was lost to a crash). Messages are identified by
// their Msg id, unique per history. The lab's broker sends one copy per
// client even with overlapping subscriptions, so a second copy at QoS 2 is a
// duplicate.
func CheckQoS2ExactlyOnce(h *History) []Violation {
	accepted := map[string]bool{}
	pubQoS1 := map[string]bool{} // published at QoS 1: the publisher's resends may repeat it
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == Accepted:
			accepted[e.Msg] = true
			pubQoS1[e.Msg] = pubQoS1[e.Msg] || e.QoS == 1
		case e.Kind == Sent && e.Node != BrokerNode && e.Packet.Type == PUBLISH:
			accepted[e.Packet.Msg] = true
			pubQoS1[e.Packet.Msg] = pubQoS1[e.Packet.Msg] || e.Packet.QoS == 1
		}
	}
	type seen struct {
		step   int
		strict bool // some delivery was at QoS 0 or 2
	}
	first := map[[2]string]*seen{}
	var out []Violation
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != Delivered {
			continue
		}
		if !accepted[e.Msg] {
			out = append(out, Violation{Step: i, Invariant: QoS2ExactlyOnce, Node: e.Node,
				Reason: fmt.Sprintf("delivered msg %q on %q that no client published (created)", e.Msg, e.Topic)})
			continue
		}
		// A QoS 1 publish downgraded to a QoS 0 subscription may arrive
		// twice: the broker treats the publisher's resend as a new message
		// [MQTT-4.3.2-5], and forwards each copy once.
		strict := e.QoS == 2 || (e.QoS == 0 && !pubQoS1[e.Msg])
		k := [2]string{e.Node, e.Msg}
		s, ok := first[k]
		if !ok {
			first[k] = &seen{step: i, strict: strict}
			continue
		}
		if strict || s.strict {
			out = append(out, Violation{Step: i, Invariant: QoS2ExactlyOnce, Node: e.Node,
				Reason: fmt.Sprintf("msg %q delivered again at QoS %d (first at step %d) [MQTT-4.3.3-10]", e.Msg, e.QoS, s.step)})
		}
		s.strict = s.strict || strict
	}
	return out
}
