package model

import "testing"

// at sets the time of the events added by f to t seconds.
func (b *hb) at(t int64, f func(*hb)) *hb {
	n := len(b.h.Events)
	f(b)
	for i := n; i < len(b.h.Events); i++ {
		b.h.Events[i].Time = t * 1e9
	}
	return b
}

// conn connects node (protocol level v) with Clean Start clean and Session
// Expiry expiry, the broker answering Session Present sp, at t seconds.
func (b *hb) conn(t int64, node string, v uint8, clean bool, expiry uint32, sp bool) *hb {
	return b.at(t, func(b *hb) {
		b.opened(node)
		b.xfer(node, BrokerNode, Packet{Type: CONNECT, Clean: clean, Expiry: expiry})
		b.xfer(BrokerNode, node, Packet{Type: CONNACK, Sessions: sp})
		b.ev(Event{Kind: Connected, Node: node, Peer: BrokerNode, CleanStart: clean, SessionPresent: sp, HadState: true, Version: v})
	})
}

// end closes node's connection at t seconds.
func (b *hb) end(t int64, node string) *hb {
	return b.at(t, func(b *hb) { b.closed(node) })
}

// TestSessionPresentKept: a broker that kept a client's session answers its
// Clean Start=0 CONNECT with Session Present=1 [MQTT-3.2.2-3] (3.1.1
// [MQTT-3.2.2-2]); an expired, non-persistent, refused or cleaned session
// owes nothing, nor one that a CONNECT a crash left unanswered may have
// discarded.
func TestSessionPresentKept(t *testing.T) {
	never := uint32(ExpiryNever)
	runInvariantCases(t, SessionPresent, []invariantCase{
		{"v5 kept session answered SP=0", newHB().conn(0, "s1", 5, false, never, false).end(10, "s1").conn(20, "s1", 5, false, never, false),
			true, "[MQTT-3.2.2-3]"},
		{"v5 kept session answered SP=1", newHB().conn(0, "s1", 5, false, never, false).end(10, "s1").conn(20, "s1", 5, false, never, true), false, ""},
		{"v5 within the expiry interval", newHB().conn(0, "s1", 5, true, 60, false).end(10, "s1").conn(69, "s1", 5, false, 60, false),
			true, "within its Session Expiry Interval of 60 s"},
		{"v5 after the expiry interval", newHB().conn(0, "s1", 5, true, 60, false).end(10, "s1").conn(70, "s1", 5, false, 60, false), false, ""},
		{"v5 expiry 0 ends with the connection", newHB().conn(0, "s1", 5, false, 0, false).end(10, "s1").conn(11, "s1", 5, false, 0, false), false, ""},
		{"v5 DISCONNECT sets expiry 0", newHB().conn(0, "s1", 5, false, never, false).
			at(5, func(b *hb) { b.xfer("s1", BrokerNode, Packet{Type: DISCONNECT, ExpirySet: true}) }).
			end(5, "s1").conn(6, "s1", 5, false, never, false), false, ""},
		{"v5 DISCONNECT cannot raise expiry 0", newHB().conn(0, "s1", 5, false, 0, false).
			at(5, func(b *hb) { b.xfer("s1", BrokerNode, Packet{Type: DISCONNECT, ExpirySet: true, Expiry: 100}) }).
			end(5, "s1").conn(6, "s1", 5, false, 0, false), false, ""},
		{"takeover of an open connection", newHB().conn(0, "s1", 5, false, never, false).conn(20, "s1", 5, false, never, false),
			true, "its connection is still open"},
		{"clean start owes SP=0", newHB().conn(0, "s1", 5, false, never, false).end(10, "s1").conn(20, "s1", 5, true, never, false), false, ""},
		{"first connection", newHB().conn(0, "s1", 5, false, never, false), false, ""},
		{"refused CONNECT in between", newHB().conn(0, "s1", 5, false, never, false).end(10, "s1").
			at(15, func(b *hb) {
				b.opened("s1").xfer("s1", BrokerNode, Packet{Type: CONNECT, Expiry: never}).xfer(BrokerNode, "s1", Packet{Type: CONNACK, Reason: 0x87})
			}).end(15, "s1").conn(20, "s1", 5, false, never, false), false, ""},
		{"3.1.1 CleanSession=0 kept", newHB().conn(0, "s1", 4, false, 0, false).end(10, "s1").conn(5000, "s1", 4, false, 0, false),
			true, "[MQTT-3.2.2-2]"},
		{"3.1.1 CleanSession=1 ends", newHB().conn(0, "s1", 4, true, 0, false).end(10, "s1").conn(20, "s1", 4, false, 0, false), false, ""},
		{"kept across a broker crash", newHB().conn(0, "s1", 5, false, never, false).
			at(10, func(b *hb) { b.crash(BrokerNode, CrashBetweenSteps) }).conn(20, "s1", 5, false, never, false),
			true, "never expires"},
		// A CONNECT the broker received and did not answer before a crash
		// may have taken effect: with Clean Start it discarded the session
		// [MQTT-3.1.2-4], with Session Expiry 0 the crash ended it
		// [MQTT-3.1.2-23].
		{"unanswered clean start, then a crash", unansweredConnect(true, never).conn(20, "s1", 5, false, never, false), false, ""},
		{"unanswered expiry 0, then a crash", unansweredConnect(false, 0).conn(20, "s1", 5, false, never, false), false, ""},
		{"unanswered resume, then a crash: kept", unansweredConnect(false, never).conn(20, "s1", 5, false, never, false),
			true, "never expires"},
		{"the session accepted after the doubt is kept", unansweredConnect(true, never).conn(20, "s1", 5, false, never, false).
			end(30, "s1").conn(40, "s1", 5, false, never, false), true, "accepted at step"},
	})
}

// unansweredConnect is s1's v5 session (never expiring, its connection
// ended at 10 s), then at 15 s a CONNECT of s1 with Clean Start clean and
// Session Expiry expiry that the broker receives and a broker crash
// leaves unanswered.
func unansweredConnect(clean bool, expiry uint32) *hb {
	return newHB().conn(0, "s1", 5, false, ExpiryNever, false).end(10, "s1").at(15, func(b *hb) {
		b.opened("s1").xfer("s1", BrokerNode, Packet{Type: CONNECT, Clean: clean, Expiry: expiry})
		b.crash(BrokerNode, CrashBetweenSteps)
	})
}

// TestSessionPresentKeptPromises: where the broker may lose its sessions
// (no persistence and a crash), SessionPresent is not promised; the fixed
// broker promises it across a crash.
func TestSessionPresentKeptPromises(t *testing.T) {
	never := uint32(ExpiryNever)
	h := newHB().conn(0, "s1", 5, false, never, false).
		at(10, func(b *hb) { b.crash(BrokerNode, CrashBetweenSteps) }).conn(20, "s1", 5, false, never, false).h
	if vs := CheckPromised(h, FixedPolicy()); len(vs) != 1 || vs[0].Invariant != SessionPresent {
		t.Fatalf("fixed policy: got %v, want one SessionPresent violation", vs)
	}
	legacy := FixedPolicy()
	legacy.Broker = PersistNone
	if vs := CheckPromised(h, legacy); len(vs) != 0 {
		t.Fatalf("broker without persistence: got %v, want none promised", vs)
	}
}
