package model

import "testing"

// rb builds routing histories: hb with a clock (seconds) stamped on each
// event it adds.
type rb struct {
	hb
	now   int64
	fwdID uint16 // the packet ids fwd has given out
}

// nextFwdID is a fresh packet id for a copy the broker forwards: a second
// copy on the id of one still in flight would be its resend.
func (b *rb) nextFwdID() uint16 { b.fwdID++; return 6 + b.fwdID }

func newRB() *rb { return &rb{} }

func (b *rb) at(sec int64) *rb { b.now = sec * 1e9; return b }

func (b *rb) add(e Event) *rb {
	e.Time = b.now
	b.h.Add(e)
	return b
}

func (b *rb) xfer(from, to string, p Packet) *rb {
	b.add(Event{Kind: Sent, Node: from, Peer: to, Packet: p})
	return b.add(Event{Kind: Received, Node: to, Peer: from, Packet: p})
}

// conn connects node (v5 unless v3) with Session Present sp.
func (b *rb) conn(node string, sp bool) *rb { return b.connMax(node, sp, 0) }

// connMax is conn with a CONNECT announcing Maximum Packet Size max.
func (b *rb) connMax(node string, sp bool, max uint32) *rb {
	b.add(Event{Kind: ConnOpened, Node: node, Peer: BrokerNode}).add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: node})
	b.xfer(node, BrokerNode, Packet{Type: CONNECT, MaxSize: max})
	b.xfer(BrokerNode, node, Packet{Type: CONNACK, Sessions: sp})
	return b.add(Event{Kind: Connected, Node: node, Peer: BrokerNode, SessionPresent: sp, HadState: sp, Version: 5})
}

// sub subscribes node to filter: requested QoS q, granted g, options opts.
func (b *rb) sub(node string, id uint16, filter string, q, g, opts uint8) *rb {
	b.xfer(node, BrokerNode, Packet{Type: SUBSCRIBE, ID: id, Filter: filter, QoS: q, Opts: opts})
	return b.xfer(BrokerNode, node, Packet{Type: SUBACK, ID: id, Reason: g})
}

func (b *rb) unsub(node string, id uint16, filter string) *rb {
	b.xfer(node, BrokerNode, Packet{Type: UNSUBSCRIBE, ID: id, Filter: filter})
	return b.xfer(BrokerNode, node, Packet{Type: UNSUBACK, ID: id})
}

// pub is p1's PUBLISH of msg (its payload) reaching the broker, acked.
func (b *rb) pub(msg, topic string, qos uint8, retain bool, expiry uint32) *rb {
	b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: qos, Retain: retain, Topic: topic, Msg: msg, Payload: msg, Expiry: expiry})
	if qos > 0 {
		b.xfer(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1})
	}
	return b
}

// fwd is the broker's first PUBLISH of msg to node.
func (b *rb) fwd(node, msg, topic string, qos uint8, retain bool, expiry uint32) *rb {
	return b.xfer(BrokerNode, node, Packet{Type: PUBLISH, ID: b.nextFwdID(), QoS: qos, Retain: retain, Topic: topic, Msg: msg, Payload: msg, Expiry: expiry})
}

func (b *rb) liveness() *rb { return b.add(Event{Kind: LivenessStart}).add(Event{Kind: Quiescent}) }

// cases turns rb rows into invariantCases.
type rbCase struct {
	name    string
	b       *rb
	violate bool
	reason  string
}

func runRB(t *testing.T, inv Invariant, rows []rbCase) {
	t.Helper()
	cases := make([]invariantCase, len(rows))
	for i, r := range rows {
		cases[i] = invariantCase{name: r.name, h: &r.b.hb, violate: r.violate, reason: r.reason}
	}
	runInvariantCases(t, inv, cases)
}

// subbed is s1 subscribed to t/# at granted QoS g, and p1 connected.
func subbed(g uint8) *rb {
	return newRB().conn("s1", false).sub("s1", 1, "t/#", g, g, 0).conn("p1", false)
}

func TestGrantedQoS(t *testing.T) {
	runRB(t, GrantedQoS, []rbCase{
		{"downgraded", subbed(1).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"not downgraded", subbed(1).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 2, false, 0), true, "[MQTT-3.8.4-8]"},
		{"upgraded", subbed(2).pub("m1", "t/a", 0, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), true, "at QoS 1"},
		{"overlap at max", subbed(0).sub("s1", 2, "t/a", 1, 1, 0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"overlap below max", subbed(0).sub("s1", 2, "t/a", 1, 1, 0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 0, false, 0), true, "[MQTT-3.3.4-2]"},
		{"resubscribe lower, queued before", subbed(2).pub("m1", "t/a", 2, false, 0).sub("s1", 2, "t/#", 0, 0, 0).fwd("s1", "m1", "t/a", 2, false, 0), false, ""},
		{"SUBACK pending: either", newRB().conn("s1", false).sub("s1", 1, "t/#", 0, 0, 0).conn("p1", false).
			xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, Filter: "t/#", QoS: 2}).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 2, false, 0), false, ""},
		{"retained at granted", subbed(1).pub("r1", "t/r", 2, true, 0).sub("s1", 2, "t/r", 2, 1, 0).fwd("s1", "r1", "t/r", 1, true, 0), false, ""},
		{"retained above granted", subbed(1).pub("r1", "t/r", 2, true, 0).sub("s1", 2, "t/r", 2, 1, 0).fwd("s1", "r1", "t/r", 2, true, 0), true, "retained msg"},
		{"multi-filter SUBSCRIBE: not judged", newRB().conn("s1", false).xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 1}).
			xfer(BrokerNode, "s1", Packet{Type: SUBACK, ID: 1}).conn("p1", false).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 2, false, 0), false, ""},
	})
}

func TestUnsubscribe(t *testing.T) {
	runRB(t, Unsubscribe, []rbCase{
		{"published after UNSUBACK", subbed(1).unsub("s1", 2, "t/#").pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), true, "[MQTT-3.10.4-2]"},
		{"queued before UNSUBACK", subbed(1).pub("m1", "t/a", 1, false, 0).unsub("s1", 2, "t/#").fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"UNSUBACK pending", subbed(1).xfer("s1", BrokerNode, Packet{Type: UNSUBSCRIBE, ID: 2, Filter: "t/#"}).pub("m1", "t/a", 1, false, 0).
			fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"resubscribed", subbed(1).unsub("s1", 2, "t/#").sub("s1", 3, "t/+", 1, 1, 0).pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"other filter left", subbed(1).sub("s1", 2, "t/a", 1, 1, 0).unsub("s1", 3, "t/#").pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"session discarded", subbed(1).conn("s1", false).pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), true, "none of its filters"},
		{"session kept", subbed(1).conn("s1", true).pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"broker's peers not named", newRB().add(Event{Kind: Received, Node: BrokerNode, Packet: Packet{Type: SUBSCRIBE, ID: 1, Filter: "x/#", QoS: 1}}).
			add(Event{Kind: Sent, Node: BrokerNode, Packet: Packet{Type: SUBACK, ID: 1, Reason: 1}}).
			add(Event{Kind: Received, Node: BrokerNode, Packet: Packet{Type: PUBLISH, Topic: "t/a", Msg: "m1", Payload: "m1"}}).
			add(Event{Kind: Sent, Node: BrokerNode, Packet: Packet{Type: PUBLISH, Topic: "t/a", Msg: "m1", Payload: "m1"}}), false, ""},
	})
}

func TestOverlap(t *testing.T) {
	two := func() *rb { return subbed(0).sub("s1", 2, "t/a", 1, 1, 0) }
	runRB(t, Overlap, []rbCase{
		{"one copy", two().pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"copy per subscription", two().pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 0, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), true, "[MQTT-3.3.4-2]"},
		{"published twice", two().pub("m1", "t/a", 1, false, 0).pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"resend with DUP", two().pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0).
			xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 7, QoS: 1, Dup: true, Topic: "t/a", Msg: "m1", Payload: "m1"}), false, ""},
	})
}

func TestRetained(t *testing.T) {
	const rh1, rh2 = 1 << 4, 2 << 4
	stored := func() *rb { return subbed(1).pub("r1", "t/r", 1, true, 0) }
	runRB(t, Retained, []rbCase{
		{"sent on subscribe", stored().sub("s2", 1, "t/#", 1, 1, 0).fwd("s2", "r1", "t/r", 1, true, 0).liveness(), false, ""},
		{"never sent", stored().sub("s2", 1, "t/#", 1, 1, 0).liveness(), true, "never sent"},
		{"never sent, connection lost", stored().sub("s2", 1, "t/#", 1, 1, 0).add(Event{Kind: ConnClosed, Node: "s2", Peer: BrokerNode}).liveness(), false, ""},
		{"cleared", stored().pub("", "t/r", 1, true, 0).sub("s2", 1, "t/#", 1, 1, 0).fwd("s2", "", "t/r", 1, true, 0), true, "[MQTT-3.3.1-6]"},
		{"cleared, nothing sent", stored().pub("", "t/r", 1, true, 0).sub("s2", 1, "t/#", 1, 1, 0).liveness(), false, ""},
		{"replaced", stored().pub("r2", "t/r", 1, true, 0).sub("s2", 1, "t/#", 1, 1, 0).fwd("s2", "r1", "t/r", 1, true, 0), true, "RETAIN=1"},
		{"handling 2", stored().sub("s2", 1, "t/#", 1, 1, rh2).fwd("s2", "r1", "t/r", 1, true, 0), true, "Retain Handling"},
		{"handling 2, none sent", stored().sub("s2", 1, "t/#", 1, 1, rh2).liveness(), false, ""},
		{"handling 1, existing", stored().sub("s1", 2, "t/#", 1, 1, rh1).liveness(), false, ""},
		{"handling 1, new", stored().sub("s2", 1, "t/#", 1, 1, rh1).liveness(), true, "never sent"},
		{"live copy keeps RETAIN", subbed(1).pub("r1", "t/r", 1, true, 0).fwd("s1", "r1", "t/r", 1, true, 0), true, "[MQTT-3.3.1-12]"},
		{"live copy, Retain As Published", newRB().conn("s1", false).sub("s1", 1, "t/#", 1, 1, OptRetainAsPublished).conn("p1", false).
			pub("r1", "t/r", 1, true, 0).fwd("s1", "r1", "t/r", 1, true, 0), false, ""},
		{"kept over a broker restart", stored().add(Event{Kind: Crash, Node: BrokerNode}).add(Event{Kind: Restart, Node: BrokerNode}).
			conn("s2", false).sub("s2", 1, "t/#", 1, 1, 0).liveness(), true, "never sent"},
		// A QoS 1 copy of "r1" on t/r is 12 bytes [MQTT-3.1.2-25].
		{"retained too large for the subscriber", stored().xfer("s2", BrokerNode, Packet{Type: CONNECT, MaxSize: 11}).sub("s2", 1, "t/#", 1, 1, 0).liveness(), false, ""},
		{"retained just fits the subscriber", stored().xfer("s2", BrokerNode, Packet{Type: CONNECT, MaxSize: 12}).sub("s2", 1, "t/#", 1, 1, 0).liveness(), true, "never sent"},
		{"retained will topic", stored().xfer("s3", BrokerNode, Packet{Type: CONNECT, Will: true, Retain: true, Topic: "t/r", Msg: "w", Payload: "w"}).
			sub("s2", 1, "t/#", 1, 1, 0).fwd("s2", "w", "t/r", 1, true, 0), false, ""},
		{"an earlier message's ack settles no later one", subbed(1).
			xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 1, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"}).
			xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 2, QoS: 1, Retain: true, Topic: "t/r", Msg: "r2", Payload: "r2"}).
			xfer(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1}).add(Event{Kind: Crash, Node: BrokerNode}).
			conn("s2", false).sub("s2", 1, "t/#", 1, 1, 0).fwd("s2", "r1", "t/r", 1, true, 0).liveness(), false, ""},
		{"QoS 0 retained lost in a crash", subbed(1).pub("r1", "t/r", 0, true, 0).add(Event{Kind: Crash, Node: BrokerNode}).
			conn("s2", false).sub("s2", 1, "t/#", 1, 1, 0).liveness(), false, ""},
	})
}

// TestRetainedInDoubt: a QoS 2 resend whose packet id a broker crash may
// have taken may or may not be stored again as the retained message (a
// broker that kept the id must not apply it twice [MQTT-4.3.3-10]); a SUBACK
// made while a crash left the topic in doubt owes a retained copy of either
// message, which may go after a later PUBLISH settled the topic
// [MQTT-3.3.1-9]; outside such doubt, a RETAIN=1 copy of a message that is
// not the topic's retained one is a violation [MQTT-3.3.1-11].
func TestRetainedInDoubt(t *testing.T) {
	q2 := func(b *rb, msg string, dup bool) *rb {
		return b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 2, Dup: dup, Retain: true, Topic: "t/r", Msg: msg, Payload: msg}).
			xfer(BrokerNode, "p1", Packet{Type: PUBREC, ID: 1})
	}
	r2 := func(b *rb) *rb {
		return b.xfer("p2", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 1, Retain: true, Topic: "t/r", Msg: "r2", Payload: "r2"}).
			xfer(BrokerNode, "p2", Packet{Type: PUBACK, ID: 1})
	}
	crash := Event{Kind: Crash, Node: BrokerNode}
	// resent: r1 (QoS 2) stored, the broker crashes when crashed, r2
	// replaces it, p1 resends r1 (DUP when dup), s2 subscribes.
	resent := func(crashed, dup bool) *rb {
		b := q2(subbed(1), "r1", false)
		if crashed {
			b.add(crash)
		}
		return q2(r2(b.conn("p2", false)), "r1", dup).conn("s2", false).sub("s2", 1, "t/#", 1, 1, 0)
	}
	// doubted: r1 stored, r2 (QoS 0) received before a crash, s2 subscribes,
	// r3 settles the topic, then the broker sends s2 the retained copy r1.
	doubted := func() *rb {
		b := subbed(1).pub("r1", "t/r", 1, true, 0).pub("r2", "t/r", 0, true, 0).add(crash)
		b.conn("p1", false).conn("s2", false).sub("s2", 1, "t/#", 1, 1, 0).pub("r3", "t/r", 1, true, 0)
		return b.fwd("s2", "r1", "t/r", 1, true, 0)
	}
	runRB(t, Retained, []rbCase{
		{"resend of a lost id, replaced message sent", resent(true, true).fwd("s2", "r2", "t/r", 1, true, 0), false, ""},
		{"resend of a lost id, resent message sent", resent(true, true).fwd("s2", "r1", "t/r", 1, true, 0), false, ""},
		{"resend of a kept id, resent message sent", resent(false, true).fwd("s2", "r1", "t/r", 1, true, 0), true, "[MQTT-3.3.1-11]"},
		{"new publication, replaced message sent", resent(true, false).fwd("s2", "r2", "t/r", 1, true, 0), true, "[MQTT-3.3.1-11]"},
		{"copy of a SUBACK in doubt, sent once settled", doubted(), false, ""},
		{"copy of a SUBACK in doubt, sent twice", doubted().fwd("s2", "r1", "t/r", 1, true, 0), true, "[MQTT-3.3.1-11]"},
	})
}

// TestRetainedOrLive: a live copy on a subscription with Retain As
// Published keeps RETAIN=1 [MQTT-3.3.1-12], as does the retained copy a
// later SUBACK owes [MQTT-3.3.1-9]; when both are pending, each send is
// matched to a copy whose QoS it may have [MQTT-3.8.4-8], whatever their
// order; a retained copy owed with a Message Expiry that ran out before the
// history ended may have been deleted unsent [MQTT-3.3.2-5].
func TestRetainedOrLive(t *testing.T) {
	const rap = OptRetainAsPublished
	// both: s1 holds t/# at QoS g with Retain As Published, r1 (QoS 2,
	// RETAIN=1) comes, then s1 subscribes t/r at QoS rg: a live copy at QoS
	// g and a retained copy at QoS rg are pending.
	both := func(g, rg uint8) *rb {
		return newRB().conn("s1", false).sub("s1", 1, "t/#", g, g, rap).conn("p1", false).
			xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 2, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"}).
			xfer(BrokerNode, "p1", Packet{Type: PUBREC, ID: 1}).sub("s1", 2, "t/r", rg, rg, 0)
	}
	expiring := func(end int64) *rb {
		return subbed(1).at(10).pub("r1", "t/r", 1, true, 1).sub("s2", 1, "t/#", 1, 1, 0).at(end).liveness()
	}
	cases := []struct {
		name    string
		b       *rb
		inv     Invariant
		violate bool
		reason  string
	}{
		{"live at 1, then retained at 2", both(1, 2).fwd("s1", "r1", "t/r", 1, true, 0).fwd("s1", "r1", "t/r", 2, true, 0).liveness(), GrantedQoS, false, ""},
		{"retained at 2, then live at 1", both(1, 2).fwd("s1", "r1", "t/r", 2, true, 0).fwd("s1", "r1", "t/r", 1, true, 0).liveness(), GrantedQoS, false, ""},
		{"two at 2", both(1, 2).fwd("s1", "r1", "t/r", 2, true, 0).fwd("s1", "r1", "t/r", 2, true, 0), GrantedQoS, true, "at QoS 2"},
		{"both ranges as wide: the retained copy", both(0, 0).fwd("s1", "r1", "t/r", 0, true, 0).liveness(), Retained, false, ""},
		{"retained copy expired unsent", expiring(20), Retained, false, ""},
		{"retained copy not expired, unsent", expiring(10), Retained, true, "never sent"},
	}
	for _, c := range cases {
		runRB(t, c.inv, []rbCase{{c.name, c.b, c.violate, c.reason}})
	}
}

// TestRetainedResent: each new subscription brings the retained message
// [MQTT-3.3.1-9]; a resend (DUP=1) of a retained copy already sent, after a
// reconnect, is not the copy a later SUBACK owes, which may still come as a
// first send; with no second SUBACK, that second first send is owed by
// nothing [MQTT-3.10.4-2].
func TestRetainedResent(t *testing.T) {
	resent := func(second bool) *rb {
		b := subbed(1).pub("r1", "t/r", 1, true, 0).conn("s2", false).sub("s2", 1, "t/r", 1, 1, 0).fwd("s2", "r1", "t/r", 1, true, 0)
		if second {
			b.sub("s2", 2, "t/#", 1, 1, 0)
		}
		b.drop("s2").conn("s2", true)
		b.xfer(BrokerNode, "s2", Packet{Type: PUBLISH, ID: 7, QoS: 1, Dup: true, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"})
		return b.fwd("s2", "r1", "t/r", 1, true, 0)
	}
	runRB(t, Unsubscribe, []rbCase{
		{"second SUBACK's copy after a resend of the first", resent(true), false, ""},
		{"a second copy no SUBACK owes", resent(false), true, "[MQTT-3.10.4-2]"},
	})
}

// TestRetainedOrLiveResent: s1 holds t/# at QoS 1 with Retain As
// Published, r1 (QoS 1, RETAIN=1) comes, then s1 subscribes t/r: a live
// copy and a retained copy, both at QoS 1 and RETAIN=1 [MQTT-3.3.1-12]
// [MQTT-3.3.1-9]. The first send (id 7) is taken as the live copy; its
// resend after a reconnect keeps id 7 [MQTT-4.4.0-1], so it is no first
// send of the retained copy, which may still come (id 8); a third copy is
// one too many (swarm seed 100650).
func TestRetainedOrLiveResent(t *testing.T) {
	const rap = OptRetainAsPublished
	send := func(b *rb, id uint16, dup bool) *rb {
		return b.xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: id, QoS: 1, Dup: dup, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"})
	}
	both := func() *rb {
		b := newRB().conn("s1", false).sub("s1", 1, "t/#", 1, 1, rap).conn("p1", false).pub("r1", "t/r", 1, true, 0).sub("s1", 2, "t/r", 1, 1, 0)
		send(b, 7, false).drop("s1").conn("s1", true)
		return send(b, 7, true)
	}
	runRB(t, Overlap, []rbCase{
		{"resend of the live copy, then the retained copy", send(both(), 8, false), false, ""},
		{"resend of the live copy, then two more copies", send(send(both(), 8, false), 9, false), true, "[MQTT-3.3.4-2]"},
	})
}

// TestRetainedAsPublishedPerPublication: s1 holds t/b at QoS 0 with Retain
// As Published and t/# at QoS 2; r1 (QoS 1, RETAIN=1) comes, so its live
// copy may keep RETAIN=1 [MQTT-3.3.1-12]. s1 then subscribes t/b again at
// QoS 1 without the option: the SUBACK owes the retained copy
// [MQTT-3.3.1-9], and p1's resend of r1 (its PUBACK lost: a new
// publication [MQTT-4.3.2-5]) owes a second live copy, which has RETAIN=0
// since no matching subscription has Retain As Published any more
// [MQTT-3.3.1-12]. Three first sends, in any order, are the three copies;
// a fourth is one too many, and a third RETAIN=1 send is a live copy no
// subscription let keep it. Reconnected, the retained copy need not come
// (its connection ended), and the first RETAIN=1 send is read as the live
// copy: the second must then be the retained one, not a second live copy
// (swarm seed 222758387540, which then took the RETAIN=0 live copy for a
// fourth: Overlap).
func TestRetainedAsPublishedPerPublication(t *testing.T) {
	const rap = OptRetainAsPublished
	three := func(reconnect bool, retains ...bool) *rb {
		b := newRB().conn("s1", false).sub("s1", 1, "t/b", 0, 0, rap).sub("s1", 2, "t/#", 2, 2, 0).
			conn("p1", false).pub("r1", "t/b", 1, true, 0).sub("s1", 3, "t/b", 1, 1, 0)
		if reconnect {
			b.drop("s1").conn("s1", true)
		}
		b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 1, Dup: true, Retain: true, Topic: "t/b", Msg: "r1", Payload: "r1"}).
			xfer(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1})
		for _, r := range retains {
			b.fwd("s1", "r1", "t/b", 1, r, 0)
		}
		return b.liveness()
	}
	for _, reconnect := range []bool{false, true} {
		runRB(t, Overlap, []rbCase{
			{"live, retained, the resend's live", three(reconnect, true, true, false), false, ""},
			{"the resend's live first", three(reconnect, false, true, true), false, ""},
			{"a fourth copy", three(reconnect, true, true, false, false), true, "[MQTT-3.3.4-2]"},
		})
		runRB(t, Retained, []rbCase{
			{"the resend's live copy with RETAIN=0", three(reconnect, true, true, false), false, ""},
			{"the resend's live copy with RETAIN=1", three(reconnect, true, true, true), true, "[MQTT-3.3.1-12]"},
		})
	}
}

// TestRetainedOwedAfterCrash: s2 subscribes # and the SUBACK owes r1
// [MQTT-3.3.1-9]; the broker crashes before sending it, which frees that
// copy (it died with the connection); after the restart s2 subscribes t/#
// and that SUBACK owes r1 again, stored over the restart. One send pays the
// copy owed now, not the one the crash freed (swarm seed 95544); a second
// SUBACK after the restart owes a second copy.
func TestRetainedOwedAfterCrash(t *testing.T) {
	owed := func(after ...string) *rb {
		b := subbed(1).pub("r1", "t/r", 1, true, 0).conn("s2", false).sub("s2", 1, "#", 0, 0, 0).
			add(Event{Kind: Crash, Node: BrokerNode}).add(Event{Kind: Restart, Node: BrokerNode}).conn("s2", true)
		for i, f := range after {
			b.sub("s2", uint16(2+i), f, 0, 0, 0)
		}
		return b
	}
	runRB(t, Retained, []rbCase{
		{"one SUBACK after the crash, one copy", owed("t/#").fwd("s2", "r1", "t/r", 0, true, 0).liveness(), false, ""},
		{"one SUBACK after the crash, no copy", owed("t/#").liveness(), true, "never sent"},
		{"two SUBACKs after the crash, one copy", owed("t/#", "t/r").fwd("s2", "r1", "t/r", 0, true, 0).liveness(), true, "never sent"},
		{"two SUBACKs after the crash, two copies", owed("t/#", "t/r").fwd("s2", "r1", "t/r", 0, true, 0).fwd("s2", "r1", "t/r", 0, true, 0).liveness(), false, ""},
		{"no SUBACK after the crash", owed().liveness(), false, ""},
	})
}

// TestRetainedOneDelivery: a QoS 0 retained PUBLISH has no ack; the
// broker's write of it is done once the step that took it ended, which a
// packet of a later delivery shows. Packets that reached the broker in one
// delivery (one time, one sender) share its step: a crash in that step may
// come before the retained message was stored, and then no SUBACK after the
// restart owes it [MQTT-3.3.1-5] [MQTT-3.3.1-9] (swarm seed 147272: r1 and
// m2 in one delivery, the broker crashed before its first write).
func TestRetainedOneDelivery(t *testing.T) {
	crashed := func(m2At int64, m2From string) *rb {
		b := subbed(0).conn("p2", false).at(5).pub("r1", "t/r", 0, true, 0).at(m2At)
		b.xfer(m2From, BrokerNode, Packet{Type: PUBLISH, QoS: 0, Topic: "u/a", Msg: "m2", Payload: "m2"})
		b.add(Event{Kind: Crash, Node: BrokerNode, Point: CrashBeforeAction}).add(Event{Kind: Restart, Node: BrokerNode})
		return b.at(10).conn("s2", false).sub("s2", 1, "t/#", 0, 0, 0)
	}
	runRB(t, Retained, []rbCase{
		{"one delivery, crashed, no copy", crashed(5, "p1").liveness(), false, ""},
		{"one delivery, crashed, copy", crashed(5, "p1").fwd("s2", "r1", "t/r", 0, true, 0).liveness(), false, ""},
		{"later delivery, crashed, no copy", crashed(6, "p1").liveness(), true, "never sent"},
		{"other sender's delivery, crashed, no copy", crashed(5, "p2").liveness(), true, "never sent"},
		{"later delivery, crashed, copy", crashed(6, "p1").fwd("s2", "r1", "t/r", 0, true, 0).liveness(), false, ""},
	})
}

// TestRetainedOwedAgain: s1 holds t/c/# at QoS 0 with Retain As Published
// and is away when r1 (QoS 1, RETAIN=1) comes: its live QoS 0 copy may be
// dropped. Back, s1 subscribes t/# at QoS 1 (a QoS 1 retained copy, sent)
// and t/c/# again at QoS 0 [MQTT-3.3.1-9]: the copy that SUBACK owes goes
// at QoS 0 [MQTT-3.8.4-8], the QoS of the copy already sent bounds it no
// more, so a QoS 0 RETAIN=1 send is that copy, not the live one (swarm
// seed 170725).
func TestRetainedOwedAgain(t *testing.T) {
	const rap = OptRetainAsPublished
	owed := func() *rb {
		b := newRB().conn("s1", false).sub("s1", 1, "t/c/#", 0, 0, rap).drop("s1").conn("p1", false).pub("r1", "t/c/y", 1, true, 0)
		return b.conn("s1", true).sub("s1", 2, "t/#", 1, 1, 0).fwd("s1", "r1", "t/c/y", 1, true, 0).sub("s1", 3, "t/c/#", 0, 0, 0)
	}
	runRB(t, Retained, []rbCase{
		{"second retained copy sent at QoS 0", owed().fwd("s1", "r1", "t/c/y", 0, true, 0).liveness(), false, ""},
		{"second retained copy never sent", owed().liveness(), true, "never sent"},
		{"second retained copy and the live copy sent", owed().fwd("s1", "r1", "t/c/y", 0, true, 0).fwd("s1", "r1", "t/c/y", 0, true, 0).liveness(), false, ""},
	})
}

func TestMessageExpiry(t *testing.T) {
	runRB(t, MessageExpiry, []rbCase{
		{"in time, interval decreased", subbed(1).at(10).pub("m1", "t/a", 1, false, 30).at(15).fwd("s1", "m1", "t/a", 1, false, 25), false, ""},
		{"interval forwarded unchanged", subbed(1).at(10).pub("m1", "t/a", 1, false, 30).at(15).fwd("s1", "m1", "t/a", 1, false, 30), true, "[MQTT-3.3.2-6]"},
		{"interval dropped", subbed(1).at(10).pub("m1", "t/a", 1, false, 30).at(15).fwd("s1", "m1", "t/a", 1, false, 0), true, "without the Message Expiry"},
		{"expired", subbed(1).at(10).pub("m1", "t/a", 1, false, 30).at(41).fwd("s1", "m1", "t/a", 1, false, 1), true, "[MQTT-3.3.2-5]"},
		{"resent after expiry", subbed(1).at(10).pub("m1", "t/a", 1, false, 30).at(15).fwd("s1", "m1", "t/a", 1, false, 25).at(50).
			xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 7, QoS: 1, Dup: true, Topic: "t/a", Msg: "m1", Payload: "m1"}), false, ""},
		{"retained, expired", subbed(1).at(10).pub("r1", "t/r", 1, true, 5).at(20).sub("s2", 1, "t/#", 1, 1, 0).fwd("s2", "r1", "t/r", 1, true, 0), true, "ran out"},
	})
}

// kaConn connects s1 with Keep Alive ka (and, when ska > 0, a CONNACK with
// Server Keep Alive ska) at the current time.
func (b *rb) kaConn(ka, ska uint16) *rb {
	b.add(Event{Kind: ConnOpened, Node: "s1", Peer: BrokerNode})
	b.xfer("s1", BrokerNode, Packet{Type: CONNECT, KeepAlive: ka})
	b.xfer(BrokerNode, "s1", Packet{Type: CONNACK, KeepAlive: ska})
	return b.add(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, Version: 5})
}

func (b *rb) ping() *rb {
	return b.xfer("s1", BrokerNode, Packet{Type: PINGREQ}).xfer(BrokerNode, "s1", Packet{Type: PINGRESP})
}

func TestClientKeepAlive(t *testing.T) {
	closed := Event{Kind: ConnClosed, Node: "s1", Peer: BrokerNode}
	runRB(t, ClientKeepAlive, []rbCase{
		{"pings in time", newRB().kaConn(10, 0).at(10).ping().at(20).ping().at(29).add(closed), false, ""},
		{"ping late", newRB().kaConn(10, 0).at(10).ping().at(21).ping(), true, "[MQTT-3.1.2-23]"},
		{"silent until closed", newRB().kaConn(10, 0).at(16).add(closed), true, "connection ended"},
		{"receiving is not sending", newRB().kaConn(10, 0).at(5).fwd("s1", "m1", "t", 0, false, 0).at(12).ping(), true, "sent PINGREQ"},
		{"waiting for PINGRESP", newRB().kaConn(10, 0).at(10).xfer("s1", BrokerNode, Packet{Type: PINGREQ}).at(25).add(closed), false, ""},
		{"keep alive 0", newRB().kaConn(0, 0).at(100).ping(), false, ""},
		{"server keep alive", newRB().kaConn(10, 30).at(25).ping(), false, ""},
		{"server keep alive, late", newRB().kaConn(60, 30).at(31).ping(), true, "30s"},
		{"crashed", newRB().kaConn(10, 0).add(Event{Kind: Crash, Node: "s1"}).at(30).add(closed), false, ""},
	})
}

func TestFlowResume(t *testing.T) {
	closed := Event{Kind: ConnClosed, Node: BrokerNode, Peer: "s1"}
	runRB(t, FlowResume, []rbCase{
		{"sent", subbed(1).pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0).liveness(), false, ""},
		{"parked", subbed(1).pub("m1", "t/a", 1, false, 0).pub("m2", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0).liveness(), true, "parked for good"},
		{"parked, no liveness phase", subbed(1).pub("m1", "t/a", 1, false, 0), false, ""},
		{"subscriber offline at the end", subbed(1).pub("m1", "t/a", 1, false, 0).add(closed).liveness(), false, ""},
		{"QoS 0", subbed(0).pub("m1", "t/a", 1, false, 0).liveness(), false, ""},
		{"broker crash", subbed(1).pub("m1", "t/a", 1, false, 0).add(Event{Kind: Crash, Node: BrokerNode}).conn("s1", true).liveness(), false, ""},
		{"expiring", subbed(1).pub("m1", "t/a", 1, false, 30).liveness(), false, ""},
		{"first send unrecorded, resend seen", subbed(1).pub("m1", "t/a", 1, false, 0).
			xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 7, QoS: 1, Dup: true, Topic: "t/a", Msg: "m1", Payload: "m1"}).liveness(), false, ""},
		// A QoS 1 copy of "m1" on t/a is 12 bytes [MQTT-3.1.2-25].
		{"too large for the subscriber", newRB().connMax("s1", false, 11).sub("s1", 1, "t/#", 1, 1, 0).conn("p1", false).pub("m1", "t/a", 1, false, 0).liveness(), false, ""},
		{"just fits the subscriber", newRB().connMax("s1", false, 12).sub("s1", 1, "t/#", 1, 1, 0).conn("p1", false).pub("m1", "t/a", 1, false, 0).liveness(), true, "parked for good"},
		{"empty payloads share an entry", subbed(1).pub("", "t/a", 1, false, 0).liveness(), false, ""},
		{"QoS 2 resent to the broker", subbed(2).pub("m1", "t/a", 2, false, 0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 2, false, 0).liveness(), false, ""},
	})
}

// refuse is p1's PUBLISH of msg reaching the broker and refused with
// reason (>= 0x80) on its PUBACK or PUBREC.
func (b *rb) refuse(msg, topic string, qos uint8, retain bool, reason uint8) *rb {
	b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: qos, Retain: retain, Topic: topic, Msg: msg, Payload: msg})
	ack := uint8(PUBACK)
	if qos == 2 {
		ack = PUBREC
	}
	return b.xfer(BrokerNode, "p1", Packet{Type: ack, ID: 1, Reason: reason})
}

// TestRoutingRefused: a publication the broker refused (PUBACK/PUBREC
// >= 0x80) owes no copy: FlowResume does not wait for its live copy, and
// Retained does not owe it as the topic's retained message; an accepted
// one is still owed.
func TestRoutingRefused(t *testing.T) {
	runRB(t, FlowResume, []rbCase{
		{"QoS 1 refused 0x97, never sent", subbed(1).refuse("m1", "t/a", 1, false, 0x97).liveness(), false, ""},
		{"QoS 2 refused 0x87, never sent", subbed(2).refuse("m1", "t/a", 2, false, 0x87).liveness(), false, ""},
		{"QoS 1 accepted 0x10, never sent", subbed(1).refuse("m1", "t/a", 1, false, 0x10).liveness(), true, "parked for good"},
	})
	runRB(t, Retained, []rbCase{
		{"retained refused 0x97: no retained copy owed", subbed(1).refuse("r1", "t/r", 1, true, 0x97).sub("s1", 2, "t/r", 1, 1, 0).liveness(), false, ""},
		{"retained accepted, never sent", subbed(1).pub("r1", "t/r", 1, true, 0).sub("s1", 2, "t/r", 1, 1, 0).liveness(), true, "owes the retained msg"},
	})
}

// connE connects node (v5) with Session Expiry Interval exp; the broker
// answers Session Present sp.
func (b *rb) connE(node string, exp uint32, sp bool) *rb {
	b.add(Event{Kind: ConnOpened, Node: node, Peer: BrokerNode}).add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: node})
	b.xfer(node, BrokerNode, Packet{Type: CONNECT, Expiry: exp})
	b.xfer(BrokerNode, node, Packet{Type: CONNACK, Sessions: sp})
	return b.add(Event{Kind: Connected, Node: node, Peer: BrokerNode, SessionPresent: sp, HadState: true, Version: 5})
}

func (b *rb) drop(node string) *rb {
	return b.add(Event{Kind: ConnClosed, Node: BrokerNode, Peer: node}).add(Event{Kind: ConnClosed, Node: node, Peer: BrokerNode})
}

func TestSessionExpiry(t *testing.T) {
	runRB(t, SessionExpiry, []rbCase{
		{"resumed in time", newRB().connE("s1", 60, false).at(10).drop("s1").at(50).connE("s1", 60, true), false, ""},
		{"resumed after expiry", newRB().connE("s1", 60, false).at(10).drop("s1").at(71).connE("s1", 60, true), true, "[MQTT-4.1.0-2]"},
		{"discarded after expiry", newRB().connE("s1", 60, false).at(10).drop("s1").at(71).connE("s1", 60, false), false, ""},
		{"expiry 0 ends with the connection", newRB().connE("s1", 0, false).at(10).drop("s1").at(11).connE("s1", 0, true), true, "of 0s"},
		{"never expires", newRB().connE("s1", expiryNever, false).at(10).drop("s1").at(1e6).connE("s1", 0, true), false, ""},
		{"DISCONNECT lengthens it", newRB().connE("s1", 10, false).xfer("s1", BrokerNode, Packet{Type: DISCONNECT, Expiry: 100, ExpirySet: true}).
			at(10).drop("s1").at(50).connE("s1", 60, true), false, ""},
		{"takeover", newRB().connE("s1", 0, false).at(20).connE("s1", 0, true), false, ""},
		{"broker crash", newRB().connE("s1", 5, false).at(10).drop("s1").add(Event{Kind: Crash, Node: BrokerNode}).at(50).connE("s1", 5, true), false, ""},
	})
}

// TestSessionExpiryAcrossCrash: the session's clock runs on across a broker
// crash [MQTT-4.1.0-2]: an offline session keeps the end of its last
// connection (the broker keeps when it went offline), so Session Present=1
// after the interval is a violation whatever crashed between. Slack goes
// only where the crash may have lost the close (same instant) or took the
// connection down itself: then the clock starts at the broker's first
// event after the restart.
func TestSessionExpiryAcrossCrash(t *testing.T) {
	crash := Event{Kind: Crash, Node: BrokerNode}
	other := func(b *rb) *rb { return b.add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: "p1"}) }
	runRB(t, SessionExpiry, []rbCase{
		{"offline before the crash, resumed after expiry", newRB().connE("s1", 5, false).at(10).drop("s1").at(20).add(crash).at(50).connE("s1", 5, true), true, "[MQTT-4.1.0-2]"},
		{"offline before the crash, resumed in time", newRB().connE("s1", 5, false).at(10).drop("s1").at(12).add(crash).at(14).connE("s1", 5, true), false, ""},
		{"offline before the crash, discarded", newRB().connE("s1", 5, false).at(10).drop("s1").at(20).add(crash).at(50).connE("s1", 5, false), false, ""},
		{"two crashes", newRB().connE("s1", 5, false).at(10).drop("s1").at(12).add(crash).at(13).add(crash).at(50).connE("s1", 5, true), true, "[MQTT-4.1.0-2]"},
		{"close at the crash's instant", newRB().connE("s1", 5, false).at(10).drop("s1").add(crash).at(30).connE("s1", 5, true), false, ""},
		{"online at the crash, resumed within the interval of the first event", other(newRB().connE("s1", 5, false).at(10).add(crash).at(30)).at(34).connE("s1", 5, true), false, ""},
		{"online at the crash, resumed after it", other(newRB().connE("s1", 5, false).at(10).add(crash).at(30)).at(40).connE("s1", 5, true), true, "[MQTT-4.1.0-2]"},
		{"CONNECT unanswered at the crash", newRB().connE("s1", 5, false).at(10).drop("s1").at(12).
			xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: 60}).add(crash).at(40).connE("s1", 60, true), false, ""},
	})
}

// willConn connects c1 with a will "bye" on w/c1 (delay seconds) and
// Session Expiry exp.
func (b *rb) willConn(delay, exp uint32) *rb {
	b.add(Event{Kind: ConnOpened, Node: "c1", Peer: BrokerNode}).add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: "c1"})
	b.xfer("c1", BrokerNode, Packet{Type: CONNECT, Will: true, Topic: "w/c1", Msg: "bye", Payload: "bye", QoS: 1, WillDelay: delay, Expiry: exp})
	b.xfer(BrokerNode, "c1", Packet{Type: CONNACK})
	return b.add(Event{Kind: Connected, Node: "c1", Peer: BrokerNode, Version: 5})
}

func TestWill(t *testing.T) {
	sub := func() *rb { return newRB().conn("s1", false).sub("s1", 1, "w/#", 1, 1, 0) }
	will := func(b *rb) *rb { return b.fwd("s1", "bye", "w/c1", 1, false, 0) }
	normal := Packet{Type: DISCONNECT}
	runRB(t, Will, []rbCase{
		{"abnormal end", will(sub().willConn(0, 0).at(5).drop("c1")).liveness(), false, ""},
		{"abnormal end, never published", sub().willConn(0, 0).at(5).drop("c1").at(10).liveness(), true, "never went to s1"},
		{"normal DISCONNECT", will(sub().willConn(0, 0).xfer("c1", BrokerNode, normal).at(5).drop("c1")), true, "[MQTT-3.1.2-10]"},
		{"normal DISCONNECT, nothing sent", sub().willConn(0, 0).xfer("c1", BrokerNode, normal).at(5).drop("c1").liveness(), false, ""},
		{"DISCONNECT 0x04 keeps it", will(sub().willConn(0, 0).xfer("c1", BrokerNode, Packet{Type: DISCONNECT, Reason: 4}).drop("c1")), false, ""},
		{"DISCONNECT 0x80 keeps it", will(sub().willConn(0, 0).xfer("c1", BrokerNode, Packet{Type: DISCONNECT, Reason: 0x80}).drop("c1")), false, ""},
		{"DISCONNECT 0x80, never published", sub().willConn(0, 0).xfer("c1", BrokerNode, Packet{Type: DISCONNECT, Reason: 0x80}).at(5).drop("c1").at(10).liveness(), true, "never went to s1"},
		{"while connected", will(sub().willConn(0, 0)), true, "while its connection is open"},
		{"after its delay", will(sub().willConn(10, 60).at(5).drop("c1").at(15)), false, ""},
		{"before its delay", will(sub().willConn(10, 60).at(5).drop("c1").at(12)), true, "before its Will Delay"},
		{"session ends first", will(sub().willConn(10, 3).at(5).drop("c1").at(8)), false, ""},
		{"reconnected within the delay", will(sub().willConn(10, 60).at(5).drop("c1").at(8).conn("c1", true).at(20)), true, "reconnected within"},
		{"reconnected, nothing sent", sub().willConn(10, 60).at(5).drop("c1").at(8).conn("c1", true).at(20).liveness(), false, ""},
		{"reconnected after it fell due, never published", sub().willConn(0, 60).at(5).drop("c1").at(8).conn("c1", true).at(20).liveness(), true, "never went to s1"},
		{"DISCONNECT 0x04, reconnected, never published", sub().willConn(0, 60).xfer("c1", BrokerNode, Packet{Type: DISCONNECT, Reason: 4}).
			at(5).drop("c1").at(8).conn("c1", true).at(20).liveness(), true, "never went to s1"},
		{"DISCONNECT 0x81, reconnected, never published", sub().willConn(0, 60).xfer("c1", BrokerNode, Packet{Type: DISCONNECT, Reason: 0x81}).
			at(5).drop("c1").at(8).conn("c1", true).at(20).liveness(), true, "never went to s1"},
		{"DISCONNECT 0x00, reconnected, nothing sent", sub().willConn(0, 60).xfer("c1", BrokerNode, normal).
			at(5).drop("c1").at(8).conn("c1", true).at(20).liveness(), false, ""},
		{"a close with another connection open: its end is a guess", sub().willConn(10, 60).at(5).add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: "c1"}).
			at(6).add(Event{Kind: ConnClosed, Node: BrokerNode, Peer: "c1"}).at(8).add(Event{Kind: ConnClosed, Node: BrokerNode, Peer: "c1"}).
			at(17).conn("c1", true).at(30).liveness(), false, ""},
		{"an older connection still open: which one ended is a guess", sub().willConn(0, 60).add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: "c1"}).
			at(5).drop("c1").at(20).liveness(), false, ""},
		{"broker crash", will(sub().willConn(0, 0).add(Event{Kind: Crash, Node: BrokerNode}).conn("s1", true)), false, ""},
		{"normal DISCONNECT, then a broker crash", will(sub().willConn(0, 0).xfer("c1", BrokerNode, normal).at(5).drop("c1").
			add(Event{Kind: Crash, Node: BrokerNode}).conn("s1", true)), false, ""},
	})
}

// TestFlowResumeExpiredUnseen: s1's session (Session Expiry 5 s) ends at
// 10 s; its next CONNECT reaches the broker, which crashes (or closes the
// connection) before any CONNACK, and a later CONNACK says Session
// Present=1. After 15 s the broker may have discarded the old session and
// resumed a new one without s1's subscription [MQTT-4.1.0-2]: nothing is
// owed on it. Before 15 s it had to keep the session, and still owes.
func TestFlowResumeExpiredUnseen(t *testing.T) {
	crash := Event{Kind: Crash, Node: BrokerNode}
	closed := Event{Kind: ConnClosed, Node: BrokerNode, Peer: "s1"}
	lost := func(exp uint32, at int64, end Event) *rb {
		b := newRB().connE("s1", exp, false).sub("s1", 1, "t/#", 1, 1, 0).conn("p1", false).at(10).drop("s1").at(at)
		b.add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: "s1"})
		b.xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: exp})
		return b.add(end).at(at+1).connE("s1", exp, true)
	}
	pub := func(b *rb) *rb { return b.pub("m1", "t/a", 1, false, 0).liveness() }
	lengthened := newRB().connE("s1", 5, false).sub("s1", 1, "t/#", 1, 1, 0).conn("p1", false).
		xfer("s1", BrokerNode, Packet{Type: DISCONNECT, Expiry: 100, ExpirySet: true}).at(10).drop("s1").at(20)
	lengthened.xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: 5}).add(crash).at(21).connE("s1", 5, true)
	runRB(t, FlowResume, []rbCase{
		{"expired, CONNACK lost in a crash", pub(lost(5, 20, crash)), false, ""},
		{"expired, connection closed before the CONNACK", pub(lost(5, 20, closed)), false, ""},
		{"within the interval, CONNACK lost in a crash", pub(lost(5, 12, crash)), true, "parked for good"},
		{"never expires", pub(lost(ExpiryNever, 1000, crash)), true, "parked for good"},
		{"expired, but the CONNACK says Session Present=1", pub(newRB().connE("s1", 5, false).sub("s1", 1, "t/#", 1, 1, 0).
			conn("p1", false).at(10).drop("s1").at(20).connE("s1", 5, true)), true, "parked for good"},
		{"a DISCONNECT lengthened the interval", pub(lengthened), true, "parked for good"},
	})
}

// TestExpiryDoubts: where the broker may have discarded an expired session
// without a CONNACK showing it.
func TestExpiryDoubts(t *testing.T) {
	crash := Event{Kind: Crash, Node: BrokerNode}
	base := func(at int64, clean bool) *rb {
		b := newRB().connE("s1", 5, false).at(10).drop("s1").at(at)
		return b.xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: 5, Clean: clean})
	}
	v311 := newRB().conn("s1", false)
	v311.h.Events[len(v311.h.Events)-1].Version = 4
	v311.at(10).drop("s1").at(1000).xfer("s1", BrokerNode, Packet{Type: CONNECT}).add(crash)
	for _, c := range []struct {
		name string
		b    *rb
		want int
	}{
		{"late, crash", base(20, false).add(crash), 1},
		{"late, answered", base(20, false).xfer(BrokerNode, "s1", Packet{Type: CONNACK}).add(crash), 0},
		{"in time, crash", base(14, false).add(crash), 0},
		{"late, Clean Start", base(20, true).add(crash), 0},
		{"3.1.1 never expires", v311, 0},
	} {
		if got := len(expiryDoubts(newIndex(&c.b.h))); got != c.want {
			t.Errorf("%s: %d doubts, want %d", c.name, got, c.want)
		}
	}
}

// crashed is the broker crashing (after its step's action) and restarting,
// and s1 and p1 reconnecting to their kept sessions.
func (b *rb) crashed() *rb {
	b.add(Event{Kind: Crash, Node: BrokerNode, Point: CrashAfterAction}).add(Event{Kind: Restart, Node: BrokerNode})
	return b.conn("s1", true).conn("p1", true)
}

// TestRoutingUnackedRequest: a SUBSCRIBE or UNSUBSCRIBE the broker received
// and did not acknowledge before it crashed may or may not have taken
// effect, and no one resends it (MQTT 5.0 §4.4): a copy on its filter is
// allowed at the QoS either state grants, until the client's next request
// of the filter is acknowledged.
func TestRoutingUnackedRequest(t *testing.T) {
	unsubLost := func() *rb {
		return subbed(1).xfer("s1", BrokerNode, Packet{Type: UNSUBSCRIBE, ID: 2, Filter: "t/#"}).crashed()
	}
	resubLost := func(q uint8) *rb {
		return subbed(1).xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, Filter: "t/#", QoS: q}).crashed()
	}
	newSubLost := newRB().conn("s1", false).conn("p1", false).xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 1, Filter: "t/#", QoS: 1}).crashed()
	runRB(t, Unsubscribe, []rbCase{
		{"UNSUBACK lost to a crash: a later copy allowed", unsubLost().pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"... until an acked UNSUBSCRIBE", unsubLost().unsub("s1", 3, "t/#").pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), true, "[MQTT-3.10.4-2]"},
		{"SUBACK of a new filter lost to a crash: a copy allowed", newSubLost.pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
	})
	runRB(t, GrantedQoS, []rbCase{
		{"re-SUBSCRIBE at QoS 0 lost to a crash: QoS 1 allowed", resubLost(0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"... and QoS 0", resubLost(0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 0, false, 0), false, ""},
		{"... not QoS 2", resubLost(0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 2, false, 0), true, "[MQTT-3.8.4-8]"},
		{"... until an acked one at QoS 0", resubLost(0).sub("s1", 3, "t/#", 0, 0, 0).pub("m1", "t/a", 2, false, 0).fwd("s1", "m1", "t/a", 1, false, 0), true, "[MQTT-3.8.4-8]"},
	})
}

// TestPacketIDUniqueExpiredUnseen: the broker had PUBLISH id 1 in flight
// to s1 (Session Expiry 5 s, gone at 10 s) when s1's next CONNECT came and
// a crash hid the answer. After 15 s the broker may have started a new
// session that reuses id 1; before, the old session holds it.
func TestPacketIDUniqueExpiredUnseen(t *testing.T) {
	lost := func(at int64) *rb {
		b := newRB().connE("s1", 5, false).fwd("s1", "m1", "t/a", 1, false, 0).at(10).drop("s1").at(at)
		b.xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: 5})
		b.add(Event{Kind: Crash, Node: BrokerNode}).at(at+1).connE("s1", 5, true)
		return b.xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 7, QoS: 1, Topic: "t/a", Msg: "m2", Payload: "m2"})
	}
	runRB(t, PacketIDUnique, []rbCase{
		{"expired, CONNACK lost in a crash", lost(20), false, ""},
		{"within the interval", lost(12), true, "[MQTT-2.2.1-4]"},
	})
}

// TestUnsubscribeThenResubscribe: s1's UNSUBSCRIBE and SUBSCRIBE of t/a
// reach the broker, which answers the UNSUBACK and crashes before the
// SUBACK: the SUBSCRIBE, taken after the UNSUBSCRIBE, may have made the
// subscription, so a copy of a later message is allowed [MQTT-3.8.4-3];
// in the other order the UNSUBSCRIBE removed it [MQTT-3.10.4-1] and the
// copy is not [MQTT-3.10.4-2].
func TestUnsubscribeThenResubscribe(t *testing.T) {
	reqs := func(subFirst bool) *rb {
		b := subbed(1)
		un := Packet{Type: UNSUBSCRIBE, ID: 2, Filter: "t/#"}
		re := Packet{Type: SUBSCRIBE, ID: 3, Filter: "t/#", QoS: 1}
		if subFirst {
			un, re = re, un
		}
		b.xfer("s1", BrokerNode, un).xfer("s1", BrokerNode, re).xfer(BrokerNode, "s1", Packet{Type: UNSUBACK, ID: 2})
		b.add(Event{Kind: Crash, Node: BrokerNode}).conn("s1", true).conn("p1", false)
		return b.pub("m1", "t/a", 1, false, 0).fwd("s1", "m1", "t/a", 1, false, 0)
	}
	runRB(t, Unsubscribe, []rbCase{
		{"SUBSCRIBE after the UNSUBSCRIBE, unanswered", reqs(false), false, ""},
		{"SUBSCRIBE before the UNSUBSCRIBE", reqs(true), true, "[MQTT-3.10.4-2]"},
	})
}

// TestPacketIDUniqueCleanStartUnseen: the broker had PUBLISH id 7 in
// flight to s1 when s1's next CONNECT came and a crash hid the answer. A
// Clean Start CONNECT may have discarded the session [MQTT-3.1.2-4]: the
// session a later CONNACK resumes may be a new one that reuses id 7 (swarm
// seed 11541). A CONNECT without Clean Start kept it: id 7 stays in
// flight [MQTT-2.2.1-4].
func TestPacketIDUniqueCleanStartUnseen(t *testing.T) {
	lost := func(clean bool) *rb {
		b := newRB().connE("s1", ExpiryNever, false).fwd("s1", "m1", "t/a", 1, false, 0).at(10).drop("s1").at(11)
		b.xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: ExpiryNever, Clean: clean})
		b.add(Event{Kind: Crash, Node: BrokerNode}).at(12).connE("s1", ExpiryNever, true)
		return b.xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 7, QoS: 1, Topic: "t/a", Msg: "m2", Payload: "m2"})
	}
	runRB(t, PacketIDUnique, []rbCase{
		{"clean start, CONNACK lost in a crash", lost(true), false, ""},
		{"no clean start, CONNACK lost in a crash", lost(false), true, "[MQTT-2.2.1-4]"},
	})
}

// TestResendIsNoOverlap: a PUBLISH repeating the message of the copy still
// in flight on its packet id is that copy's resend, whatever its DUP flag
// (Retransmit judges the flag [MQTT-3.3.1-1]); a copy on a new id, or on
// the id once its flight ended with a PUBACK, is another copy
// [MQTT-3.3.4-2]; a clean start frees the ids.
func TestResendIsNoOverlap(t *testing.T) {
	copyOn := func(id uint16, dup bool) Packet {
		return Packet{Type: PUBLISH, ID: id, QoS: 1, Dup: dup, Topic: "t/a", Msg: "m1", Payload: "m1"}
	}
	first := func() *rb {
		return newRB().conn("s1", false).sub("s1", 1, "t/#", 1, 1, 0).conn("p1", false).pub("m1", "t/a", 1, false, 0).
			xfer(BrokerNode, "s1", copyOn(5, false))
	}
	runRB(t, Overlap, []rbCase{
		{"resend on its id, DUP=0", first().conn("s1", true).xfer(BrokerNode, "s1", copyOn(5, false)), false, ""},
		{"resend on its id, DUP=1", first().conn("s1", true).xfer(BrokerNode, "s1", copyOn(5, true)), false, ""},
		{"second copy on a new id", first().xfer(BrokerNode, "s1", copyOn(6, false)), true, "another first copy"},
		{"second copy after the first's PUBACK", first().xfer("s1", BrokerNode, Packet{Type: PUBACK, ID: 5}).
			xfer(BrokerNode, "s1", copyOn(5, false)), true, "another first copy"},
	})
	if vs := Check(first().conn("s1", true).xfer(BrokerNode, "s1", copyOn(5, false)).h, Options{}); len(vs) != 1 || vs[0].Invariant != Retransmit {
		t.Errorf("a DUP=0 resend: %v, want exactly one Retransmit violation", vs)
	}
}

// TestRetainedOrLiveReadings: a RETAIN=1 send that may be the retained copy
// a SUBACK owed or a live copy is read so that it breaks no rule when some
// reading lets it.
//
//   - expiry: r1 (QoS 1, retained, 2 s expiry) came, its interval ran out,
//     s1 subscribed t/# with Retain As Published (the SUBACK owes the
//     expired copy, which must not go), then p1 resent r1 (a QoS 1 resend
//     is a new publication [MQTT-4.3.2-5], its interval restarts) and the
//     broker forwarded that live copy in time (crashy seed 11005033);
//   - obligation: a QoS 2 resend the broker may have taken for a duplicate
//     owes no live copy, while a SUBACK owes the retained one: one send is
//     the retained copy, not the optional live one, though the live copy's
//     QoS range is the narrower (seed 7034983);
//   - doubt: a broker crash left t/r's retained message in doubt (a QoS 0
//     retained r2, unsettled, replaced r1 in the pass), s1 held t/# at QoS 0
//     when r1 came, then subscribed t/r at QoS 1 and got r1 at QoS 1 with
//     RETAIN=1: a retained copy of a topic in doubt, not the QoS 0 live copy
//     sent at QoS 1 (seeds 7025838, 7066310, 7069088).
func TestRetainedOrLiveReadings(t *testing.T) {
	const rap = OptRetainAsPublished
	expiry := func(sendAt int64) *rb {
		b := newRB().conn("s1", false).conn("p1", false).pub("r1", "t/r", 1, true, 2).at(3).sub("s1", 1, "t/#", 0, 0, rap)
		b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 1, Dup: true, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1", Expiry: 2})
		return b.at(sendAt).fwd("s1", "r1", "t/r", 0, true, 1)
	}
	obligation := func(sends int) *rb {
		b := newRB().conn("s1", false).sub("s1", 1, "#", 1, 1, rap).conn("p1", false)
		b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 2, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"}).xfer(BrokerNode, "p1", Packet{Type: PUBREC, ID: 1})
		b.fwd("s1", "r1", "t/r", 1, true, 0).add(Event{Kind: Crash, Node: BrokerNode}).add(Event{Kind: Restart, Node: BrokerNode}).conn("p1", true).conn("s1", true)
		b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, ID: 1, QoS: 2, Dup: true, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"}).xfer(BrokerNode, "p1", Packet{Type: PUBREC, ID: 1})
		b.sub("s1", 2, "t/r", 0, 0, 0) // owes r1 at QoS 0 or 1 (TestRetainedOverlapQoS): a wider range than the live copy's
		for range sends {
			b.xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 9, QoS: 1, Retain: true, Topic: "t/r", Msg: "r1", Payload: "r1"})
		}
		return b.liveness()
	}
	doubt := func(inDoubt bool) *rb {
		b := newRB().conn("s1", false).sub("s1", 1, "t/#", 0, 0, 0).conn("p1", false).pub("r1", "t/r", 1, true, 0)
		if inDoubt {
			b.xfer("p1", BrokerNode, Packet{Type: PUBLISH, QoS: 0, Retain: true, Topic: "t/r", Msg: "r2", Payload: "r2"})
		}
		b.add(Event{Kind: Crash, Node: BrokerNode}).add(Event{Kind: Restart, Node: BrokerNode}).conn("s1", true)
		return b.sub("s1", 2, "t/r", 1, 1, 0).fwd("s1", "r1", "t/r", 1, true, 0)
	}
	runRB(t, MessageExpiry, []rbCase{
		{"expiry: the live copy of the resend, in time", expiry(4), false, ""},
		{"expiry: the live copy too late", expiry(6), true, "ran out"},
	})
	runRB(t, Retained, []rbCase{
		{"obligation: the one send is the retained copy", obligation(1), false, ""},
		{"obligation: never sent", obligation(0), true, "never sent"},
	})
	runRB(t, GrantedQoS, []rbCase{
		{"doubt: a retained copy of a topic in doubt", doubt(true), false, ""},
		{"no doubt: r1 is the retained copy owed at QoS 1", doubt(false), false, ""},
	})
	// Without the doubt, a QoS 1 RETAIN=0 copy is the live copy, at a QoS
	// its QoS 0 subscription forbids.
	live := newRB().conn("s1", false).sub("s1", 1, "t/#", 0, 0, 0).conn("p1", false).pub("r1", "t/r", 1, true, 0).fwd("s1", "r1", "t/r", 1, false, 0)
	runRB(t, GrantedQoS, []rbCase{{"the live copy upgraded", live, true, "allows QoS 0"}})
}

// TestRetainedOverlapQoS: s1 holds t/# at QoS 1 and subscribes t/r at QoS
// 0; the SUBACK brings r1 (QoS 1). "Sent in response to a Subscription" at
// min(1, 0) [MQTT-3.8.4-8], or "respecting the maximum QoS of all the
// matching subscriptions", 1 [MQTT-3.3.4-2]: the spec does not say which,
// so both pass; QoS 2 breaks both.
func TestRetainedOverlapQoS(t *testing.T) {
	owed := func(qos uint8) *rb {
		b := newRB().conn("p1", false).pub("r1", "t/r", 2, true, 0).conn("s1", false).sub("s1", 1, "t/#", 1, 1, 0)
		b.fwd("s1", "r1", "t/r", 1, true, 0).sub("s1", 2, "t/r", 0, 0, 0)
		return b.fwd("s1", "r1", "t/r", qos, true, 0).liveness()
	}
	runRB(t, GrantedQoS, []rbCase{
		{"the new subscription's QoS", owed(0), false, ""},
		{"the highest matching QoS", owed(1), false, ""},
		{"above both", owed(2), true, "give 1"},
	})
}

// TestKeepAliveSlack: Options.Slack (the recorder's timing uncertainty)
// tolerates a keep-alive overshoot up to it and no more; without it (the
// simulator's exact clock) any overshoot is a violation.
func TestKeepAliveSlack(t *testing.T) {
	late := func(ms int64) History {
		b := newRB().kaConn(10, 0).at(10).ping()
		b.now += 10e9 + ms*1e6
		return b.ping().h
	}
	const slack = 30e6 // 30 ms
	for _, c := range []struct {
		name  string
		ms    int64
		slack int64
		want  bool
	}{
		{"20 ms late, exact clock", 20, 0, true},
		{"20 ms late, 30 ms slack", 20, slack, false},
		{"30 ms late, 30 ms slack", 30, slack, false},
		{"31 ms late, 30 ms slack", 31, slack, true},
	} {
		vs := Check(late(c.ms), Options{Only: SetOf(ClientKeepAlive), Slack: c.slack})
		if got := len(vs) > 0; got != c.want {
			t.Errorf("%s: violation %v, want %v (%v)", c.name, got, c.want, vs)
		}
	}
	// The broker may close 1.5 x Keep Alive after the last packet: early
	// by less than the slack is within the uncertainty.
	early := func(ms int64) History {
		b := newRB().kaConn(10, 0)
		b.now += 15e9 - ms*1e6
		return b.add(Event{Kind: ConnClosed, Node: BrokerNode, Peer: "s1", Packet: Packet{Reason: KeepAliveTimeout}}).h
	}
	for _, c := range []struct {
		ms, slack int64
		want      bool
	}{{20, 0, true}, {20, slack, false}, {40, slack, true}} {
		vs := Check(early(c.ms), Options{Only: SetOf(BrokerKeepAlive), Slack: c.slack})
		if got := len(vs) > 0; got != c.want {
			t.Errorf("broker closes %d ms early, slack %d ms: violation %v, want %v (%v)", c.ms, c.slack/1e6, got, c.want, vs)
		}
	}
}
