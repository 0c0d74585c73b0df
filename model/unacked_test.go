package model

import "testing"

// brokerCrash crashes the broker after the action of its step took effect
// and restarts it; s1 and p1 reconnect to their kept sessions.
func (b *hb) brokerCrash() *hb {
	b.crash(BrokerNode, CrashAfterAction).ev(Event{Kind: Restart, Node: BrokerNode})
	return b.connect("s1", true, true).connect("p1", true, true)
}

// TestNoLossUnackedSubscriptionChange: a SUBSCRIBE or UNSUBSCRIBE the broker
// received and never acknowledged (it crashed in between) may or may not
// have taken effect; the client is not told, and nothing resends it on
// reconnect (MQTT 5.0 §4.4: only PUBLISH and PUBREL are resent). Until the
// client's next (un)subscription of the filter is acknowledged, what the
// subscription would owe is neither owed nor forbidden.
func TestNoLossUnackedSubscriptionChange(t *testing.T) {
	unsub := Packet{Type: UNSUBSCRIBE, ID: 2, Filter: "t/#"}
	// s1 unsubscribes t/#; the broker crashes before its UNSUBACK.
	unsubLost := func() *hb { return base().xfer("s1", BrokerNode, unsub).brokerCrash() }
	// s1 resubscribes t/# at qos; the broker crashes before its SUBACK.
	resubLost := func(qos uint8) *hb { return base().xfer("s1", BrokerNode, subReq(2, "t/#", qos)).brokerCrash() }
	// ... and subscribes again, acknowledged this time.
	again := func(b *hb) *hb {
		return b.xfer("s1", BrokerNode, subReq(3, "t/#", 1)).xfer(BrokerNode, "s1", pkt(SUBACK, 3)).subscribed("s1", "t/#", 1)
	}
	runInvariantCases(t, NoLoss, []invariantCase{
		{name: "unsubscribe unacked, later message not delivered", h: unsubLost().routed("m1", 1).liveness()},
		{name: "unsubscribe unacked, later message delivered", h: unsubLost().qos1("m1", 1, 1).liveness()},
		{name: "unsubscribe unacked, earlier message started, not delivered", h: base().routed("m1", 1).
			xfer(BrokerNode, "s1", publish(5, 1, false, "m1")).xfer("s1", BrokerNode, unsub).brokerCrash().liveness(),
			violate: true, reason: `msg "m1"`},
		{name: "unsubscribe unacked, then an acked resubscribe", h: again(unsubLost()).routed("m1", 1).liveness(),
			violate: true, reason: `msg "m1"`},
		{name: "re-subscribe at QoS 0 unacked, later message not delivered", h: resubLost(0).routed("m1", 1).liveness()},
		{name: "re-subscribe at QoS 1 unacked, later message not delivered", h: resubLost(1).routed("m1", 1).liveness(),
			violate: true, reason: `msg "m1"`},
		{name: "re-subscribe at QoS 0 unacked, then an acked one at QoS 1", h: again(resubLost(0)).routed("m1", 1).liveness(),
			violate: true, reason: `msg "m1"`},
		{name: "unsubscribe acked before the crash", h: base().xfer("s1", BrokerNode, unsub).sent(BrokerNode, "s1", pkt(UNSUBACK, 2)).
			brokerCrash().routed("m1", 1).liveness()},
	})
}
