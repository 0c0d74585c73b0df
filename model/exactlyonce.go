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
// whose Accepted was lost to a crash), or when a client's CONNECT carried it
// as its will. Messages are identified by
// their Msg id, unique per history. The lab's broker sends one copy per
// client even with overlapping subscriptions, so a second copy at QoS 2 is a
// duplicate.
func CheckQoS2ExactlyOnce(h *History) []Violation { return checkQoS2ExactlyOnce(newIndex(h)) }

// Flags of a message in checkQoS2ExactlyOnce's first pass.
const (
	msgPublished uint8 = 1 << iota // accepted, or sent by a client
	msgPubQoS1                     // published at QoS 1: the publisher's resends may repeat it
)

func checkQoS2ExactlyOnce(x *index) []Violation {
	flags := make([]uint8, len(x.msgs))
	for i, k := range x.kinds {
		switch {
		case k.kind == Accepted:
			flags[x.ev[i].msg] |= published(x.h.Events[i].QoS)
		case k.kind == Sent && k.typ == PUBLISH && x.ev[i].node != brokerID:
			flags[x.ev[i].msg] |= published(x.h.Events[i].Packet.QoS)
		case k.kind == Sent && k.typ == CONNECT && x.h.Events[i].Packet.Will && x.ev[i].msg != 0:
			// A will message: the broker publishes it on the client's
			// behalf [MQTT-3.1.2-8]; the CONNECT that carried it published it.
			flags[x.ev[i].msg] |= published(x.h.Events[i].Packet.QoS)
		}
	}
	// first holds, per subscriber and message, 2*step+1 of the first
	// delivery, plus 1 once some delivery was at QoS 0 or 2 (strict).
	first := newPairs[int32](x)
	var out []Violation
	for i, k := range x.kinds {
		if k.kind != Delivered {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if flags[d.msg]&msgPublished == 0 {
			out = append(out, NewViolation(QoS2ExactlyOnce, i, e.Node,
				fmt.Sprintf("delivered msg %q on %q that no client published (created)", e.Msg, e.Topic)))
			continue
		}
		// A QoS 1 publish downgraded to a QoS 0 subscription may arrive
		// twice: the broker treats the publisher's resend as a new message
		// [MQTT-4.3.2-5], and forwards each copy once.
		strict := e.QoS == 2 || (e.QoS == 0 && flags[d.msg]&msgPubQoS1 == 0)
		v := first.get(d.node, d.msg)
		if v == 0 {
			first.set(d.node, d.msg, 2*int32(i)+1+b2i(strict))
			continue
		}
		if strict || v&1 == 0 {
			out = append(out, NewViolation(QoS2ExactlyOnce, i, e.Node,
				fmt.Sprintf("msg %q delivered again at QoS %d (first at step %d) [MQTT-4.3.3-10]", e.Msg, e.QoS, (v-1)/2),
				int((v-1)/2)))
		}
		if strict && v&1 != 0 {
			first.set(d.node, d.msg, v+1)
		}
	}
	releasePairs(x, &first)
	return out
}

// published returns the flags of a message published at qos.
func published(qos uint8) uint8 {
	if qos == 1 {
		return msgPublished | msgPubQoS1
	}
	return msgPublished
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
