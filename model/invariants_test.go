package model

import (
	"strings"
	"testing"
)

// lostQoS1 is a QoS1 message the broker acknowledged but never forwarded.
func lostQoS1() *hb {
	b := base().accepted("p1", "m1", 1)
	b.xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
	return b.xfer(BrokerNode, "p1", pkt(PUBACK, 1)).acked("p1", "m1")
}

func TestInvariantNoLoss(t *testing.T) {
	late := newHB().connect("p1", false, false).accepted("p1", "m1", 1)
	late.xfer("p1", BrokerNode, publish(1, 1, false, "m1")).subscribe("s1").liveness()
	cleaned := lostQoS1()
	cleaned.ev(Event{Kind: Connected, Node: "s1", CleanStart: true}).liveness()
	pubCleaned := base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1"))
	pubCleaned.ev(Event{Kind: Connected, Node: "p1", CleanStart: true}).liveness()
	// s1's session (Session Expiry 0, Persistent=false) lives while its
	// connection does: judged [MQTT-3.1.2-23]; gone with the connection
	// (the broker's Session Present=0 to the next CONNECT says so), what it
	// was owed went with it [MQTT-4.1.0-2]; a Session Present=0 before its
	// interval of 10 s could run out is the broker's loss.
	volatile := func(expiry uint32, reconnect bool) *hb {
		b := newHB().connect("s1", false, false)
		b.ev(Event{Kind: Subscribed, Node: "s1", Filter: "t/#", QoS: 1}).connect("p1", false, false)
		b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
		if reconnect {
			b.closed("s1").connect("s1", false, true)
		}
		b.h.Events[3].Packet.Expiry = expiry // s1's first CONNECT, as the broker got it
		return b.liveness()
	}
	qos0Sub := newHB().connect("s1", false, false).subscribed("s1", "t/#", 0).connect("p1", false, false)
	qos0Sub.accepted("p1", "m1", 1).liveness()
	otherTopic := newHB().connect("s1", false, false).subscribed("s1", "u/+", 1).connect("p1", false, false)
	otherTopic.accepted("p1", "m1", 1).liveness()
	neverSent := base().accepted("p1", "m1", 2).liveness()
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "delivered", h: base().qos1("m1", 1, 1).liveness()},
		{name: "lost in the broker", h: lostQoS1().liveness(), violate: true, reason: `msg "m1"`},
		{name: "lost in the publisher", h: neverSent, violate: true, reason: "never delivered to s1"},
		{name: "no liveness phase, not judged", h: lostQoS1()},
		{name: "stuck run, judged", h: lostQoS1().kind(LivenessStart).kind(Stuck), violate: true, reason: "never delivered"},
		{name: "subscribed after the broker received it", h: late},
		{name: "unsubscribed", h: lostQoS1().ev(Event{Kind: Unsubscribed, Node: "s1", Filter: "t/#"}).liveness()},
		{name: "subscriber cleaned its session", h: cleaned},
		{name: "publisher cleaned its session", h: pubCleaned},
		{name: "non-persistent session, alive", h: volatile(0, false), violate: true, reason: `never delivered to s1`},
		{name: "non-persistent session, ended with its connection", h: volatile(0, true)},
		{name: "finite session, Session Present 0 before it expired", h: volatile(10, true), violate: true, reason: `never delivered to s1`},
		{name: "QoS0 subscription", h: qos0Sub},
		{name: "non-matching filter", h: otherTopic},
	})
}

// refusedPub is p1's QoS qos PUBLISH of msg on packet id id, received by
// the broker and answered (PUBACK at QoS 1, PUBREC at QoS 2) with reason
// code reason, as both sides record it; a PUBREC below 0x80 goes on to
// PUBREL and PUBCOMP.
func (b *hb) refusedPub(msg string, id uint16, qos, reason uint8) *hb {
	b.accepted("p1", msg, qos).xfer("p1", BrokerNode, publish(id, qos, false, msg))
	if qos == 1 {
		return b.xfer(BrokerNode, "p1", Packet{Type: PUBACK, ID: id, Reason: reason})
	}
	b.xfer(BrokerNode, "p1", Packet{Type: PUBREC, ID: id, Reason: reason})
	if reason < 0x80 {
		b.xfer("p1", BrokerNode, pkt(PUBREL, id)).xfer(BrokerNode, "p1", pkt(PUBCOMP, id))
	}
	return b
}

// TestNoLossRefused: a message the broker refused (PUBACK or PUBREC with a
// reason code >= 0x80, §3.4.2.1, §3.5.2.1) is owed to no subscriber: the
// broker never took ownership of it [MQTT-4.3.2-4] [MQTT-4.3.3-8]. One it
// accepted (a reason below 0x80, 0x10 No matching subscribers included)
// and never delivered is still lost, and so is one it accepted once and
// refused on a resend (it owned it then).
func TestNoLossRefused(t *testing.T) {
	clientSideOnly := base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1"))
	clientSideOnly.recv("p1", BrokerNode, Packet{Type: PUBACK, ID: 1, Reason: 0x90}).liveness()
	resendRefused := base().refusedPub("m1", 1, 1, 0).closed("p1").connect("p1", true, true)
	resendRefused.xfer("p1", BrokerNode, publish(1, 1, true, "m1")).xfer(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1, Reason: 0x97}).liveness()
	idReused := base().refusedPub("m1", 1, 2, 0x97).refusedPub("m2", 1, 2, 0).liveness()
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "QoS 1 refused 0x97 quota exceeded", h: base().refusedPub("m1", 1, 1, 0x97).liveness()},
		{name: "QoS 1 refused 0x87 not authorized", h: base().refusedPub("m1", 1, 1, 0x87).liveness()},
		{name: "QoS 2 refused 0x99 payload format invalid", h: base().refusedPub("m1", 1, 2, 0x99).liveness()},
		{name: "QoS 2 refused 0x80 unspecified", h: base().refusedPub("m1", 1, 2, 0x80).liveness()},
		{name: "refusal seen by the publisher only", h: clientSideOnly},
		{name: "QoS 1 accepted 0x00, never delivered", h: base().refusedPub("m1", 1, 1, 0).liveness(), violate: true, reason: `msg "m1" (p1, "t/a", QoS 1) never delivered to s1`},
		{name: "QoS 1 accepted 0x10 no matching subscribers, never delivered", h: base().refusedPub("m1", 1, 1, 0x10).liveness(), violate: true, reason: `msg "m1"`},
		{name: "QoS 2 accepted, never delivered", h: base().refusedPub("m1", 1, 2, 0).liveness(), violate: true, reason: `msg "m1" (p1, "t/a", QoS 2)`},
		{name: "accepted, then its resend refused", h: resendRefused, violate: true, reason: `msg "m1"`},
		{name: "QoS 2 id reused after a refusal: the new message is owed", h: idReused, violate: true, reason: `msg "m2"`},
	})
	if vs := Check(idReused.h, Options{Only: SetOf(NoLoss)}); len(vs) != 1 {
		t.Errorf("id reused after a refusal: want only m2's violation, got %v", vs)
	}
}

// subReq is a SUBSCRIBE of filter at qos with the filter recorded.
func subReq(id uint16, filter string, qos uint8) Packet {
	return Packet{Type: SUBSCRIBE, ID: id, QoS: qos, Filter: filter}
}

// unsubscribe makes node unsubscribe t/# with UNSUBSCRIBE id, its UNSUBACK
// seen.
func (b *hb) unsubscribe(node string, id uint16) *hb {
	b.xfer(node, BrokerNode, pkt(UNSUBSCRIBE, id)).xfer(BrokerNode, node, pkt(UNSUBACK, id))
	return b.ev(Event{Kind: Unsubscribed, Node: node, Filter: "t/#"})
}

// routed has p1 publish msg at QoS 1, acknowledged by the broker and never
// forwarded.
func (b *hb) routed(msg string, id uint16) *hb {
	b.accepted("p1", msg, 1).xfer("p1", BrokerNode, publish(id, 1, false, msg))
	return b.xfer(BrokerNode, "p1", pkt(PUBACK, id)).acked("p1", msg)
}

// TestNoLossSubscriptionChanges: a subscription takes effect and ends when
// the broker processes the SUBSCRIBE/UNSUBSCRIBE, whether or not the client
// sees the ack; a replacement does not interrupt the flow [MQTT-3.8.4-3]; an
// unsubscribe excuses only what the broker had not started to send
// [MQTT-3.10.4-3].
func TestNoLossSubscriptionChanges(t *testing.T) {
	// Finding: NoLoss stopped counting a subscription unsubscribed at any
	// later step, so a loss followed by an unsubscribe went unreported.
	startedThenUnsub := base().routed("m1", 1).xfer(BrokerNode, "s1", publish(5, 1, false, "m1")).
		unsubscribe("s1", 2).liveness()
	bufferedThenUnsub := base().routed("m1", 1).unsubscribe("s1", 2).liveness()
	afterUnsub := base().unsubscribe("s1", 2).routed("m1", 1).liveness()
	// The broker processed the UNSUBSCRIBE (UNSUBACK sent) before m1; the
	// client sees the UNSUBACK only later.
	unsubAtBroker := func(filter string) *hb {
		b := base().xfer("s1", BrokerNode, Packet{Type: UNSUBSCRIBE, ID: 2, Filter: filter}).sent(BrokerNode, "s1", pkt(UNSUBACK, 2))
		b.routed("m1", 1).recv("s1", BrokerNode, pkt(UNSUBACK, 2))
		return b.ev(Event{Kind: Unsubscribed, Node: "s1", Filter: "t/#"}).liveness()
	}
	// Finding: a re-SUBSCRIBE at QoS 0 whose SUBACK the client never saw.
	resub := func(qos uint8) *hb {
		b := base().xfer("s1", BrokerNode, subReq(2, "t/#", qos)).sent(BrokerNode, "s1", pkt(SUBACK, 2))
		return b.routed("m1", 1).liveness()
	}
	resubAcked := base().xfer("s1", BrokerNode, pkt(SUBSCRIBE, 2)).xfer(BrokerNode, "s1", pkt(SUBACK, 2)).
		subscribed("s1", "t/#", 0).routed("m1", 1).liveness()
	routedThenDowngrade := base().routed("m1", 1).xfer("s1", BrokerNode, pkt(SUBSCRIBE, 2)).
		xfer(BrokerNode, "s1", pkt(SUBACK, 2)).subscribed("s1", "t/#", 0).liveness()
	// The broker installed the subscription (SUBACK sent) before m1 arrived;
	// the client saw the SUBACK after.
	installedEarly := newHB().connect("s1", false, false).connect("p1", false, false).
		xfer("s1", BrokerNode, pkt(SUBSCRIBE, 1)).sent(BrokerNode, "s1", pkt(SUBACK, 1)).routed("m1", 1).
		recv("s1", BrokerNode, pkt(SUBACK, 1)).subscribed("s1", "t/#", 2).liveness()
	// s1's SUBACK for t/# was lost; its persistence is known from u/#.
	lostSuback := newHB().connect("s1", false, false).xfer("s1", BrokerNode, pkt(SUBSCRIBE, 1)).
		xfer(BrokerNode, "s1", pkt(SUBACK, 1)).subscribed("s1", "u/#", 1).
		xfer("s1", BrokerNode, subReq(2, "t/#", 1)).sent(BrokerNode, "s1", pkt(SUBACK, 2)).
		connect("p1", false, false).routed("m1", 1).liveness()
	// The client's CONNECT asked Clean Start (forced) though its app did not.
	cleanAtBroker := base().routed("m1", 1).opened("s1").xfer("s1", BrokerNode, Packet{Type: CONNECT, Clean: true}).
		sent(BrokerNode, "s1", Packet{Type: CONNACK}).ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, Version: 5}).liveness()
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "unsubscribed after the broker started sending it", h: startedThenUnsub, violate: true, reason: `msg "m1"`},
		{name: "unsubscribed while it was buffered (MAY drop)", h: bufferedThenUnsub},
		{name: "accepted after the unsubscription", h: afterUnsub},
		{name: "unsubscription in effect at the broker's UNSUBACK", h: unsubAtBroker("")},
		{name: "unsubscription with its filter recorded", h: unsubAtBroker("t/#")},
		{name: "re-subscribed at QoS 0, SUBACK lost", h: resub(0)},
		{name: "re-subscribed at QoS 1, SUBACK lost", h: resub(1), violate: true, reason: `msg "m1"`},
		{name: "re-subscribed at QoS 0, SUBACK seen", h: resubAcked},
		{name: "routed before a downgrade is still owed", h: routedThenDowngrade, violate: true, reason: `msg "m1"`},
		{name: "subscription in effect at the broker's SUBACK", h: installedEarly, violate: true, reason: `msg "m1"`},
		{name: "first SUBACK lost, filter recorded", h: lostSuback, violate: true, reason: `subscribed to "t/#"`},
		{name: "clean start seen by the broker", h: cleanAtBroker},
	})
}

func TestInvariantQoS2ExactlyOnce(t *testing.T) {
	runInvariantCases(t, QoS2ExactlyOnce, []invariantCase{
		{name: "once", h: base().qos2("m1", 1, 1)},
		{name: "QoS2 twice", h: base().qos2("m1", 1, 1).delivered("s1", "m1", 2), violate: true, reason: "delivered again at QoS 2"},
		{name: "QoS1 twice allowed", h: base().qos1("m1", 1, 1).delivered("s1", "m1", 1)},
		{name: "QoS0 twice", h: base().accepted("p1", "m1", 0).delivered("s1", "m1", 0).delivered("s1", "m1", 0), violate: true, reason: "QoS 0"},
		{name: "QoS2 once each to two subscribers", h: base().qos2("m1", 1, 1).delivered("s2", "m1", 2)},
		{name: "created", h: base().delivered("s1", "ghost", 1), violate: true, reason: "no client published"},
		{name: "created by the broker", h: base().sent(BrokerNode, "s1", publish(1, 1, false, "ghost")).delivered("s1", "ghost", 1),
			violate: true, reason: "no client published"},
		{name: "sent but never accepted (publisher crashed)", h: base().sent("p1", BrokerNode, publish(1, 1, false, "m1")).
			crash("p1", CrashAfterAction).delivered("s1", "m1", 1)},
		{name: "stored, crashed before Accepted, resent after the reboot", h: persistedNotAccepted()},
		{name: "a will message its CONNECT carried", h: base().sent("p1", BrokerNode, Packet{Type: CONNECT, Will: true, QoS: 1, Topic: "w/p1", Msg: "p1-w1"}).
			sent(BrokerNode, "s1", publish(1, 1, false, "p1-w1")).delivered("s1", "p1-w1", 1)},
		{name: "a will message no CONNECT carried", h: base().sent("p1", BrokerNode, Packet{Type: CONNECT, Will: true, QoS: 1, Topic: "w/p1", Msg: "p1-w1"}).
			sent(BrokerNode, "s1", publish(1, 1, false, "p1-w2")).delivered("s1", "p1-w2", 1), violate: true, reason: "no client published"},
	})
}

// retainedLive subscribes s1 to t/# (the filter recorded) and delivers
// msg m1, which p1 published at QoS 2 with RETAIN=1 when retain, live.
func retainedLive(retain bool) *hb {
	b := newHB().connect("s1", false, false)
	b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 1, QoS: 2, Filter: "t/#"}).xfer(BrokerNode, "s1", pkt(SUBACK, 1))
	b.subscribed("s1", "t/#", 2).connect("p1", false, false)
	b.ev(Event{Kind: Accepted, Node: "p1", Msg: "m1", Topic: "t/a", QoS: 2, Retain: retain})
	return b.delivered("s1", "m1", 2)
}

// retainedQoS1Resent has s1 send two SUBSCRIBEs after retainedLive(true)
// (t/a at QoS 1, t/# at QoS 2) and deliver the first one's retained copy
// at QoS 1 on packet id 1, then again with DUP=dup on packet id id: the
// flow of seed 67315335640, before the second SUBSCRIBE's copy.
func retainedQoS1Resent(id uint16, dup bool) *hb {
	b := retainedLive(true)
	b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, QoS: 1, Filter: "t/a"}).xfer(BrokerNode, "s1", pkt(SUBACK, 2))
	b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 3, QoS: 2, Filter: "t/#"}).xfer(BrokerNode, "s1", pkt(SUBACK, 3))
	b.ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true, Packet: Packet{Type: PUBLISH, ID: 1, QoS: 1}})
	return b.ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true, Packet: Packet{Type: PUBLISH, ID: id, QoS: 1, Dup: dup}})
}

// resubscribe has the broker take a SUBSCRIBE of filter from s1 and deliver
// m1 to it with RETAIN=1 (a retained copy, if the SUBSCRIBE brought it).
func (b *hb) resubscribe(filter string) *hb {
	b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, QoS: 2, Filter: filter}).xfer(BrokerNode, "s1", pkt(SUBACK, 2))
	return b.retainedCopy()
}

// retainedCopy delivers m1 to s1 with RETAIN=1.
func (b *hb) retainedCopy() *hb {
	return b.ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 2, Retain: true})
}

func TestInvariantQoS2ExactlyOnceRetained(t *testing.T) {
	empty := func() *hb {
		return base().accepted("p1", "", 2).delivered("s1", "", 2).delivered("s1", "", 2).delivered("s1", "", 0)
	}
	runInvariantCases(t, QoS2ExactlyOnce, []invariantCase{
		{name: "retained copy a new SUBSCRIBE brought", h: retainedLive(true).resubscribe("t/a")},
		{name: "retained copy of a wildcard SUBSCRIBE", h: retainedLive(true).resubscribe("+/a")},
		{name: "one retained copy per SUBSCRIBE", h: retainedLive(true).resubscribe("t/a").resubscribe("t/#")},
		{name: "two retained copies for one SUBSCRIBE", h: retainedLive(true).resubscribe("t/a").retainedCopy(),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "a QoS 1 retained copy again (at least once)", h: retainedLive(true).
			xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, QoS: 1, Filter: "t/a"}).xfer(BrokerNode, "s1", pkt(SUBACK, 2)).
			ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true}).
			ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true})},
		// Seed 67315335640: a QoS 1 retained copy resent (DUP=1, its packet
		// id) after a half-open connection, then the QoS 2 copy the second
		// SUBSCRIBE brought: the resend is not a new copy.
		{name: "QoS 1 retained copy resent, then the QoS 2 one", h: retainedQoS1Resent(1, true).retainedCopy()},
		{name: "QoS 1 retained copy resent, then the QoS 2 one twice", h: retainedQoS1Resent(1, true).retainedCopy().retainedCopy(),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "QoS 1 RETAIN=1 copy again on another id takes a SUBSCRIBE", h: retainedQoS1Resent(2, true).retainedCopy(),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "QoS 1 RETAIN=1 copy again without DUP takes a SUBSCRIBE", h: retainedQoS1Resent(1, false).retainedCopy(),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "RETAIN=1 copy and no SUBSCRIBE after the publish", h: retainedLive(true).retainedCopy(),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "RETAIN=1 copy of a message published without RETAIN", h: retainedLive(false).resubscribe("t/a"),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "SUBSCRIBE that does not match the topic", h: retainedLive(true).resubscribe("t/b"),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "live copy again after a SUBSCRIBE", h: retainedLive(true).resubscribe("t/a").delivered("s1", "m1", 2),
			violate: true, reason: "delivered again at QoS 2"},
		{name: "an empty payload (no id) delivered thrice", h: empty()},
		{name: "an empty payload nobody published", h: base().delivered("s1", "", 1), violate: true, reason: "no client published"},
	})
}

// persistedNotAccepted: p1 stored m1 (QoS 2) and crashed before its Publish
// completed Accepted (crashy seed 4); the rebooted engine resends it from
// its store with DUP=1 and s1 gets it. The message was published (a client
// sent it): not created; and never promised to the app, so NoLoss does not
// ask for it.
func persistedNotAccepted() *hb {
	b := base().crash("p1", CrashBeforeAction).ev(Event{Kind: Restart, Node: "p1"}).connect("p1", true, true)
	b.xfer("p1", BrokerNode, publish(1, 2, true, "m1")).xfer(BrokerNode, "p1", pkt(PUBREC, 1))
	return b.xfer(BrokerNode, "s1", publish(3, 2, false, "m1")).delivered("s1", "m1", 2)
}

func TestPersistedNotAcceptedNoViolation(t *testing.T) {
	b := persistedNotAccepted()
	b.xfer("p1", BrokerNode, pkt(PUBREL, 1)).xfer(BrokerNode, "p1", pkt(PUBCOMP, 1))
	b.xfer("s1", BrokerNode, pkt(PUBREC, 3)).xfer(BrokerNode, "s1", pkt(PUBREL, 3)).xfer("s1", BrokerNode, pkt(PUBCOMP, 3))
	b.liveness()
	if vs := Check(b.h, Options{Only: SetOf(NoLoss, QoS2ExactlyOnce)}); len(vs) != 0 {
		t.Fatalf("want no NoLoss or QoS2ExactlyOnce violation, got %v", vs)
	}
	// Canary: had no client sent it, the delivery is a creation.
	c := base().crash("p1", CrashBeforeAction).xfer(BrokerNode, "s1", publish(3, 2, false, "m1")).delivered("s1", "m1", 2)
	if vs := Check(c.h, Options{Only: SetOf(QoS2ExactlyOnce)}); len(vs) != 1 || !strings.Contains(vs[0].Reason, "created") {
		t.Fatalf("canary: want a creation, got %v", vs)
	}
}

// unackedQoS1 leaves m1 (and m2) of p1 in flight and drops the connection.
func unackedQoS1(msgs ...string) *hb {
	b := base()
	for i, m := range msgs {
		b.accepted("p1", m, 1).sent("p1", BrokerNode, publish(uint16(i+1), 1, false, m))
	}
	return b.closed("p1")
}

func TestInvariantRetransmit(t *testing.T) {
	qos2Relsent := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
	qos2Relsent.xfer(BrokerNode, "p1", pkt(PUBREC, 1)).sent("p1", BrokerNode, pkt(PUBREL, 1)).closed("p1")
	qos2Rec := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
	qos2Rec.xfer(BrokerNode, "p1", pkt(PUBREC, 1)).closed("p1")
	qos2RecCrash := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
	qos2RecCrash.xfer(BrokerNode, "p1", pkt(PUBREC, 1)).crash("p1", CrashAfterAction).closed("p1")
	mochi := base().qos2("m1", 1, 1).crash("p1", CrashBetweenSteps).connect("p1", true, true)
	ackedCrash := base().accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
	ackedCrash.recv("p1", BrokerNode, pkt(PUBACK, 1)).crash("p1", CrashAfterAction).closed("p1").connect("p1", true, true)
	ackedNoCrash := base().accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
	ackedNoCrash.recv("p1", BrokerNode, pkt(PUBACK, 1)).closed("p1").connect("p1", true, true)
	toSub := base().accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
	toSub.sent(BrokerNode, "s1", publish(7, 1, false, "m1"))
	toSubOK := toSub.clone()
	toSubOK.closed("s1").connect("s1", true, true).sent(BrokerNode, "s1", publish(7, 1, true, "m1"))
	differs := publish(1, 1, true, "m9")
	runInvariantCases(t, Retransmit, []invariantCase{
		{name: "resend after session-present reconnect", h: unackedQoS1("m1").connect("p1", true, true).sent("p1", BrokerNode, publish(1, 1, true, "m1"))},
		{name: "resend in original order", h: unackedQoS1("m1", "m2").connect("p1", true, true).
			sent("p1", BrokerNode, publish(1, 1, true, "m1")).sent("p1", BrokerNode, publish(2, 1, true, "m2"))},
		{name: "resend out of order", h: unackedQoS1("m1", "m2").connect("p1", true, true).
			sent("p1", BrokerNode, publish(2, 1, true, "m2")).sent("p1", BrokerNode, publish(1, 1, true, "m1")),
			violate: true, reason: "out of original order"},
		{name: "resend on the same connection", h: base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1")).
			sent("p1", BrokerNode, publish(1, 1, true, "m1")), violate: true, reason: "same connection"},
		{name: "resend with DUP=0", h: unackedQoS1("m1").connect("p1", true, true).sent("p1", BrokerNode, publish(1, 1, false, "m1")),
			violate: true, reason: "DUP=0"},
		{name: "resend with another payload", h: unackedQoS1("m1").connect("p1", true, true).sent("p1", BrokerNode, differs),
			violate: true, reason: "differs"},
		{name: "DUP=1 after Session Present=0", h: unackedQoS1("m1").connect("p1", false, true).sent("p1", BrokerNode, publish(1, 1, true, "m1")),
			violate: true, reason: "resends nothing"},
		{name: "PUBLISH after its PUBREL", h: qos2Relsent.connect("p1", true, true).sent("p1", BrokerNode, publish(1, 2, true, "m1")),
			violate: true, reason: "after its PUBREL"},
		{name: "PUBLISH after PUBREC", h: qos2Rec.connect("p1", true, true).sent("p1", BrokerNode, publish(1, 2, true, "m1")),
			violate: true, reason: "PUBREL was due"},
		{name: "PUBLISH after PUBREC and a crash", h: qos2RecCrash.connect("p1", true, true).sent("p1", BrokerNode, publish(1, 2, true, "m1"))},
		{name: "PUBLISH after PUBCOMP and a restart", h: mochi.sent("p1", BrokerNode, publish(1, 2, true, "m1")),
			violate: true, reason: "after its PUBREL"},
		{name: "acked QoS1 resent after a crash", h: ackedCrash.sent("p1", BrokerNode, publish(1, 1, true, "m1"))},
		{name: "acked QoS1 resent without a crash", h: ackedNoCrash.sent("p1", BrokerNode, publish(1, 1, true, "m1")),
			violate: true, reason: "after it was acknowledged"},
		{name: "broker resend on a new connection", h: toSubOK},
		{name: "broker resend on the same connection", h: toSub.sent(BrokerNode, "s1", publish(7, 1, true, "m1")),
			violate: true, reason: "same connection"},
	})
}

// TestRetransmitUnnamedIDReused: a message on id 5 is acknowledged, m2
// goes out on id 2, the broker crashes, and after s1's session-present
// reconnect it resends m2, then a PUBLISH with DUP=1 on id 5 carrying the
// first message's content. A named message is the first one resent out of
// its original order [MQTT-4.6.0-1]; a message the history cannot name (an
// empty payload: a retained message's clear) may be a later clear that took
// the freed id, its first send lost to the crash, so it is no resend of the
// acknowledged one (swarm seeds 66703 and 99702); it may still be that
// one, so it is held to both orders on later connections (swarm seed
// 114456).
func TestRetransmitUnnamedIDReused(t *testing.T) {
	unnamed := func(id uint16, dup bool) Packet { return Packet{Type: PUBLISH, ID: id, QoS: 1, Dup: dup, Topic: "t/a"} }
	m2 := publish(2, 1, true, "m2")
	// resent sends first (acknowledged or not) and m2, crashes the broker,
	// reconnects s1 with Session Present 1 and sends resends in order.
	resent := func(first Packet, acked bool, resends ...Packet) *hb {
		b := base().xfer(BrokerNode, "s1", first)
		if acked {
			b.xfer("s1", BrokerNode, pkt(PUBACK, first.ID))
		}
		b.xfer(BrokerNode, "s1", publish(2, 1, false, "m2"))
		b.crash(BrokerNode, CrashAfterAction).closed("s1").connect("s1", true, true)
		for _, p := range resends {
			b.sent(BrokerNode, "s1", p)
		}
		return b
	}
	acked := base().xfer(BrokerNode, "s1", unnamed(5, false)).xfer("s1", BrokerNode, pkt(PUBACK, 5))
	runInvariantCases(t, Retransmit, []invariantCase{
		{name: "unnamed, acknowledged, its id sent again after a later message",
			h: resent(unnamed(5, false), true, m2, unnamed(5, true))},
		{name: "named, acknowledged, resent after a later message",
			h:       resent(publish(5, 1, false, "m1"), true, m2, publish(5, 1, true, "m1")),
			violate: true, reason: "out of original order"},
		{name: "named, acknowledged, resent before a later message",
			h: resent(publish(5, 1, false, "m1"), true, publish(5, 1, true, "m1"), m2)},
		{name: "unnamed, in flight, resent after a later message",
			h:       resent(unnamed(5, false), false, m2, unnamed(5, true)),
			violate: true, reason: "out of original order"},
		// Seed 114456: the crash may instead have lost the acknowledgement,
		// so the unnamed send may keep its first order too: resent before
		// m2 again on the next connection, it is in order either way.
		{name: "unnamed, acknowledged, sent again after a crash and resent in that order",
			h: resent(unnamed(5, false), true, unnamed(5, true), m2).closed("s1").connect("s1", true, true).
				sent(BrokerNode, "s1", unnamed(5, true)).sent(BrokerNode, "s1", m2)},
		{name: "unnamed, acknowledged, sent again after a crash, resent after a message first sent later",
			h: resent(unnamed(5, false), true, unnamed(5, true), m2, publish(3, 1, false, "m3")).closed("s1").connect("s1", true, true).
				sent(BrokerNode, "s1", publish(3, 1, true, "m3")).sent(BrokerNode, "s1", unnamed(5, true)),
			violate: true, reason: "out of original order"},
		{name: "unnamed, acknowledged, DUP=1 on its connection",
			h: acked.sent(BrokerNode, "s1", unnamed(5, true)), violate: true, reason: "resends nothing"},
	})
}

func TestInvariantPubrelAnswered(t *testing.T) {
	unanswered := base().accepted("p1", "m1", 2).xfer(BrokerNode, "s1", publish(3, 2, false, "m1"))
	unanswered.xfer("s1", BrokerNode, pkt(PUBREC, 3)).xfer(BrokerNode, "s1", pkt(PUBREL, 3))
	excused := unanswered.clone().closed("s1")
	resent := excused.clone().connect("s1", true, true).xfer(BrokerNode, "s1", pkt(PUBREL, 3))
	runInvariantCases(t, PubrelAnswered, []invariantCase{
		{name: "answered", h: base().qos2("m1", 1, 1).liveness()},
		{name: "unanswered", h: unanswered.clone().liveness(), violate: true, reason: "PUBREL id 3 from broker never answered"},
		{name: "unanswered, no liveness phase", h: unanswered},
		{name: "connection closed first", h: excused.clone().liveness()},
		{name: "reconnected (CONNECT) first", h: unanswered.clone().sent("s1", BrokerNode, pkt(CONNECT, 0)).liveness()},
		{name: "resent after reconnect, unanswered", h: resent.clone().liveness(), violate: true, reason: "never answered"},
		{name: "resent after reconnect, answered", h: resent.xfer("s1", BrokerNode, pkt(PUBCOMP, 3)).liveness()},
	})
}

func TestInvariantPacketIDUnique(t *testing.T) {
	inflight := func() *hb { return base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1")) }
	qos2 := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1")).recv("p1", BrokerNode, pkt(PUBREC, 1))
	refused := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
	refused.recv("p1", BrokerNode, Packet{Type: PUBREC, ID: 1, Reason: 0x97})
	runInvariantCases(t, PacketIDUnique, []invariantCase{
		{name: "distinct ids", h: base().qos1("m1", 1, 1).qos1("m2", 2, 2)},
		{name: "id reused after PUBACK", h: base().qos1("m1", 1, 1).qos1("m2", 1, 1)},
		{name: "id reused while in flight", h: inflight().sent("p1", BrokerNode, publish(1, 1, false, "m2")),
			violate: true, reason: "reuses id 1"},
		{name: "SUBSCRIBE reuses a PUBLISH id", h: inflight().sent("p1", BrokerNode, pkt(SUBSCRIBE, 1)),
			violate: true, reason: "new SUBSCRIBE"},
		{name: "same id in both directions", h: inflight().sent(BrokerNode, "p1", publish(1, 1, false, "m7"))},
		{name: "broker reuses an id towards a subscriber", h: inflight().sent(BrokerNode, "s1", publish(4, 1, false, "m1")).
			sent(BrokerNode, "s1", publish(4, 1, false, "m2")), violate: true, reason: "[MQTT-2.2.1-4]"},
		{name: "id 0", h: base().sent("p1", BrokerNode, publish(0, 1, false, "m1")), violate: true, reason: "packet id 0"},
		{name: "QoS2 id reused before PUBCOMP", h: qos2.sent("p1", BrokerNode, publish(1, 2, false, "m2")),
			violate: true, reason: "reuses id 1"},
		{name: "QoS2 id reused after PUBREC 0x97", h: refused.sent("p1", BrokerNode, publish(1, 2, false, "m2"))},
		{name: "id reused after Session Present=0", h: inflight().closed("p1").connect("p1", false, true).
			sent("p1", BrokerNode, publish(1, 1, false, "m2"))},
		{name: "SUBSCRIBE id freed by the connection's end", h: base().sent("p1", BrokerNode, pkt(SUBSCRIBE, 9)).
			closed("p1").connect("p1", true, true).sent("p1", BrokerNode, pkt(SUBSCRIBE, 9))},
		{name: "PUBLISH refused for id 0 (v5)", h: base().ev(refusedEv(Packet{Type: PUBLISH, QoS: 1}, "m1", "", "[MQTT-2.2.1-3] packet identifier 0 in PUBLISH")),
			violate: true, reason: `new PUBLISH of msg "m1" to broker never sent`},
		{name: "SUBSCRIBE refused for id 0 (3.1.1)", h: base().ev(refusedEv(Packet{Type: SUBSCRIBE, QoS: 1}, "", "t/#", "[MQTT-2.3.1-1] packet identifier 0 in SUBSCRIBE")),
			violate: true, reason: "SUBSCRIBE of t/# to broker never sent"},
		{name: "UNSUBSCRIBE refused for id 0", h: base().ev(refusedEv(Packet{Type: UNSUBSCRIBE}, "", "t/#", "[MQTT-2.2.1-3] packet identifier 0 in UNSUBSCRIBE")),
			violate: true, reason: "[MQTT-2.2.1-3]"},
		{name: "PUBLISH refused for its size", h: base().ev(refusedEv(Packet{Type: PUBLISH, QoS: 1}, "m1", "", "[MQTT-3.2.2-15] PUBLISH of 5000 bytes above the Maximum Packet Size"))},
		{name: "QoS 0 PUBLISH refusal is not an id's", h: base().ev(refusedEv(Packet{Type: PUBLISH}, "m1", "", "[MQTT-2.2.1-3] packet identifier 0 in PUBLISH"))},
	})
}

// refusedEv is p1's Refused event of packet p (a PUBLISH of msg, or a
// SUBSCRIBE or UNSUBSCRIBE of filter) with the codec's refusal reason.
func refusedEv(p Packet, msg, filter, reason string) Event {
	return Event{Kind: Refused, Node: "p1", Peer: BrokerNode, Packet: p, Msg: msg, Filter: filter, QoS: p.QoS, Reason: reason}
}

func TestInvariantSendQuota(t *testing.T) {
	three := func(b *hb, acks bool) *hb {
		for i := uint16(1); i <= 3; i++ {
			b.sent("p1", BrokerNode, publish(i, 1, false, "m"))
			if acks {
				b.recv("p1", BrokerNode, pkt(PUBACK, i))
			}
		}
		return b
	}
	v311 := newHB().opened("p1").ev(Event{Kind: Connected, Node: "p1", Version: 4, ReceiveMax: 2})
	perConn := newHB().connectRM("p1", false, false, 2)
	perConn.sent("p1", BrokerNode, publish(1, 1, false, "a")).sent("p1", BrokerNode, publish(2, 1, false, "b")).closed("p1")
	perConn.connectRM("p1", true, true, 2).sent("p1", BrokerNode, publish(3, 1, false, "c"))
	runInvariantCases(t, SendQuota, []invariantCase{
		{name: "within Receive Maximum", h: three(newHB().connectRM("p1", false, false, 3), false)},
		{name: "over Receive Maximum", h: three(newHB().connectRM("p1", false, false, 2), false),
			violate: true, reason: "above the broker's Receive Maximum 2"},
		{name: "acks return quota", h: three(newHB().connectRM("p1", false, false, 1), true)},
		{name: "PUBREC 0x80 returns quota", h: newHB().connectRM("p1", false, false, 1).sent("p1", BrokerNode, publish(1, 2, false, "a")).
			recv("p1", BrokerNode, Packet{Type: PUBREC, ID: 1, Reason: 0x80}).sent("p1", BrokerNode, publish(2, 2, false, "b"))},
		{name: "PUBREC 0x00 keeps the quota", h: newHB().connectRM("p1", false, false, 1).sent("p1", BrokerNode, publish(1, 2, false, "a")).
			recv("p1", BrokerNode, pkt(PUBREC, 1)).sent("p1", BrokerNode, publish(2, 2, false, "b")), violate: true, reason: "Receive Maximum 1"},
		{name: "v3.1.1 has no quota", h: three(v311, false)},
		{name: "quota is per connection", h: perConn},
		{name: "a CONNECT starts a new quota", h: newHB().connectRM("p1", false, false, 1).sent("p1", BrokerNode, publish(1, 1, false, "a")).
			sent("p1", BrokerNode, pkt(CONNECT, 0)).sent("p1", BrokerNode, publish(1, 1, true, "a")).
			ev(Event{Kind: Connected, Node: "p1", SessionPresent: true, HadState: true, Version: 5, ReceiveMax: 1})},
		{name: "resends before CONNACK over quota", h: newHB().connectRM("p1", false, false, 2).sent("p1", BrokerNode, publish(1, 1, false, "a")).
			sent("p1", BrokerNode, publish(2, 1, false, "b")).sent("p1", BrokerNode, pkt(CONNECT, 0)).
			sent("p1", BrokerNode, publish(1, 1, true, "a")).sent("p1", BrokerNode, publish(2, 1, true, "b")).
			ev(Event{Kind: Connected, Node: "p1", SessionPresent: true, HadState: true, Version: 5, ReceiveMax: 1}),
			violate: true, reason: "before CONNACK"},
	})
}

// acceptedOn adds an Accepted event on a given topic.
func (b *hb) acceptedOn(node, msg, topic string, qos uint8) *hb {
	return b.ev(Event{Kind: Accepted, Node: node, Msg: msg, Topic: topic, QoS: qos})
}

func TestInvariantOrder(t *testing.T) {
	three := func() *hb { return base().accepted("p1", "m1", 1).accepted("p1", "m2", 1).accepted("p1", "m3", 1) }
	topics := base().acceptedOn("p1", "a", "t/a", 1).acceptedOn("p1", "b", "t/b", 1)
	twoPubs := base().accepted("p1", "a", 1).accepted("p2", "b", 1)
	runInvariantCases(t, Order, []invariantCase{
		{name: "in order", h: three().delivered("s1", "m1", 1).delivered("s1", "m2", 1).delivered("s1", "m3", 1)},
		{name: "reversed", h: three().delivered("s1", "m2", 1).delivered("s1", "m1", 1),
			violate: true, reason: `first delivery of msg "m1"`},
		{name: "redelivery after resend (1,2,1,2,3)", h: three().delivered("s1", "m1", 1).delivered("s1", "m2", 1).
			delivered("s1", "m1", 1).delivered("s1", "m2", 1).delivered("s1", "m3", 1)},
		{name: "gap is not disorder", h: three().delivered("s1", "m1", 1).delivered("s1", "m3", 1)},
		{name: "per subscriber", h: three().delivered("s1", "m2", 1).delivered("s2", "m1", 1)},
		{name: "topics are independent", h: topics.delivered("s1", "b", 1).delivered("s1", "a", 1)},
		{name: "publishers are independent", h: twoPubs.delivered("s1", "b", 1).delivered("s1", "a", 1)},
		{name: "QoS0 deliveries are not ordered", h: three().delivered("s1", "m2", 0).delivered("s1", "m1", 0)},
		{name: "an empty payload (no id) takes no place", h: base().accepted("p1", "m1", 1).accepted("p1", "", 1).accepted("p1", "m2", 1).
			delivered("s1", "", 1).delivered("s1", "m1", 1).delivered("s1", "m2", 1).delivered("s1", "", 1)},
		{name: "reversed around an empty payload", h: base().accepted("p1", "m1", 1).accepted("p1", "", 1).accepted("p1", "m2", 1).
			delivered("s1", "", 1).delivered("s1", "m2", 1).delivered("s1", "m1", 1), violate: true, reason: `first delivery of msg "m1"`},
	})
}

func TestInvariantNoStuck(t *testing.T) {
	fail := Event{Kind: Failed, Node: "s1", Reason: "unknown PUBREL 3"}
	runInvariantCases(t, NoStuck, []invariantCase{
		{name: "quiescent", h: base().qos1("m1", 1, 1).liveness()},
		{name: "no liveness phase", h: base().qos1("m1", 1, 1)},
		{name: "stuck", h: base().kind(LivenessStart).ev(Event{Kind: Stuck, Reason: "s1 has 1 inflight"}),
			violate: true, reason: "s1 has 1 inflight"},
		{name: "failed after faults stopped", h: base().kind(LivenessStart).ev(fail).kind(Quiescent),
			violate: true, reason: "unknown PUBREL 3"},
		{name: "failed during the safety phase", h: base().ev(fail).liveness()},
		{name: "never quiet", h: base().kind(LivenessStart), violate: true, reason: "no Quiescent"},
		{name: "quiet before liveness only", h: base().kind(Quiescent).kind(LivenessStart), violate: true, reason: "no Quiescent"},
	})
}

func TestInvariantSessionPresent(t *testing.T) {
	cleanSP := newHB().opened("s1").ev(Event{Kind: Connected, Node: "s1", CleanStart: true, SessionPresent: true})
	stateless := func() *hb { return newHB().connect("p1", false, false).closed("p1").connect("s1", true, false) }
	withState := func() *hb {
		b := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
		return b.xfer(BrokerNode, "p1", pkt(PUBREC, 1)).closed("p1")
	}
	answer := withState().connect("p1", false, true).accepted("p1", "m2", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m2"))
	answer.xfer(BrokerNode, "p1", pkt(PUBREC, 1)).sent("p1", BrokerNode, pkt(PUBREL, 1))
	brokerDup := base().sent(BrokerNode, "s1", publish(5, 1, false, "m1")).closed("s1").connect("s1", false, true)
	runInvariantCases(t, SessionPresent, []invariantCase{
		{name: "Clean Start=1 answered with Session Present=1", h: cleanSP, violate: true, reason: "[MQTT-3.2.2-2]"},
		{name: "no state, SP=1, keeps sending", h: stateless().sent("s1", BrokerNode, pkt(SUBSCRIBE, 1)),
			violate: true, reason: "it must close"},
		{name: "no state, SP=1, stays open", h: stateless(), violate: true, reason: "kept the connection open"},
		{name: "no state, SP=1, closes", h: stateless().sent("s1", BrokerNode, pkt(DISCONNECT, 0)).closed("s1")},
		{name: "state, SP=1, resends", h: withState().connect("p1", true, true).sent("p1", BrokerNode, pkt(PUBREL, 1))},
		{name: "state, SP=0, resends PUBREL", h: withState().connect("p1", false, true).sent("p1", BrokerNode, pkt(PUBREL, 1)),
			violate: true, reason: "PUBREL id 1"},
		{name: "state, SP=0, resends PUBLISH", h: withState().connect("p1", false, true).sent("p1", BrokerNode, publish(1, 2, true, "m1")),
			violate: true, reason: "DUP=1 after Session Present=0"},
		{name: "state, SP=0, new flow's PUBREL", h: answer},
		{name: "broker resends after SP=0", h: brokerDup.sent(BrokerNode, "s1", publish(5, 1, true, "m1")),
			violate: true, reason: "[MQTT-3.2.2-5]"},
	})
}

// TestOrderExpiringResend: a message with a Message Expiry Interval that
// the broker received twice (its publisher resent it) may come after the
// next one: its first copy expired [MQTT-3.3.2-5] and the resend is a new
// message to the broker [MQTT-4.3.2-5]. Without the expiry, or received
// once, it is out of order.
func TestOrderExpiringResend(t *testing.T) {
	late := func(expiry uint32, resent bool) *hb {
		m1 := publish(1, 1, false, "m1")
		m1.Expiry = expiry
		b := base().accepted("p1", "m1", 1).accepted("p1", "m2", 1)
		b.xfer("p1", BrokerNode, m1).xfer("p1", BrokerNode, publish(2, 1, false, "m2"))
		if resent {
			m1.Dup = true
			b.xfer("p1", BrokerNode, m1)
		}
		return b.delivered("s1", "m2", 1).delivered("s1", "m1", 1)
	}
	runInvariantCases(t, Order, []invariantCase{
		{name: "expiring, resent", h: late(3, true)},
		{name: "expiring, received once", h: late(3, false), violate: true, reason: `first delivery of msg "m1"`},
		{name: "resent, no expiry", h: late(0, true), violate: true, reason: `first delivery of msg "m1"`},
	})
}

// TestOrderResendAfterLater: m1 and m2 reach the broker, then the
// publisher resends both in order (m1 with DUP=1, a new publication to the
// broker at QoS 1 [MQTT-4.3.2-5], then m2 [MQTT-4.6.0-1]); a subscriber
// that missed m1's first copy gets m2, then m1's resend, then m2 again:
// the "1,2,3,2,3,4" of §4.6 without its first 1, final copies in order
// (swarm seed 176452). It is out of order when the resend reached the
// broker before m2 did, after the late delivery, at QoS 2 (no new
// publication), or when m2 was never received again.
func TestOrderResendAfterLater(t *testing.T) {
	type shape struct {
		qos                       uint8
		resendFirst, deliverFirst bool // m1's resend before m2's first receipt; the deliveries before the resends
		laterAgain                bool // m2 resent after m1's resend
	}
	late := func(sh shape) *hb {
		b := base().accepted("p1", "m1", sh.qos).accepted("p1", "m2", sh.qos)
		m1, m2 := publish(1, sh.qos, false, "m1"), publish(2, sh.qos, false, "m2")
		d1, d2 := m1, m2
		d1.Dup, d2.Dup = true, true
		b.xfer("p1", BrokerNode, m1)
		if sh.resendFirst {
			b.xfer("p1", BrokerNode, d1)
		}
		b.xfer("p1", BrokerNode, m2)
		if sh.deliverFirst {
			b.delivered("s1", "m2", sh.qos).delivered("s1", "m1", sh.qos)
		}
		if !sh.resendFirst {
			b.xfer("p1", BrokerNode, d1)
		}
		if sh.laterAgain {
			b.xfer("p1", BrokerNode, d2)
		}
		if !sh.deliverFirst {
			b.delivered("s1", "m2", sh.qos).delivered("s1", "m1", sh.qos).delivered("s1", "m2", sh.qos)
		}
		return b
	}
	lateM1 := `first delivery of msg "m1"`
	runInvariantCases(t, Order, []invariantCase{
		{name: "both resent after m2, m1 late (2,1,2)", h: late(shape{qos: 1, laterAgain: true})},
		{name: "m1 resent before m2 reached the broker", h: late(shape{qos: 1, resendFirst: true, laterAgain: true}), violate: true, reason: lateM1},
		{name: "m1 late before any resend", h: late(shape{qos: 1, deliverFirst: true, laterAgain: true}), violate: true, reason: lateM1},
		{name: "QoS 2 resend is no new publication", h: late(shape{qos: 2, laterAgain: true}), violate: true, reason: lateM1},
		{name: "m1 resent, m2 never again", h: late(shape{qos: 1}), violate: true, reason: lateM1},
	})
}

// TestOrderRetainedCopy: a retained copy that a later SUBSCRIBE brought
// (RETAIN=1) is a new publication of an old message [MQTT-3.3.1-9], not
// out of order; the same copy without RETAIN, or with no SUBSCRIBE after
// the publish, is.
func TestOrderRetainedCopy(t *testing.T) {
	late := func(retain, resubscribe bool) *hb {
		b := base()
		b.ev(Event{Kind: Accepted, Node: "p1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true}).accepted("p1", "m2", 1)
		b.delivered("s1", "m2", 1)
		if resubscribe {
			b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, QoS: 1, Filter: "t/a"}).xfer(BrokerNode, "s1", pkt(SUBACK, 2))
		}
		return b.ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: retain})
	}
	runInvariantCases(t, Order, []invariantCase{
		{name: "retained copy of a new SUBSCRIBE", h: late(true, true)},
		{name: "live copy late", h: late(false, true), violate: true, reason: `first delivery of msg "m1"`},
		{name: "RETAIN=1 with no SUBSCRIBE after the publish", h: late(true, false), violate: true, reason: `first delivery of msg "m1"`},
	})
}

// TestOrderRetainedCopyAgain: the retained copy a SUBSCRIBE brought is
// delivered, then a later message of the stream, then the retained copy
// again (its QoS 1 resend after a reconnect, RETAIN=1 [MQTT-4.3.2-4]): no
// place in the stream either. The live copy (RETAIN=0) first delivered
// there is out of order [MQTT-4.6.0-5].
func TestOrderRetainedCopyAgain(t *testing.T) {
	again := func(retain bool) *hb {
		b := base()
		b.ev(Event{Kind: Accepted, Node: "p1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true}).accepted("p1", "m2", 1)
		b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, QoS: 1, Filter: "t/a"}).xfer(BrokerNode, "s1", pkt(SUBACK, 2))
		b.ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: true})
		b.delivered("s1", "m2", 1)
		return b.ev(Event{Kind: Delivered, Node: "s1", Msg: "m1", Topic: "t/a", QoS: 1, Retain: retain})
	}
	runInvariantCases(t, Order, []invariantCase{
		{name: "retained copy redelivered", h: again(true)},
		{name: "live copy after the retained one, late", h: again(false), violate: true, reason: `first delivery of msg "m1"`},
	})
}

// TestNoLossSubackUnsubackOneRead: the client reads a SUBACK and the
// UNSUBACK of the same filter in one read, then records Subscribed and
// Unsubscribed; the broker received the message after its UNSUBACK, so
// nothing is owed. Had the broker not sent the UNSUBACK, it is.
func TestNoLossSubackUnsubackOneRead(t *testing.T) {
	h := func(unsubacked bool) *hb {
		b := newHB().connect("s1", false, false)
		b.sent("s1", BrokerNode, subReq(1, "t/#", 1)).sent("s1", BrokerNode, Packet{Type: UNSUBSCRIBE, ID: 2, Filter: "t/#"})
		b.recv(BrokerNode, "s1", subReq(1, "t/#", 1)).recv(BrokerNode, "s1", Packet{Type: UNSUBSCRIBE, ID: 2, Filter: "t/#"})
		b.sent(BrokerNode, "s1", Packet{Type: SUBACK, ID: 1, Reason: 1})
		if !unsubacked {
			b.recv("s1", BrokerNode, Packet{Type: SUBACK, ID: 1, Reason: 1}).subscribed("s1", "t/#", 1)
			return b.connect("p1", false, false).accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1")).liveness()
		}
		b.sent(BrokerNode, "s1", Packet{Type: UNSUBACK, ID: 2})
		b.recv("s1", BrokerNode, Packet{Type: SUBACK, ID: 1, Reason: 1}).recv("s1", BrokerNode, Packet{Type: UNSUBACK, ID: 2})
		b.subscribed("s1", "t/#", 1).ev(Event{Kind: Unsubscribed, Node: "s1", Filter: "t/#"})
		return b.connect("p1", false, false).accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1")).liveness()
	}
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "unsubscribed before the publish", h: h(true)},
		{name: "still subscribed", h: h(false), violate: true, reason: `msg "m1"`},
	})
}

// TestNoLossPublisherSessionLost: Session Present 0 to a publisher's Clean
// Start 0 excuses the messages the broker had not acknowledged: the client
// must discard its session state [MQTT-3.2.2-5] and may drop them (a QoS 2
// message sent again as new could be delivered twice). One the broker
// acknowledged is the broker's [MQTT-4.3.3-8] and stays owed, as does one
// the publisher still holds when its session was kept (Session Present 1).
// The excuse holds only for a session the history shows gone as the spec
// allows: here p1's session ends with its connection (Session Expiry 0);
// one of 10 s that a Session Present 0 ends at once was lost by the broker
// [MQTT-4.1.0-2], and everything stays owed.
func TestNoLossPublisherSessionLost(t *testing.T) {
	cases := []struct {
		name       string
		brokerGot  bool // the broker received the PUBLISH
		brokerAck  bool // ... and sent PUBREC
		sp         bool // the reconnect's Session Present
		clientRead bool // the publisher read the CONNACK but crashed before its application heard
		want       int
	}{
		{"unreceived, session lost", false, false, false, false, 0},
		{"unreceived, session lost, crash in the CONNACK's step", false, false, false, true, 0},
		{"received, unacknowledged, session lost", true, false, false, false, 0},
		{"acknowledged, session lost", true, true, false, false, 1},
		{"unreceived, session kept", false, false, true, false, 1},
	}
	for _, lives := range []bool{false, true} {
		for _, c := range cases {
			if lives { // p1's session (10 s) could not have expired: the broker lost it and owes all [MQTT-4.1.0-2]
				c.name, c.want = c.name+", before its expiry", max(c.want, int(b2i(!c.sp)))
			}
			t.Run(c.name, func(t *testing.T) {
				b := base()
				if lives {
					b.h.Events[len(b.h.Events)-3].Packet.Expiry = 10 // p1's CONNECT, as the broker got it
				}
				b.accepted("p1", "m1", 2).sent("p1", BrokerNode, publish(7, 2, false, "m1"))
				if c.brokerGot {
					b.recv(BrokerNode, "p1", publish(7, 2, false, "m1"))
				}
				if c.brokerAck {
					b.sent(BrokerNode, "p1", pkt(PUBREC, 7))
				}
				b.closed("p1")
				if c.clientRead {
					b.opened("p1")
					b.xfer("p1", BrokerNode, Packet{Type: CONNECT})
					b.xfer(BrokerNode, "p1", Packet{Type: CONNACK})
					b.crash("p1", CrashPoint(0)).closed("p1")
				} else {
					b.connect("p1", c.sp, true)
				}
				got := 0
				for _, v := range CheckNoLoss(&b.liveness().h) {
					if v.Invariant == NoLoss {
						got++
					}
				}
				if got != c.want {
					t.Fatalf("%d NoLoss violations, want %d", got, c.want)
				}
			})
		}
	}
}

// TestFaultsSessionLostCrash: a publisher that crashed holding an
// unacknowledged message after it read Session Present 0 to Clean Start 0,
// before it acted on it, never learnt its session went [MQTT-3.2.2-5]: its
// reboot resends the QoS 2 PUBLISH to the broker's new session, a new
// message there, so QoS2ExactlyOnce (and SharedDelivery) is not promised.
// Acting on the CONNACK first (its Connected event), a Clean Start,
// Session Present 1 or nothing unacknowledged promise it still. So does a
// publisher that crashed, or lost its connection, before the Session
// Present 0 the broker sent it arrived: it never learns its session went,
// and may resume the broker's new one (swarm seed 485780509089 of
// workload session=expiry).
func TestFaultsSessionLostCrash(t *testing.T) {
	cases := []struct {
		name             string
		clean, sp, acted bool
		unacked          bool
		unread, closed   bool // the CONNACK never reached p1; p1's connection closed instead of a crash
		want             int
	}{
		{"read Session Present 0, crashed", false, false, false, true, false, false, 1},
		{"acted on it, then crashed", false, false, true, true, false, false, 0},
		{"Clean Start", true, false, false, true, false, false, 0},
		{"Session Present 1", false, true, false, true, false, false, 0},
		{"nothing unacknowledged", false, false, false, false, false, false, 0},
		{"Session Present 0 sent, crashed before it came", false, false, false, true, true, false, 1},
		{"Session Present 0 sent, connection lost before it came", false, false, false, true, true, true, 1},
		{"Session Present 1 sent, crashed before it came", false, true, false, true, true, false, 0},
		{"Session Present 0 sent to Clean Start, crashed before it came", true, false, false, true, true, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := base()
			if c.unacked {
				b.accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(7, 2, false, "m1"))
			}
			b.closed("p1").opened("p1")
			b.xfer("p1", BrokerNode, Packet{Type: CONNECT, Clean: c.clean})
			if c.unread {
				b.sent(BrokerNode, "p1", Packet{Type: CONNACK, Sessions: c.sp})
			} else {
				b.xfer(BrokerNode, "p1", Packet{Type: CONNACK, Sessions: c.sp})
			}
			if c.acted {
				b.ev(Event{Kind: Connected, Node: "p1", Peer: BrokerNode, SessionPresent: c.sp, CleanStart: c.clean, Version: 5})
			}
			if c.closed {
				b.ev(Event{Kind: ConnClosed, Node: "p1", Peer: BrokerNode})
			} else {
				b.crash("p1", CrashPoint(0))
			}
			f := FaultsOf(b.h)
			if f.SessionLostCrashes != c.want {
				t.Fatalf("SessionLostCrashes %d, want %d", f.SessionLostCrashes, c.want)
			}
			if got := Promises(FixedPolicy(), f).Has(QoS2ExactlyOnce); got != (c.want == 0) {
				t.Fatalf("QoS2ExactlyOnce promised: %v, want %v", got, c.want == 0)
			}
		})
	}
}

// TestNoLossReplacedThenExpired: s1 (Session Expiry 5 s) replaced its
// QoS 1 filter after the broker routed m1 through it, so the replaced
// subscription still owes m1 [MQTT-3.8.4-3]; then s1 went away. Back within
// the interval, its session resumed (Session Present 1): m1 is owed. Back
// after it, the broker's Session Present 0 shows the session expired
// [MQTT-4.1.0-2]: m1 went with it (swarm seed 1457 of workload
// session=expiry). A Session Present 0 within the interval is the
// broker's loss, and m1 stays owed.
func TestNoLossReplacedThenExpired(t *testing.T) {
	build := func(back int64, sp bool) *hb {
		b := newHB()
		b.at(0, func(b *hb) {
			b.connect("s1", false, false)
			b.h.Events[len(b.h.Events)-3].Packet.Expiry = 5 // s1's CONNECT, as the broker got it
			b.xfer("s1", BrokerNode, subReq(1, "t/#", 1)).xfer(BrokerNode, "s1", Packet{Type: SUBACK, ID: 1, Reason: 1}).subscribed("s1", "t/#", 1)
			b.connect("p1", false, false).accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1")).xfer(BrokerNode, "p1", pkt(PUBACK, 1))
			b.xfer("s1", BrokerNode, subReq(2, "t/#", 1)).xfer(BrokerNode, "s1", Packet{Type: SUBACK, ID: 2, Reason: 1}).subscribed("s1", "t/#", 1)
			b.closed("s1")
		})
		b.at(back, func(b *hb) {
			b.connect("s1", sp, true)
			b.h.Events[len(b.h.Events)-3].Packet.Expiry = 5
		})
		return b.at(back+1, func(b *hb) { b.liveness() })
	}
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "expired: Session Present 0 after 10 s", h: build(10, false)},
		{name: "resumed within the interval", h: build(2, true), violate: true, reason: `msg "m1"`},
		{name: "Session Present 0 within the interval", h: build(2, false), violate: true, reason: `msg "m1"`},
	})
}
