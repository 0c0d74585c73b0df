package model

import "testing"

// acl declares a broker ACL of the given file lines and each client's user
// name (client -> user) at the start of a history.
func acl(users map[string]string, lines ...string) *hb {
	b := newHB()
	for _, l := range lines {
		b.ev(Event{Kind: ACL, Node: BrokerNode, Reason: l})
	}
	for _, c := range []string{"p1", "s1", "s2"} {
		if u, ok := users[c]; ok {
			b.ev(Event{Kind: ACL, Node: c, Reason: "user " + u})
		}
	}
	return b
}

// connectV connects node at protocol level v.
func (b *hb) connectV(node string, v uint8) *hb {
	b.opened(node)
	b.xfer(node, BrokerNode, Packet{Type: CONNECT})
	b.sent(BrokerNode, node, Packet{Type: CONNACK})
	return b.ev(Event{Kind: Connected, Node: node, Peer: BrokerNode, Version: v})
}

func TestAccess(t *testing.T) {
	self := map[string]string{"p1": "p1", "s1": "s1", "s2": "s2"}
	// p1 may write t/a, not t/b; s1 may read t/+ and t/a; s2 only u/#.
	rules := []string{"user p1", "topic write t/a", "user s1", "topic read t/+", "user s2", "topic read u/#"}
	pubB := Packet{Type: PUBLISH, ID: 1, QoS: 1, Topic: "t/b", Msg: "m1", Payload: "pl-m1"}
	pubA := Packet{Type: PUBLISH, ID: 1, QoS: 1, Topic: "t/a", Msg: "m1", Payload: "pl-m1"}
	cases := []struct {
		name string
		h    *hb
		want int // Access violations
	}{
		{"no ACL judges nothing", newHB().subscribed("s2", "t/#", 1), 0},
		{"covered subscription", acl(self, rules...).subscribed("s1", "t/+", 1).subscribed("s1", "t/a", 1), 0},
		{"wildcard subscription not covered", acl(self, rules...).subscribed("s1", "t/#", 1), 1},
		{"subscription of another user's topic", acl(self, rules...).subscribed("s2", "t/a", 1), 1},
		{"anonymous client has the anonymous section", acl(nil, "topic read t/#", "user s1").subscribed("s1", "t/#", 1).subscribed("s2", "t/a", 1), 0},
		{"pattern rule with %c", acl(self, "pattern read c/%c/#").subscribed("s1", "c/s1/x", 1).subscribed("s2", "c/s1/x", 1), 1},
		{"deny wins", acl(self, "user s1", "topic read t/#", "topic deny t/a").subscribed("s1", "t/b", 1).subscribed("s1", "t/a", 1), 1},
		{"shared subscription judged by its filter", acl(self, rules...).subscribed("s1", "$share/g/t/+", 1).subscribed("s1", "$share/g/t/#", 1), 1},
		{"copy on an unreadable topic", acl(self, rules...).connectV("p1", 5).xfer("p1", BrokerNode, pubA).sent(BrokerNode, "p1", pkt(PUBACK, 1)).
			sent(BrokerNode, "s2", Packet{Type: PUBLISH, ID: 3, QoS: 1, Topic: "t/a", Msg: "m1"}), 1},
		{"v5 refusal with 0x87", acl(self, rules...).connectV("p1", 5).xfer("p1", BrokerNode, pubB).
			sent(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1, Reason: 0x87}), 0},
		{"v5 denied publication acknowledged", acl(self, rules...).connectV("p1", 5).xfer("p1", BrokerNode, pubB).
			sent(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1}), 1},
		{"3.1.1 denied publication acknowledged and dropped", acl(self, rules...).connectV("p1", 4).xfer("p1", BrokerNode, pubB).
			sent(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1}), 0},
		{"denied publication routed", acl(self, rules...).connectV("p1", 4).xfer("p1", BrokerNode, pubB).
			sent(BrokerNode, "p1", Packet{Type: PUBACK, ID: 1}).sent(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 2, QoS: 1, Topic: "t/b", Msg: "m1"}), 1},
	}
	for _, c := range cases {
		got := 0
		for _, v := range CheckAccess(&c.h.h) {
			if v.Invariant == Access {
				got++
			}
		}
		if got != c.want {
			t.Errorf("%s: %d Access violations, want %d: %v", c.name, got, c.want, CheckAccess(&c.h.h))
		}
	}
}

// TestAccessExcusesDeniedPublication: a 3.1.1 publication the ACL denies
// (acknowledged, dropped [MQTT-3.3.5-2]) is owed to no subscriber; the same
// history without the ACL owes it.
func TestAccessExcusesDeniedPublication(t *testing.T) {
	run := func(b *hb) *hb {
		b.connectV("s1", 4)
		b.xfer("s1", BrokerNode, Packet{Type: SUBSCRIBE, ID: 1, QoS: 1, Filter: "t/#"})
		b.xfer(BrokerNode, "s1", Packet{Type: SUBACK, ID: 1, Reason: 1})
		b.subscribed("s1", "t/#", 1)
		b.connectV("p1", 4)
		b.accepted("p1", "m1", 1)
		b.xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
		b.xfer(BrokerNode, "p1", pkt(PUBACK, 1)).acked("p1", "m1")
		return b.liveness()
	}
	with := run(acl(map[string]string{"p1": "p1", "s1": "s1"}, "user s1", "topic read t/#"))
	if vs := Check(with.h, Options{}); len(vs) != 0 {
		t.Errorf("denied publication: %v", vs)
	}
	without := run(newHB())
	if vs := Check(without.h, Options{Only: SetOf(NoLoss)}); len(vs) == 0 {
		t.Errorf("without the ACL, NoLoss owes nothing")
	}
}
