package model

import (
	"fmt"
	"slices"
)

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
// duplicate. A retained message sent with RETAIN=1 because a SUBSCRIBE
// matched its topic is a new delivery of it, not a duplicate of the live
// copy [MQTT-3.3.1-9] (3.1.1 [MQTT-3.3.1-8]): each SUBSCRIBE the broker took
// from the subscriber whose filter matches the topic excuses one RETAIN=1
// copy of a message published with RETAIN=1 after it was published
// (retainedCopies). A QoS 1 retained copy resent (DUP=1 on the packet id
// it was taken on [MQTT-3.3.1-1] [MQTT-4.4.0-1]) and delivered again is
// that copy, as QoS 1 may repeat, not another: it takes no SUBSCRIBE's
// copy (seed 67315335640: a QoS 1 copy's resend used up the copy of a
// later SUBSCRIBE whose QoS 2 copy then looked like a duplicate). Every
// reading of overlapping subscriptions allows these copies: a SUBSCRIBE
// with Retain Handling 0 sends the matching retained messages, whether or
// not the session already held a matching filter [MQTT-3.3.1-9]
// [MQTT-3.8.4-3], and [MQTT-3.3.4-2] bounds the copies of one
// publication, not the retained copies each SUBSCRIBE sends. A message
// with no id (an empty payload, the clearing of a retained message) is not
// judged: its copies cannot be told apart. A subscriber named in
// Options.NoDedup (its receiver does not suppress duplicates,
// Policy.QoS2NoDedup) may deliver a QoS 2 message once per PUBLISH of it
// it received: only a delivery beyond its receipts is a duplicate.
func CheckQoS2ExactlyOnce(h *History) []Violation { return checkQoS2ExactlyOnce(newIndex(h)) }

// Flags of a message in checkQoS2ExactlyOnce's first pass.
const (
	msgPublished uint8 = 1 << iota // accepted, or sent by a client
	msgPubQoS1                     // published at QoS 1: the publisher's resends may repeat it
)

func checkQoS2ExactlyOnce(x *index) []Violation {
	flags := make([]uint8, len(x.msgs))
	copies := retainedCopies{}
	for i, k := range x.kinds {
		e, m := &x.h.Events[i], x.ev[i].msg
		switch {
		case k.kind == Accepted:
			copies.published(m, int32(i), e.Retain)
			flags[m] |= published(e.QoS)
		case k.kind == Sent && k.typ == PUBLISH && x.ev[i].node != brokerID:
			copies.published(m, int32(i), e.Packet.Retain)
			flags[m] |= published(e.Packet.QoS)
		case k.kind == Sent && k.typ == CONNECT && e.Packet.Will && m != 0:
			// A will message: the broker publishes it on the client's
			// behalf [MQTT-3.1.2-8]; the CONNECT that carried it published it.
			copies.published(m, int32(i), e.Packet.Retain)
			flags[m] |= published(e.Packet.QoS)
		case k.kind == Received && k.typ == SUBSCRIBE && x.ev[i].node == brokerID:
			copies.subscribed(x.ev[i].peer, int32(i), e.Packet.Filter)
		}
	}
	// first holds, per subscriber and message, 2*step+1 of the first
	// delivery, plus 1 once some delivery was at QoS 0 or 2 (strict).
	first := newPairs[int32](x)
	retained1 := newPairs[int32](x)  // subscriber, msg -> 1 + the packet id of the last retained copy taken at QoS 1 (0: none)
	var receipts, extra pairs[int32] // NoDedup subscribers: msg's QoS 2 PUBLISH packets received, and deliveries past the first
	noDedup := len(x.noDedup) > 0
	if noDedup {
		receipts, extra = newPairs[int32](x), newPairs[int32](x)
	}
	var out []Violation
	for i, k := range x.kinds {
		if k.kind == Received && k.typ == PUBLISH && noDedup {
			if e, d := &x.h.Events[i], &x.ev[i]; e.Packet.QoS == 2 && slices.Contains(x.noDedup, d.node) {
				receipts.set(d.node, d.msg, receipts.get(d.node, d.msg)+1)
			}
		}
		if k.kind != Delivered {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if flags[d.msg]&msgPublished == 0 {
			out = append(out, NewViolation(QoS2ExactlyOnce, i, e.Node,
				fmt.Sprintf("delivered msg %q on %q that no client published (created)", e.Msg, e.Topic)))
			continue
		}
		if d.msg == emptyMsg {
			continue // no id to tell its copies apart
		}
		if e.Retain && e.QoS == 1 && e.Packet.Dup && e.Packet.ID != 0 && retained1.get(d.node, d.msg) == int32(e.Packet.ID)+1 {
			// The QoS 1 retained copy resent (DUP=1, its packet id
			// [MQTT-3.3.1-1] [MQTT-4.4.0-1]) and delivered again, as QoS 1
			// may be [MQTT-4.3.2-5]: not a new copy, so it takes no
			// SUBSCRIBE's retained copy from another one.
			continue
		}
		if e.Retain && copies.take(d.node, d.msg, int32(i), e.Topic) {
			if e.QoS == 1 {
				retained1.set(d.node, d.msg, int32(e.Packet.ID)+1)
			}
			continue // a retained copy a SUBSCRIBE brought [MQTT-3.3.1-9]
		}
		if e.Retain && e.QoS == 1 && retained1.get(d.node, d.msg) != 0 {
			continue // that retained copy again: it goes at QoS 1, at least once [MQTT-4.3.2-4]
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
		if strict && e.QoS == 2 && noDedup && slices.Contains(x.noDedup, d.node) {
			n := extra.get(d.node, d.msg) + 1
			extra.set(d.node, d.msg, n)
			if n < receipts.get(d.node, d.msg) {
				continue // a PUBLISH it received again, delivered again: no duplicate suppression (Options.NoDedup)
			}
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
	releasePairs(x, &retained1)
	if noDedup {
		releasePairs(x, &receipts)
		releasePairs(x, &extra)
	}
	return out
}

// published returns the flags of a message published at qos.
func published(qos uint8) uint8 {
	if qos == 1 {
		return msgPublished | msgPubQoS1
	}
	return msgPublished
}

// emptyMsg is the msg id of "": a PUBLISH whose payload carries no message
// id (an empty payload clearing a retained message).
const emptyMsg = 0

// collectRetainedCopies gathers the retained publications and the
// SUBSCRIBEs the broker received of x (as checkQoS2ExactlyOnce does).
func collectRetainedCopies(x *index) retainedCopies {
	c := retainedCopies{}
	for i, k := range x.kinds {
		e, m := &x.h.Events[i], x.ev[i].msg
		switch {
		case k.kind == Accepted:
			c.published(m, int32(i), e.Retain)
		case k.kind == Sent && k.typ == PUBLISH && x.ev[i].node != brokerID:
			c.published(m, int32(i), e.Packet.Retain)
		case k.kind == Sent && k.typ == CONNECT && e.Packet.Will && m != 0:
			c.published(m, int32(i), e.Packet.Retain)
		case k.kind == Received && k.typ == SUBSCRIBE && x.ev[i].node == brokerID:
			c.subscribed(x.ev[i].peer, int32(i), e.Packet.Filter)
		}
	}
	return c
}

// retainedCopies bounds the retained copies of a message a subscriber may
// get: each SUBSCRIBE the broker took from it after the message was
// published with RETAIN=1, whose filter matches the copy's topic, may bring
// that message once [MQTT-3.3.1-9] (Retain Handling may forbid it; the
// Retained check judges that, this one only bounds the copies).
type retainedCopies struct {
	pubAt map[int32]int32         // msg published with RETAIN=1 -> the step it was first published
	subs  map[int32][]subscribeAt // subscriber -> the SUBSCRIBEs the broker received from it
	used  map[[2]int32]int        // subscriber, msg -> retained copies excused
}

// subscribeAt is one SUBSCRIBE the broker received: its step and filter
// ("" when not recorded: it may match any topic).
type subscribeAt struct {
	step   int32
	filter string
}

// published records msg published at step, with RETAIN=1 when retain.
func (c *retainedCopies) published(msg, step int32, retain bool) {
	if !retain || msg == emptyMsg {
		return
	}
	if c.pubAt == nil {
		c.pubAt, c.subs, c.used = map[int32]int32{}, map[int32][]subscribeAt{}, map[[2]int32]int{}
	}
	if _, ok := c.pubAt[msg]; !ok {
		c.pubAt[msg] = step
	}
}

// subscribed records a SUBSCRIBE from node at step.
func (c *retainedCopies) subscribed(node, step int32, filter string) {
	if c.subs != nil {
		c.subs[node] = append(c.subs[node], subscribeAt{step, filter})
	}
}

// take reports whether a RETAIN=1 delivery of msg on topic to node at step
// is a retained copy that a SUBSCRIBE between msg's publication and the
// delivery still excuses, and counts it.
func (c *retainedCopies) take(node, msg, step int32, topic string) bool {
	at, ok := c.pubAt[msg]
	if !ok {
		return false
	}
	n := 0
	for _, s := range c.subs[node] {
		if s.step > at && s.step < step && (s.filter == "" || Matches(s.filter, topic)) {
			n++
		}
	}
	k := [2]int32{node, msg}
	if c.used[k] >= n {
		return false
	}
	c.used[k]++
	return true
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
