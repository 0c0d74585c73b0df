package model

import (
	"strings"
	"testing"
)

// connectIn opens a connection for client node whose CONNECT announces the
// client's Receive Maximum rm (0: absent) at protocol version v.
func (b *hb) connectIn(node string, v uint8, rm uint16, sp bool) *hb {
	b.opened(node)
	b.ev(Event{Kind: Sent, Node: node, Peer: BrokerNode, Packet: Packet{Type: CONNECT}, ReceiveMax: rm})
	b.ev(Event{Kind: Received, Node: BrokerNode, Peer: node, Packet: Packet{Type: CONNECT}, ReceiveMax: rm})
	b.xfer(BrokerNode, node, Packet{Type: CONNACK, Sessions: sp})
	return b.ev(Event{Kind: Connected, Node: node, Peer: BrokerNode, SessionPresent: sp, HadState: sp, Version: v})
}

// down sends the broker's QoS>0 PUBLISHes with ids from..to to node.
func (b *hb) down(node string, from, to uint16, qos uint8, dup bool) *hb {
	for id := from; id <= to; id++ {
		b.xfer(BrokerNode, node, publish(id, qos, dup, "m"))
	}
	return b
}

// TestInvariantSendQuotaToClient checks the broker -> client direction of
// SendQuota: the broker's unacked QoS>0 PUBLISHes on a connection stay
// within the Receive Maximum of the client's CONNECT [MQTT-3.3.4-9].
func TestInvariantSendQuotaToClient(t *testing.T) {
	reconnect := newHB().connectIn("s1", 5, 2, false).down("s1", 1, 2, 1, false).closed("s1").
		connectIn("s1", 5, 2, true).down("s1", 1, 2, 1, true)
	overOnResend := newHB().connectIn("s1", 5, 3, false).down("s1", 1, 3, 1, false).closed("s1").
		connectIn("s1", 5, 2, true).down("s1", 1, 3, 1, true)
	// CONNACK and two PUBLISHes decoded before the client sees Connected.
	early := newHB().opened("s1").
		ev(Event{Kind: Sent, Node: "s1", Peer: BrokerNode, Packet: Packet{Type: CONNECT}, ReceiveMax: 1}).
		recv("s1", BrokerNode, Packet{Type: CONNACK, Sessions: true}).
		recv("s1", BrokerNode, publish(1, 1, true, "a")).recv("s1", BrokerNode, publish(2, 1, true, "b")).
		ev(Event{Kind: Connected, Node: "s1", Peer: BrokerNode, SessionPresent: true, HadState: true, Version: 5})
	cases := []invariantCase{
		{name: "within the client's quota", h: newHB().connectIn("s1", 5, 3, false).down("s1", 1, 2, 1, false)},
		{name: "exactly at the client's quota", h: newHB().connectIn("s1", 5, 2, false).down("s1", 1, 2, 2, false)},
		{name: "one over the client's quota", h: newHB().connectIn("s1", 5, 2, false).down("s1", 1, 3, 1, false),
			violate: true, reason: "PUBLISH id 3 to s1 makes 3 QoS>0 PUBLISHes"},
		{name: "absent Receive Maximum is 65535", h: newHB().connectIn("s1", 5, 0, false).down("s1", 1, 300, 1, false)},
		{name: "QoS 0 uses no quota", h: newHB().connectIn("s1", 5, 1, false).down("s1", 1, 1, 1, false).down("s1", 0, 3, 0, false)},
		{name: "PUBACK returns quota", h: newHB().connectIn("s1", 5, 1, false).down("s1", 1, 1, 1, false).
			xfer("s1", BrokerNode, pkt(PUBACK, 1)).down("s1", 2, 2, 1, false)},
		{name: "PUBREC 0x00 keeps the quota until PUBCOMP", h: newHB().connectIn("s1", 5, 1, false).down("s1", 1, 1, 2, false).
			xfer("s1", BrokerNode, pkt(PUBREC, 1)).down("s1", 2, 2, 2, false), violate: true, reason: "Receive Maximum 1"},
		{name: "PUBCOMP returns quota", h: newHB().connectIn("s1", 5, 1, false).down("s1", 1, 1, 2, false).
			xfer("s1", BrokerNode, pkt(PUBREC, 1)).xfer(BrokerNode, "s1", pkt(PUBREL, 1)).
			xfer("s1", BrokerNode, pkt(PUBCOMP, 1)).down("s1", 2, 2, 2, false)},
		{name: "PUBREC 0x80 returns quota", h: newHB().connectIn("s1", 5, 1, false).down("s1", 1, 1, 2, false).
			xfer("s1", BrokerNode, Packet{Type: PUBREC, ID: 1, Reason: 0x80}).down("s1", 2, 2, 2, false)},
		{name: "resends count on the new connection, within", h: reconnect},
		{name: "resends count on the new connection, over", h: overOnResend,
			violate: true, reason: "PUBLISH id 3 to s1 makes 3"},
		{name: "over the quota before Connected", h: early, violate: true, reason: "with its CONNACK, above its Receive Maximum 1"},
		{name: "v3.1.1 is not judged", h: newHB().connectIn("s1", 4, 0, false).down("s1", 1, 3, 1, false)},
		{name: "v3.1.1 with a stray ReceiveMax is not judged", h: newHB().connectIn("s1", 4, 1, false).down("s1", 1, 3, 1, false)},
		{name: "a crash starts a new quota", h: newHB().connectIn("s1", 5, 2, false).down("s1", 1, 2, 1, false).
			crash("s1", CrashBetweenSteps).connectIn("s1", 5, 2, true).down("s1", 3, 4, 1, false)},
	}
	runInvariantCases(t, SendQuota, cases)
	for _, c := range cases {
		for _, v := range Check(c.h.h, Options{Only: SetOf(SendQuota)}) {
			if v.Node != BrokerNode || !strings.Contains(v.Reason, "[MQTT-3.3.4-9]") {
				t.Errorf("%s: violation %v: want the broker at fault citing [MQTT-3.3.4-9]", c.name, v)
			}
		}
	}
}

// TestSendQuotaBothDirections checks that the two directions keep separate
// counts: the client's PUBLISHes do not use the broker's quota towards it.
func TestSendQuotaBothDirections(t *testing.T) {
	b := newHB().opened("c1").
		ev(Event{Kind: Sent, Node: "c1", Peer: BrokerNode, Packet: Packet{Type: CONNECT}, ReceiveMax: 2}).
		xfer(BrokerNode, "c1", Packet{Type: CONNACK}).
		ev(Event{Kind: Connected, Node: "c1", Peer: BrokerNode, Version: 5, ReceiveMax: 2})
	b.xfer("c1", BrokerNode, publish(1, 1, false, "a")).xfer("c1", BrokerNode, publish(2, 1, false, "b"))
	b.down("c1", 1, 2, 1, false)
	if vs := Check(b.h, Options{Only: SetOf(SendQuota)}); len(vs) != 0 {
		t.Fatalf("two each way within Receive Maximum 2 both ways: got %v", vs)
	}
	b.down("c1", 3, 3, 1, false)
	vs := Check(b.h, Options{Only: SetOf(SendQuota)})
	if len(vs) != 1 || vs[0].Node != BrokerNode || vs[0].Step != len(b.h.Events)-1 {
		t.Fatalf("third PUBLISH from the broker: got %v, want one violation of the broker at the last step", vs)
	}
}
