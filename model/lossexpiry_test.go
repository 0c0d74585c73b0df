package model

import "testing"

// expiring builds s1 subscribed to t/# in a session that never expires
// (its CONNECT announcing Receive
// Maximum rm, 0 none) and p1 connected; when inflight, the broker has sent
// s1 a QoS 1 PUBLISH (m0) it has not acked. Then, at 1 s, p1 publishes m1
// at QoS 1 with a Message Expiry Interval of 2 s, which the broker receives
// and never sends s1: it expires at 3 s.
func expiring(rm uint16, inflight bool) *hb {
	b := newHB()
	b.opened("s1").xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: ExpiryNever})
	b.h.Events[len(b.h.Events)-2].ReceiveMax = rm
	b.sent(BrokerNode, "s1", Packet{Type: CONNACK}).ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, Version: 5, ReceiveMax: rm})
	b.xfer("s1", BrokerNode, pkt(SUBSCRIBE, 1)).xfer(BrokerNode, "s1", pkt(SUBACK, 1)).subscribed("s1", "t/#", 1)
	b.connect("p1", false, false)
	if inflight {
		b.accepted("p1", "m0", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m0")).xfer(BrokerNode, "s1", publish(1, 1, false, "m0"))
		b.delivered("s1", "m0", 1)
	}
	p := publish(2, 1, false, "m1")
	p.Expiry = 2
	return b.at(1, func(b *hb) { b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, p) })
}

func TestNoLossMessageExpiry(t *testing.T) {
	end := func(b *hb) { b.liveness() }
	away := func(b *hb) { b.ev(Event{Kind: ConnClosed, Node: BrokerNode, Peer: "s1"}) }
	crash := func(b *hb) { b.crash(BrokerNode, CrashBetweenSteps) }
	acked := func(b *hb) { b.xfer("s1", BrokerNode, pkt(PUBACK, 1)) }
	sent := func(b *hb) {
		p := publish(2, 1, false, "m1")
		p.Expiry = 2
		b.sent(BrokerNode, "s1", p)
	}
	crashedBefore := newHB().subscribe("s1").connect("p1", false, false).crash(BrokerNode, CrashBetweenSteps)
	p := publish(2, 1, false, "m1")
	p.Expiry = 2
	crashedBefore.at(1, func(b *hb) { b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, p) })
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "expired while the subscriber was away", h: expiring(0, false).at(2, away).at(6, end)},
		{name: "expired while the broker was down", h: expiring(0, false).at(2, crash).at(6, end)},
		{name: "a broker crash before the publish closed the connection", h: crashedBefore.at(6, end)},
		{name: "expired behind a full window (Receive Maximum 1)", h: expiring(1, true).at(6, end)},
		{name: "window full until after the expiry", h: expiring(1, true).at(4, acked).at(6, end)},
		{name: "expired with the subscriber connected and room in its window", h: expiring(0, false).at(6, end),
			violate: true, reason: `msg "m1"`},
		{name: "room in a window of 2", h: expiring(2, true).at(6, end), violate: true, reason: `msg "m1"`},
		{name: "window emptied when the publish came", h: expiring(1, true).at(1, acked).at(6, end), violate: true, reason: `msg "m1"`},
		{name: "away only after the expiry", h: expiring(0, false).at(4, away).at(6, end), violate: true, reason: `msg "m1"`},
		{name: "not expired when the history ended", h: expiring(0, false).at(2, away).at(2, end), violate: true, reason: `msg "m1"`},
		{name: "sent, never delivered", h: expiring(0, false).at(1, sent).at(2, away).at(6, end), violate: true, reason: `msg "m1"`},
		{name: "no Message Expiry", h: expiring(0, false).at(2, away).at(6, end).clone().noExpiry(), violate: true, reason: `msg "m1"`},
	})
}

// noExpiry takes the Message Expiry Interval off every PUBLISH.
func (b *hb) noExpiry() *hb {
	for i := range b.h.Events {
		if b.h.Events[i].Packet.Type == PUBLISH {
			b.h.Events[i].Packet.Expiry = 0
		}
	}
	return b
}

// TestNoLossMessageExpiryUnacceptedConn: the subscriber lost its connection
// and opened a new one before the publish came, but no CONNECT arrived on
// it (the client died first): the broker may send nothing on it before a
// CONNACK [MQTT-3.2.0-1], so the copy that expired meanwhile is excused
// [MQTT-3.3.2-5]; a new connection whose CONNECT the broker accepted (or
// refused, then kept open) before the publish is judged as before.
func TestNoLossMessageExpiryUnacceptedConn(t *testing.T) {
	reopened := func(connack *Packet) *hb {
		b := newHB()
		b.opened("s1").xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: ExpiryNever})
		b.sent(BrokerNode, "s1", Packet{Type: CONNACK}).ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, Version: 5})
		b.xfer("s1", BrokerNode, pkt(SUBSCRIBE, 1)).xfer(BrokerNode, "s1", pkt(SUBACK, 1)).subscribed("s1", "t/#", 1)
		b.connect("p1", false, false).closed("s1").opened("s1")
		if connack != nil {
			b.xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: ExpiryNever}).sent(BrokerNode, "s1", *connack)
		}
		p := publish(2, 1, false, "m1")
		p.Expiry = 2
		b.at(1, func(b *hb) { b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, p) })
		return b.at(6, func(b *hb) { b.liveness() })
	}
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "new connection, no CONNECT", h: reopened(nil)},
		{name: "new connection, CONNECT refused", h: reopened(&Packet{Type: CONNACK, Reason: 0x87})},
		{name: "new connection, CONNECT accepted", h: reopened(&Packet{Type: CONNACK}), violate: true, reason: `msg "m1"`},
	})
}

// TestNoLossMessageExpiryTakeover: s1 (Receive Maximum rm) comes back on a
// new connection while the broker still holds its old one: the broker
// takes the CONNECT, closes the old connection (session taken over
// [MQTT-3.1.4-3]) and then answers CONNACK, which opens the new window
// [MQTT-3.2.0-1]; it sends m0 there and m1, expiring, comes. A window of 1
// is full the whole interval: excused [MQTT-3.3.2-5]; a window of 2 had
// room, and the subscriber stayed connected: judged.
func TestNoLossMessageExpiryTakeover(t *testing.T) {
	takeover := func(rm uint16) *hb {
		b := newHB()
		b.opened("s1").xfer("s1", BrokerNode, Packet{Type: CONNECT})
		b.sent(BrokerNode, "s1", Packet{Type: CONNACK}).ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, Version: 5})
		b.xfer("s1", BrokerNode, pkt(SUBSCRIBE, 1)).xfer(BrokerNode, "s1", pkt(SUBACK, 1)).subscribed("s1", "t/#", 1)
		b.connect("p1", false, false).ev(Event{Kind: ConnClosed, Node: "s1", Peer: BrokerNode}).opened("s1")
		b.xfer("s1", BrokerNode, Packet{Type: CONNECT})
		b.h.Events[len(b.h.Events)-2].ReceiveMax = rm
		b.ev(Event{Kind: ConnClosed, Node: BrokerNode, Peer: "s1"}).sent(BrokerNode, "s1", Packet{Type: CONNACK, Sessions: true})
		b.accepted("p1", "m0", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m0")).sent(BrokerNode, "s1", publish(1, 1, false, "m0"))
		p := publish(2, 1, false, "m1")
		p.Expiry = 2
		b.at(1, func(b *hb) { b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, p) })
		return b.at(6, func(b *hb) { b.delivered("s1", "m0", 1).liveness() })
	}
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "window of 1 full after the takeover", h: takeover(1)},
		{name: "window of 2 with room after the takeover", h: takeover(2), violate: true, reason: `msg "m1"`},
	})
}

// TestNoLossMessageExpiryRetainedCopy: s1 holds t/# at QoS 2 when m1 (QoS
// 1, RETAIN=1, Message Expiry 2 s) comes at 1 s; s1 then subscribes t/a at
// QoS 0 and the broker sends it the retained copy that SUBACK brings, at
// QoS 0 with RETAIN=1 [MQTT-3.3.1-9] [MQTT-3.8.4-8], which never arrives;
// s1 goes away at 2 s and the live copy expires unsent. The retained copy
// did not start the live copy's delivery, so its expiry excuses it
// [MQTT-3.3.2-5] (swarm seed 49751). A RETAIN=1 copy with no SUBACK since
// the message came can only be the live copy (Retain As Published
// [MQTT-3.3.1-12]): its delivery started, and it is owed.
func TestNoLossMessageExpiryRetainedCopy(t *testing.T) {
	build := func(resub bool, qos uint8) *hb {
		b := newHB().subscribe("s1").connect("p1", false, false)
		p := publish(2, 1, false, "m1")
		p.Retain, p.Expiry = true, 2
		b.at(1, func(b *hb) {
			b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, p).xfer(BrokerNode, "p1", pkt(PUBACK, 2))
			if resub {
				b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 2, Filter: "t/a"}).xfer(BrokerNode, "s1", pkt(SUBACK, 2))
			}
			c := publish(3, qos, false, "m1")
			c.Retain, c.Expiry = true, 2
			b.sent(BrokerNode, "s1", c)
		})
		b.at(2, func(b *hb) { b.closed("s1") })
		return b.at(6, func(b *hb) { b.liveness() }).neverExpires("s1")
	}
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "retained copy of a later SUBACK sent, live copy expired while away", h: build(true, 0)},
		{name: "retained copy at QoS 1 sent, live copy expired while away", h: build(true, 1)},
		{name: "live copy (RETAIN=1, no SUBACK since) sent, never delivered", h: build(false, 1), violate: true, reason: `msg "m1"`},
	})
}
