package model

import "fmt"

// orderKey is one ordered stream: a subscriber's view of one publisher's
// messages on one topic at one QoS.
type orderKey struct {
	sub, pub, topic int32 // node, node, topic ids
	qos             uint8
}

// orderMark is the latest message of a stream first-delivered so far
// (pointer-free: its message id is x.msgs[msg]).
type orderMark struct {
	index int32 // its position in the publisher's Accepted order
	msg   int32
	step  int32
}

// CheckOrder checks invariant 6's ordering half (SPEC-NOTES §4.6): for
// messages accepted at QoS>=1, each subscriber's FIRST deliveries of one
// publisher's messages on one topic at one QoS follow the order the
// publisher accepted them [MQTT-4.6.0-5] [MQTT-4.6.0-6] (v5: "in the order
// received", "Ordered Topic"; v3.1.1 [MQTT-4.6.0-6] "per topic and QoS").
//
// Precisely: if a subscriber first-delivers message B, it must never later
// first-deliver a message A that the same publisher accepted before B on the
// same topic and QoS. Redeliveries (a second Delivered of a message, the
// "1,2,3,2,3,4" of §4.6 after a resend) are ignored, and so are gaps: a
// message that is never delivered is NoLoss's business. The violation is
// reported at A's late first delivery. Deliveries at QoS 0 are not ordered,
// and neither are messages with no id (an empty payload clearing a retained
// message [MQTT-3.3.1-6]): their copies cannot be told apart, so they take
// no place in a publisher's order; nor are those of a subscriber holding a
// shared subscription that matches the topic: only non-shared
// subscriptions are ordered [MQTT-4.6.0-6], and a member's session that
// ends hands its messages on to another member. A message with a Message
// Expiry Interval that the broker received more than once (the publisher
// resent it) may come late: the broker's copy of its first receipt may
// expire [MQTT-3.3.2-5] and the resend is a new message to it
// [MQTT-4.3.2-5], routed after those received meanwhile (expiringResends).
// A QoS 1 message that the broker received again (the publisher resent
// it) after it first received the later message may come late too: to the
// broker the resend is a new publication [MQTT-4.3.2-5], forwarded after
// the later message was, so a subscriber that subscribed between the two
// first receipts gets its first copy only then. That is the "1,2,3,2,3,4"
// of §4.6 seen by a subscriber that missed 1's first copy (2,1,2): the
// publisher resends in its original order [MQTT-4.6.0-1], the later
// message's resend follows (the broker must receive it after msg's), and
// the final copies stay ordered (lazyReceipts.after).
// A retained copy that a SUBSCRIBE brought (RETAIN=1, see retainedCopies)
// is a new publication of an old message, sent when the subscription is
// made [MQTT-3.3.1-9]: it takes no place in the stream, nor do its
// redeliveries (a RETAIN=1 delivery of a message whose retained copy the
// subscriber already got: at QoS 1 it may come again after a reconnect
// [MQTT-4.3.2-4], and a QoS 2 repeat is QoS2ExactlyOnce's business).
func CheckOrder(h *History) []Violation { return checkOrder(newIndex(h)) }

// orderAcc is what checkOrder knows of an accepted message.
type orderAcc struct {
	ok         bool
	pub, topic int32 // node and topic ids
	qos        uint8
	index      int32
}

// pubTopic is one publisher's topic (node and topic ids).
type pubTopic struct{ pub, topic int32 }

func checkOrder(x *index) []Violation {
	var accepted []orderAcc
	if x.sc != nil {
		accepted = reuse(&x.sc.orderAccs, len(x.msgs))
	} else {
		accepted = make([]orderAcc, len(x.msgs))
	}
	counts := map[pubTopic]int32{}
	for _, a := range x.accs {
		e := &x.h.Events[a.step]
		if d := &x.ev[a.step]; e.QoS >= 1 && d.msg != emptyMsg {
			k := pubTopic{d.node, a.topic}
			counts[k]++
			accepted[d.msg] = orderAcc{ok: true, pub: d.node, topic: a.topic, qos: e.QoS, index: counts[k]}
		}
	}
	var resent map[int32]bool // built at the first late delivery
	var copies lazyRetained   // built at the first RETAIN=1 delivery
	var resends lazyReceipts  // built at the first late delivery not excused above
	firsts := newPairs[bool](x)
	retainedGot := newPairs[bool](x) // subscriber, msg -> a retained copy of it was delivered
	marks := map[orderKey]orderMark{}
	shared := sharedSubscribers(x)
	var out []Violation
	for i, k := range x.kinds {
		if k.kind != Delivered {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if firsts.get(d.node, d.msg) {
			continue
		}
		if e.Retain && (retainedGot.get(d.node, d.msg) || copies.retained(x, d.node, d.msg, int32(i), e.Topic)) {
			retainedGot.set(d.node, d.msg, true)
			continue // a retained copy a SUBSCRIBE brought, or it again: no place in the stream [MQTT-3.3.1-9] [MQTT-4.3.2-4]
		}
		firsts.set(d.node, d.msg, true)
		if e.QoS == 0 {
			// Not ordered, but still the message's first delivery: a later
			// copy (a resend delivered after a subscription upgrade) is a
			// redelivery.
			continue
		}
		a := accepted[d.msg]
		if !a.ok || shared.matches(d.node, x.topics[a.topic]) {
			continue
		}
		k := orderKey{sub: d.node, pub: a.pub, topic: a.topic, qos: a.qos}
		m, seen := marks[k]
		if seen && a.index < m.index && resent == nil {
			resent = expiringResends(x)
		}
		if seen && a.index < m.index && resent[d.msg] {
			continue // its first copy may have expired, a resend's came later [MQTT-3.3.2-5]
		}
		if seen && a.index < m.index && resends.after(x, d.msg, m.msg, int32(i)) {
			continue // the copy of a QoS 1 resend the broker took after the later message's [MQTT-4.3.2-5] [MQTT-4.6.0-1]
		}
		if seen && a.index < m.index {
			out = append(out, NewViolation(Order, i, e.Node,
				fmt.Sprintf("first delivery of msg %q (%s's #%d on %q) after msg %q (#%d, delivered at step %d) [MQTT-4.6.0-5]",
					e.Msg, x.nodes[a.pub], a.index, x.topics[a.topic], x.msgs[m.msg], m.index, m.step),
				int(m.step)))
			continue
		}
		marks[k] = orderMark{index: a.index, msg: d.msg, step: int32(i)}
	}
	releasePairs(x, &firsts)
	releasePairs(x, &retainedGot)
	if x.sc != nil {
		x.sc.orderAccs = accepted
	}
	return out
}

// sharedSubs is the inner filters of the shared subscriptions each node
// was granted, or may hold, at some point.
type sharedSubs map[int32][]string

// sharedSubscribers collects the shared subscriptions of the Subscribed
// events and of the SUBSCRIBEs the broker received: a broker that crashed
// before its SUBACK may have made the subscription (doubt goes to the
// broker, as in the routing checks), and a member's copies from it are
// not ordered [MQTT-4.6.0-6].
func sharedSubscribers(x *index) sharedSubs {
	var out sharedSubs
	for i, k := range x.kinds {
		var node int32
		var filter string
		switch e := &x.h.Events[i]; {
		case k.kind == Subscribed:
			node, filter = x.ev[i].node, e.Filter
		case k.kind == Received && e.Packet.Type == SUBSCRIBE && x.ev[i].node == brokerID:
			node, filter = x.peerOf(i), e.Packet.Filter
		default:
			continue
		}
		if inner, ok := sharedInner(filter); ok {
			if out == nil {
				out = sharedSubs{}
			}
			out[node] = append(out[node], inner)
		}
	}
	return out
}

// matches reports whether node holds a shared subscription matching topic.
func (s sharedSubs) matches(node int32, topic string) bool {
	for _, f := range s[node] {
		if Matches(f, topic) {
			return true
		}
	}
	return false
}

// expiringResends marks the messages the broker received in more than one
// PUBLISH, one of them with a Message Expiry Interval.
func expiringResends(x *index) map[int32]bool {
	seen := map[int32]bool{}
	expiring := map[int32]bool{}
	out := map[int32]bool{}
	for i, k := range x.kinds {
		if k.kind != Received || k.typ != PUBLISH || x.ev[i].node != brokerID {
			continue
		}
		m := x.ev[i].msg
		if m == emptyMsg {
			continue
		}
		expiring[m] = expiring[m] || x.h.Events[i].Packet.Expiry > 0
		if seen[m] && expiring[m] {
			out[m] = true
		}
		seen[m] = true
	}
	return out
}

// lazyRetained is a retainedCopies built on its first use.
type lazyRetained struct {
	built bool
	c     retainedCopies
}

// retained reports whether a RETAIN=1 delivery of msg on topic to node at
// step is a retained copy a SUBSCRIBE brought (retainedCopies.take).
func (l *lazyRetained) retained(x *index, node, msg, step int32, topic string) bool {
	if !l.built {
		l.built, l.c = true, collectRetainedCopies(x)
	}
	return l.c.take(node, msg, step, topic)
}

// lateResends is the steps at which the broker received each message in a
// PUBLISH, in order.
type lateResends map[int32][]int32

// lazyReceipts is a lateResends built on its first use.
type lazyReceipts struct {
	built bool
	r     lateResends
}

// after reports whether the broker received msg in a QoS 1 PUBLISH that
// resent it (an earlier PUBLISH of msg reached the broker before), after
// it first received later and before step, and received later again
// after that resend: the late first delivery at step may be that resend's
// copy, a new publication to the broker [MQTT-4.3.2-5] routed after
// later's, and later's own resend follows it as the publisher's original
// order requires [MQTT-4.6.0-1], so the final copies are in order. A
// resend of msg alone (later never received again) is no excuse.
func (l *lazyReceipts) after(x *index, msg, later, step int32) bool {
	if !l.built {
		l.built, l.r = true, brokerReceipts(x)
	}
	first := l.r[later]
	if len(first) == 0 {
		return false
	}
	for j, r := range l.r[msg] {
		if j > 0 && r > first[0] && r < step && x.h.Events[r].Packet.QoS == 1 && first[len(first)-1] > r {
			return true // and later's resend came after it [MQTT-4.6.0-1]
		}
	}
	return false
}

// brokerReceipts collects the steps at which the broker received each
// named message in a PUBLISH.
func brokerReceipts(x *index) lateResends {
	out := lateResends{}
	for i, k := range x.kinds {
		if k.kind != Received || k.typ != PUBLISH || x.ev[i].node != brokerID {
			continue
		}
		if m := x.ev[i].msg; m != emptyMsg {
			out[m] = append(out[m], int32(i))
		}
	}
	return out
}
