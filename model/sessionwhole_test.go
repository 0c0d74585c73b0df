package model

import "testing"

// connClean connects node (v5) with Clean Start=1; the broker answers
// Session Present=0.
func (b *rb) connClean(node string) *rb {
	b.add(Event{Kind: ConnOpened, Node: node, Peer: BrokerNode}).add(Event{Kind: ConnOpened, Node: BrokerNode, Peer: node})
	b.xfer(node, BrokerNode, Packet{Type: CONNECT, Clean: true})
	b.xfer(BrokerNode, node, Packet{Type: CONNACK})
	return b.add(Event{Kind: Connected, Node: node, Peer: BrokerNode, CleanStart: true, Version: 5})
}

// TestSessionWhole: s1's session held a copy of m1 when s1's Clean Start
// discarded it (Session Present=0); after a broker crash the broker must not
// send m1 to s1's new session, as a half-deleted session a restart gave
// back its message records would [MQTT-3.1.2-4] [MQTT-3.2.2-3]. A message
// the broker received after the discard (or received again: a publisher's
// resend is a new publication), a retained copy, a copy handed on to a
// shared subscription's member, and a session never discarded are fine.
func TestSessionWhole(t *testing.T) {
	crash := Event{Kind: Crash, Node: BrokerNode}
	held := func() *rb { return subbed(1).pub("m1", "t/a", 1, false, 0).at(5).drop("s1").at(6) }
	runRB(t, SessionPresent, []rbCase{
		{"old copy after the discard and a crash", held().connClean("s1").add(crash).at(10).conn("s1", true).fwd("s1", "m1", "t/a", 1, false, 0), true, "whole or gone"},
		{"old copy resent after the discard", held().connClean("s1").add(crash).at(10).conn("s1", true).
			xfer(BrokerNode, "s1", Packet{Type: PUBLISH, ID: 7, QoS: 1, Dup: true, Topic: "t/a", Msg: "m1", Payload: "m1"}), true, "[MQTT-3.1.2-4]"},
		{"received after the discard", held().connClean("s1").sub("s1", 2, "t/#", 1, 1, 0).pub("m2", "t/a", 1, false, 0).
			add(crash).at(10).conn("s1", true).fwd("s1", "m2", "t/a", 1, false, 0), false, ""},
		{"received again after the discard", held().connClean("s1").sub("s1", 2, "t/#", 1, 1, 0).pub("m1", "t/a", 1, false, 0).
			fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"retained copy", held().connClean("s1").sub("s1", 2, "t/#", 1, 1, 0).fwd("s1", "m1", "t/a", 1, true, 0), false, ""},
		{"never discarded", held().add(crash).at(10).conn("s1", true).fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
		{"shared member", held().sub("s1", 3, "$share/g/t/#", 1, 1, 0).connClean("s1").add(crash).at(10).conn("s1", true).
			fwd("s1", "m1", "t/a", 1, false, 0), false, ""},
	})
}
