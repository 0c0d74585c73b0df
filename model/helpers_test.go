package model

import (
	"slices"
	"strings"
	"testing"
)

// hb builds histories for tests.
type hb struct{ h History }

func newHB() *hb { return &hb{} }

// clone copies the history so far into a new builder.
func (b *hb) clone() *hb {
	return &hb{h: History{Events: append([]Event(nil), b.h.Events...)}}
}

func (b *hb) ev(e Event) *hb { b.h.Add(e); return b }

func pkt(t uint8, id uint16) Packet { return Packet{Type: t, ID: id} }

func publish(id uint16, qos uint8, dup bool, msg string) Packet {
	return Packet{Type: PUBLISH, ID: id, QoS: qos, Dup: dup, Topic: "t/a", Msg: msg, Payload: "pl-" + msg}
}

func (b *hb) sent(node, peer string, p Packet) *hb {
	return b.ev(Event{Kind: Sent, Node: node, Peer: peer, Packet: p})
}

func (b *hb) recv(node, peer string, p Packet) *hb {
	return b.ev(Event{Kind: Received, Node: node, Peer: peer, Packet: p})
}

// xfer is a packet sent by from and received by to.
func (b *hb) xfer(from, to string, p Packet) *hb { return b.sent(from, to, p).recv(to, from, p) }

func (b *hb) accepted(node, msg string, qos uint8) *hb {
	return b.ev(Event{Kind: Accepted, Node: node, Msg: msg, Topic: "t/a", QoS: qos})
}

func (b *hb) acked(node, msg string) *hb {
	return b.ev(Event{Kind: Acknowledged, Node: node, Msg: msg})
}

func (b *hb) delivered(node, msg string, qos uint8) *hb {
	return b.ev(Event{Kind: Delivered, Node: node, Msg: msg, Topic: "t/a", QoS: qos})
}

func (b *hb) subscribed(node, filter string, qos uint8) *hb {
	return b.ev(Event{Kind: Subscribed, Node: node, Filter: filter, QoS: qos, Persistent: true})
}

func (b *hb) opened(node string) *hb {
	b.ev(Event{Kind: ConnOpened, Node: node, Peer: BrokerNode})
	return b.ev(Event{Kind: ConnOpened, Node: BrokerNode, Peer: node})
}

func (b *hb) closed(node string) *hb {
	b.ev(Event{Kind: ConnClosed, Node: node, Peer: BrokerNode})
	return b.ev(Event{Kind: ConnClosed, Node: BrokerNode, Peer: node})
}

// connect opens a v5 connection for node with Clean Start=0 and the given
// Session Present, as both sides record it.
func (b *hb) connect(node string, sp, had bool) *hb {
	return b.connectRM(node, sp, had, 0)
}

func (b *hb) connectRM(node string, sp, had bool, rm uint16) *hb {
	b.opened(node)
	b.xfer(node, BrokerNode, Packet{Type: CONNECT})
	b.sent(BrokerNode, node, Packet{Type: CONNACK, Sessions: sp})
	return b.ev(Event{Kind: Connected, Node: node, Peer: BrokerNode, SessionPresent: sp,
		HadState: had, Version: 5, ReceiveMax: rm})
}

func (b *hb) crash(node string, pt CrashPoint) *hb {
	return b.ev(Event{Kind: Crash, Node: node, Point: pt})
}

func (b *hb) kind(k Kind) *hb { return b.ev(Event{Kind: k}) }

// liveness ends the history with a quiet liveness phase.
func (b *hb) liveness() *hb { return b.kind(LivenessStart).kind(Quiescent) }

// subscribe makes s1 a persistent QoS2 subscriber of t/#.
func (b *hb) subscribe(node string) *hb {
	b.connect(node, false, false)
	b.xfer(node, BrokerNode, pkt(SUBSCRIBE, 1))
	b.xfer(BrokerNode, node, pkt(SUBACK, 1))
	return b.subscribed(node, "t/#", 2)
}

// qos1 runs a full QoS1 flow of msg from p1 through the broker to s1 with
// the given packet ids, delivery included.
func (b *hb) qos1(msg string, pid, sid uint16) *hb {
	b.accepted("p1", msg, 1)
	b.xfer("p1", BrokerNode, publish(pid, 1, false, msg))
	b.xfer(BrokerNode, "p1", pkt(PUBACK, pid)).acked("p1", msg)
	b.xfer(BrokerNode, "s1", publish(sid, 1, false, msg))
	b.delivered("s1", msg, 1)
	return b.xfer("s1", BrokerNode, pkt(PUBACK, sid))
}

// qos2 runs a full QoS2 flow of msg from p1 through the broker to s1.
func (b *hb) qos2(msg string, pid, sid uint16) *hb {
	b.accepted("p1", msg, 2)
	b.xfer("p1", BrokerNode, publish(pid, 2, false, msg))
	b.xfer(BrokerNode, "p1", pkt(PUBREC, pid))
	b.xfer("p1", BrokerNode, pkt(PUBREL, pid))
	b.xfer(BrokerNode, "p1", pkt(PUBCOMP, pid)).acked("p1", msg)
	b.xfer(BrokerNode, "s1", publish(sid, 2, false, msg))
	b.delivered("s1", msg, 2)
	b.xfer("s1", BrokerNode, pkt(PUBREC, sid))
	b.xfer(BrokerNode, "s1", pkt(PUBREL, sid))
	return b.xfer("s1", BrokerNode, pkt(PUBCOMP, sid))
}

// base is a subscriber s1 and a connected publisher p1.
func base() *hb { return newHB().subscribe("s1").connect("p1", false, false) }

// invariantCase is one table row: a history and whether inv must fire.
type invariantCase struct {
	name    string
	h       *hb
	violate bool
	reason  string // a substring the first violation's reason must hold
}

// runInvariantCases checks each case with only inv selected.
func runInvariantCases(t *testing.T, inv Invariant, cases []invariantCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := Check(c.h.h, Options{Only: SetOf(inv)})
			for _, v := range vs {
				if v.Invariant != inv {
					t.Fatalf("got %v from a check restricted to %v", v, inv)
				}
				if v.Step < 0 || v.Step >= len(c.h.h.Events) {
					t.Fatalf("violation %v has step outside the history (%d events)", v, len(c.h.h.Events))
				}
				if err := citesWell(v, len(c.h.h.Events)); err != "" {
					t.Fatal(err)
				}
			}
			if !c.violate {
				if len(vs) != 0 {
					t.Fatalf("want no %v violation, got %v", inv, vs)
				}
				return
			}
			if len(vs) == 0 {
				t.Fatalf("want a %v violation, got none", inv)
			}
			if !strings.Contains(vs[0].Reason, c.reason) {
				t.Fatalf("reason %q lacks %q", vs[0].Reason, c.reason)
			}
		})
	}
}

// neverExpires gives every CONNECT of the nodes (as sent and as received)
// a Session Expiry Interval that never ends: their sessions live on
// however long they are away.
func (b *hb) neverExpires(nodes ...string) *hb {
	for i := range b.h.Events {
		e := &b.h.Events[i]
		if e.Packet.Type == CONNECT && (slices.Contains(nodes, e.Node) || slices.Contains(nodes, e.Peer)) {
			e.Packet.Expiry = ExpiryNever
		}
	}
	return b
}
