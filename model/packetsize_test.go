package model

import (
	"strings"
	"testing"
)

// sizeSub is a size-limited subscriber s1 (v5, persistent, t/# at QoS 2)
// whose CONNECT carries c (Maximum Packet Size, Topic Alias Maximum) and
// whose SUBSCRIBE carries subIDs, and a connected publisher p1.
func sizeSub(c Packet, subIDs ...uint32) *hb {
	b := newHB().opened("s1")
	c.Type = CONNECT
	b.xfer("s1", BrokerNode, c).sent(BrokerNode, "s1", Packet{Type: CONNACK})
	b.ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, Version: 5})
	b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 1, Filter: "t/#", QoS: 2, SubIDs: subIDs})
	b.xfer(BrokerNode, "s1", Packet{Type: SUBACK, ID: 1, Reason: 2}).subscribed("s1", "t/#", 2)
	return b.connect("p1", false, false)
}

// bigPublish is p1's QoS 1 PUBLISH of m1 on t/a with a payload of n bytes
// ("m1", a space, padding) and expiry; size is its encoded size (0: not
// recorded, else pubSize plus other bytes of properties).
func bigPublish(n int, expiry uint32, other int, recorded bool) Packet {
	p := Packet{Type: PUBLISH, ID: 1, QoS: 1, Topic: "t/a", Msg: "m1", Payload: "m1 " + strings.Repeat("x", n-3), Expiry: expiry}
	if recorded {
		props := other
		if expiry != 0 {
			props += 5
		}
		p.Size = uint32(publishSize(3, n, 1, true, props))
	}
	return p
}

// lost is b with p1 publishing p, which the broker receives and acks but
// never sends s1, then the events of each of after, and a quiet liveness
// phase.
func lost(b *hb, p Packet, after ...func(*hb) *hb) *hb {
	b.accepted("p1", "m1", 1).xfer("p1", BrokerNode, p)
	b.xfer(BrokerNode, "p1", pkt(PUBACK, 1)).acked("p1", "m1")
	for _, f := range after {
		b = f(b)
	}
	return b.liveness()
}

// reconnect is s1 reconnecting (Clean Start=0) with CONNECT c.
func reconnect(b *hb, c Packet) *hb {
	b.closed("s1").opened("s1")
	c.Type = CONNECT
	b.xfer("s1", BrokerNode, c).sent(BrokerNode, "s1", Packet{Type: CONNACK, Sessions: true})
	return b.ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, SessionPresent: true, HadState: true, Version: 5})
}

// TestPublishSize: the encoded sizes packetsize.go computes are the
// codec's (engine/testdata/broker/max_packet_size.txt: a QoS 1 PUBLISH of
// t/a with 90 bytes of payload is 100 bytes), and a recorded Size gives
// back the other properties a PUBLISH carried.
func TestPublishSize(t *testing.T) {
	for _, c := range []struct {
		topic, payload int
		qos            uint8
		v5             bool
		props, want    int
	}{
		{3, 90, 1, true, 0, 100},
		{3, 90, 0, true, 0, 98},
		{3, 90, 1, false, 0, 99},
		{3, 200, 1, true, 5, 216},       // Remaining Length 213: two bytes
		{3, 16_370, 1, true, 0, 16_381}, // Remaining Length 16,378
		{3, 16_375, 1, true, 0, 16_386}, // 16,383: the largest of two bytes
		{3, 16_376, 1, true, 0, 16_388}, // 16,384: three bytes
	} {
		if got := publishSize(c.topic, c.payload, c.qos, c.v5, c.props); got != c.want {
			t.Errorf("publishSize(%d, %d, q%d, v5 %v, props %d) = %d, want %d", c.topic, c.payload, c.qos, c.v5, c.props, got, c.want)
		}
	}
	for _, c := range []struct {
		n      int
		expiry uint32
		other  int
	}{{90, 0, 0}, {90, 7, 0}, {70, 0, 20}, {200, 3, 140}, {16_376, 0, 9}} {
		p := bigPublish(c.n, c.expiry, c.other, true)
		a := appOf(&p, "t/a")
		if a != (appMsg{topic: 3, payload: c.n, expiry: c.expiry != 0, other: c.other}) {
			t.Errorf("appOf(payload %d, expiry %d, other %d, size %d) = %+v", c.n, c.expiry, c.other, p.Size, a)
		}
	}
}

func TestNoLossMaxPacketSize(t *testing.T) {
	max := func(n uint32) Packet { return Packet{MaxSize: n} }
	runInvariantCases(t, NoLoss, []invariantCase{
		// [MQTT-3.1.2-25]: the 101-byte copy is discarded as if sent; the
		// 100-byte one fits and is owed.
		{name: "one byte over the maximum", h: lost(sizeSub(max(100)), bigPublish(91, 0, 0, true))},
		{name: "exactly the maximum", h: lost(sizeSub(max(100)), bigPublish(90, 0, 0, true)), violate: true, reason: `msg "m1"`},
		{name: "maximum one below", h: lost(sizeSub(max(99)), bigPublish(90, 0, 0, true))},
		{name: "no Maximum Packet Size", h: lost(sizeSub(max(0)), bigPublish(4000, 0, 0, true)), violate: true, reason: `msg "m1"`},
		{name: "size not recorded: over", h: lost(sizeSub(max(100)), bigPublish(91, 0, 0, false))},
		{name: "size not recorded: fits", h: lost(sizeSub(max(100)), bigPublish(90, 0, 0, false)), violate: true, reason: `msg "m1"`},
		// Properties forwarded unaltered count: 20 bytes of them read from
		// the recorded size make a 70-byte payload's copy 100 bytes.
		{name: "forwarded properties push it over", h: lost(sizeSub(max(99)), bigPublish(70, 0, 20, true))},
		{name: "forwarded properties, fits", h: lost(sizeSub(max(100)), bigPublish(70, 0, 20, true)), violate: true, reason: `msg "m1"`},
		// The Message Expiry Interval goes along [MQTT-3.3.2-6] (5 bytes).
		{name: "expiry pushes it over", h: lost(sizeSub(max(99)), bigPublish(85, 60, 0, true))},
		{name: "with expiry, fits", h: lost(sizeSub(max(100)), bigPublish(85, 60, 0, true)), violate: true, reason: `msg "m1"`},
		// With aliases allowed the broker may send the topic name and an
		// alias (3 bytes more): a copy that fits only without them may go.
		{name: "aliases allowed: may be over", h: lost(sizeSub(Packet{MaxSize: 100, TopicAlias: 4}), bigPublish(88, 0, 0, true))},
		{name: "aliases allowed: fits anyway", h: lost(sizeSub(Packet{MaxSize: 100, TopicAlias: 4}), bigPublish(87, 0, 0, true)), violate: true, reason: `msg "m1"`},
		// A Subscription Identifier of 300 adds 3 bytes [MQTT-3.3.4-3].
		{name: "subscription identifier pushes it over", h: lost(sizeSub(max(100), 300), bigPublish(88, 0, 0, true))},
		{name: "subscription identifier, fits", h: lost(sizeSub(max(100), 300), bigPublish(87, 0, 0, true)), violate: true, reason: `msg "m1"`},
		// The copy may be tried on the connection the subscriber had when
		// the broker received the message, or a later one: not an earlier.
		{name: "a later connection's smaller maximum", h: lost(sizeSub(max(2000)), bigPublish(90, 0, 0, true), func(b *hb) *hb { return reconnect(b, max(99)) })},
		{name: "an earlier connection's smaller maximum", h: lost(reconnect(sizeSub(max(99)), max(2000)), bigPublish(90, 0, 0, true)), violate: true, reason: `msg "m1"`},
		{name: "never received by the broker", h: func() *hb {
			b := sizeSub(max(50))
			return b.accepted("p1", "m1", 1).sent("p1", BrokerNode, bigPublish(90, 0, 0, true)).liveness()
		}(), violate: true, reason: `msg "m1"`},
	})
}

func TestMaxPacketSize(t *testing.T) {
	max := func(n uint32) Packet { return Packet{MaxSize: n} }
	// sent is the broker sending s1 a QoS 1 PUBLISH of m1 of size bytes.
	sent := func(size uint32) func(*hb) *hb {
		return func(b *hb) *hb {
			p := publish(1, 1, false, "m1")
			p.Size = size
			return b.sent(BrokerNode, "s1", p)
		}
	}
	runInvariantCases(t, MaxPacketSize, []invariantCase{
		{name: "one byte over", h: lost(sizeSub(max(100)), bigPublish(91, 0, 0, true), sent(101)), violate: true, reason: "101-byte PUBLISH"},
		{name: "exactly the maximum", h: lost(sizeSub(max(100)), bigPublish(90, 0, 0, true), sent(100))},
		{name: "no Maximum Packet Size", h: lost(sizeSub(max(0)), bigPublish(91, 0, 0, true), sent(5000))},
		{name: "size not recorded", h: lost(sizeSub(max(100)), bigPublish(91, 0, 0, true), sent(0))},
		{name: "a later connection allows more", h: lost(sizeSub(max(100)), bigPublish(91, 0, 0, true),
			func(b *hb) *hb { return reconnect(b, max(2000)) }, sent(101))},
		{name: "a later connection allows less", h: lost(sizeSub(max(2000)), bigPublish(91, 0, 0, true),
			func(b *hb) *hb { return reconnect(b, max(100)) }, sent(101)), violate: true, reason: "Maximum Packet Size of 100"},
	})
}

// TestMaxPacketSizeToBroker: a client sends no PUBLISH larger than the
// Maximum Packet Size of the broker's CONNACK on that connection, and
// refuses as too large only a PUBLISH that exceeds it [MQTT-3.2.2-15]; a
// message so refused is owed to no one (NoLoss).
func TestMaxPacketSizeToBroker(t *testing.T) {
	// conn is p1 connecting to a broker whose CONNACK announces max (0:
	// none), with a subscriber s1 on t/# at QoS 1.
	conn := func(max uint32) *hb {
		b := newHB().subscribe("s1").opened("p1")
		b.xfer("p1", BrokerNode, Packet{Type: CONNECT})
		b.xfer(BrokerNode, "p1", Packet{Type: CONNACK, MaxSize: max})
		return b.ev(Event{Kind: Connected, Node: "p1", Peer: BrokerNode, Version: 5})
	}
	pub := func(size uint32) Packet {
		p := publish(1, 1, false, "m1")
		p.Topic, p.Size = "t/a", size
		return p
	}
	// refused is p1's engine refusing m1 (size bytes) for the broker's limit.
	refused := func(b *hb, size uint32) *hb {
		return b.ev(Event{Kind: Refused, Node: "p1", Peer: BrokerNode, Msg: "m1", Topic: "t/a", QoS: 1,
			Reason: "[MQTT-3.2.2-15] PUBLISH too large", Packet: Packet{Type: PUBLISH, QoS: 1, Size: size}})
	}
	runInvariantCases(t, MaxPacketSize, []invariantCase{
		{name: "one byte over", h: conn(100).sent("p1", BrokerNode, pub(101)), violate: true, reason: "whose CONNACK announced a Maximum Packet Size of 100"},
		{name: "exactly the maximum", h: conn(100).sent("p1", BrokerNode, pub(100))},
		{name: "no limit", h: conn(0).sent("p1", BrokerNode, pub(5000))},
		{name: "a new CONNECT forgets the limit", h: conn(100).closed("p1").opened("p1").sent("p1", BrokerNode, Packet{Type: CONNECT}).sent("p1", BrokerNode, pub(101))},
		{name: "refused when over", h: refused(conn(100), 101)},
		{name: "refused though it fits", h: refused(conn(100), 100), violate: true, reason: "it was due to be sent"},
		{name: "refused without a limit", h: refused(conn(0), 101), violate: true, reason: "no Maximum Packet Size"},
		{name: "refusal without a size", h: refused(conn(100), 0)},
	})
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "accepted, then refused", h: refused(conn(100).accepted("p1", "m1", 1), 101).liveness()},
		{name: "accepted, never sent", h: conn(100).accepted("p1", "m1", 1).liveness(), violate: true},
		{name: "refused, but the broker owned it before", h: refused(conn(100).accepted("p1", "m1", 1).
			xfer("p1", BrokerNode, pub(90)).xfer(BrokerNode, "p1", pkt(PUBACK, 1)), 101).liveness(), violate: true},
	})
}
