package findings

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// flowHistory is a broker resending msg m1 to s1 after its PUBREL, and s1
// delivering it twice; m2 goes to s1 once, on another packet id.
func flowHistory() *model.History {
	pub := func(kind model.Kind, node, peer string, id uint16, msg string, dup bool) model.Event {
		return model.Event{Kind: kind, Node: node, Peer: peer, Packet: model.Packet{Type: model.PUBLISH, ID: id, QoS: 2, Dup: dup, Msg: msg}}
	}
	ack := func(kind model.Kind, node, peer string, t uint8, id uint16) model.Event {
		return model.Event{Kind: kind, Node: node, Peer: peer, Packet: model.Packet{Type: t, ID: id}}
	}
	return &model.History{Events: []model.Event{
		{Kind: model.Connected, Node: "s1", Version: V311, SessionPresent: false}, // 0
		{Kind: model.Accepted, Node: "p1", Msg: "m1", QoS: 2},                     // 1
		pub(model.Sent, model.BrokerNode, "s1", 7, "m1", false),                   // 2
		pub(model.Received, "s1", model.BrokerNode, 7, "m1", false),               // 3
		ack(model.Sent, "s1", model.BrokerNode, model.PUBREC, 7),                  // 4
		ack(model.Sent, model.BrokerNode, "s1", model.PUBREL, 7),                  // 5
		{Kind: model.Delivered, Node: "s1", Msg: "m1", QoS: 2},                    // 6
		ack(model.Sent, "s1", model.BrokerNode, model.PUBCOMP, 7),                 // 7
		{Kind: model.Crash, Node: model.BrokerNode},                               // 8
		{Kind: model.Restart, Node: model.BrokerNode},                             // 9
		{Kind: model.Connected, Node: "s1", Version: V311, SessionPresent: true},  // 10
		pub(model.Sent, model.BrokerNode, "s1", 7, "m1", true),                    // 11
		{Kind: model.Delivered, Node: "s1", Msg: "m1", QoS: 2},                    // 12
		{Kind: model.Accepted, Node: "p1", Msg: "m2", QoS: 2},                     // 13
		pub(model.Sent, model.BrokerNode, "s1", 7, "m2", false),                   // 14
		pub(model.Sent, model.BrokerNode, "s1", 8, "m2", false),                   // 15
		{Kind: model.Delivered, Node: "s1", Msg: "m2", QoS: 2},                    // 16
		{Kind: model.Delivered, Node: "s1", Msg: "m2", QoS: 2},                    // 17
	}}
}

var (
	resend = model.NewViolation(model.Retransmit, 11, model.BrokerNode,
		`resent PUBLISH id 7 (msg "m1") to s1 after its PUBREL at step 5 [MQTT-4.3.3-6]`, 5)
	dupM1 = model.NewViolation(model.QoS2ExactlyOnce, 12, "s1", `msg "m1" delivered again at QoS 2 (first at step 6) [MQTT-4.3.3-10]`, 6)
	reuse = model.NewViolation(model.PacketIDUnique, 14, model.BrokerNode,
		`new PUBLISH to s1 reuses id 7, still in flight since step 11 (PUBLISH of msg "m1") [MQTT-2.2.1-4]`, 11)
	dupM2 = model.NewViolation(model.QoS2ExactlyOnce, 17, "s1", `msg "m2" delivered again at QoS 2 (first at step 16) [MQTT-4.3.3-10]`, 16)
)

func total(fs []Finding) int {
	n := 0
	for i := range fs {
		n += fs[i].Total()
	}
	return n
}

// TestConsequenceUnderCause: the duplicate delivery of the message a
// forbidden resend carried is listed under the resend, not as a finding.
func TestConsequenceUnderCause(t *testing.T) {
	fs := Group(flowHistory(), []model.Violation{dupM1, resend})
	if len(fs) != 1 || fs[0].Invariant != model.Retransmit || len(fs[0].Explains) != 1 ||
		fs[0].Explains[0].Violation.Invariant != model.QoS2ExactlyOnce || Rules[fs[0].Explains[0].Rule].Cause != model.Retransmit {
		t.Fatalf("want one Retransmit finding explaining the duplicate, got %+v", fs)
	}
}

// TestTwoBugsTwoFindings: a forbidden resend and a reused packet id are
// two causes and stay two findings, each with its own consequence; a
// duplicate of another message is not the resend's consequence.
func TestTwoBugsTwoFindings(t *testing.T) {
	vs := []model.Violation{resend, dupM1, reuse, dupM2}
	fs := Group(flowHistory(), vs)
	if len(fs) != 2 {
		t.Fatalf("want 2 findings, got %d: %+v", len(fs), fs)
	}
	if fs[0].Invariant != model.Retransmit || fs[1].Invariant != model.PacketIDUnique {
		t.Fatalf("want Retransmit then PacketIDUnique, got %s, %s", fs[0].Invariant, fs[1].Invariant)
	}
	if len(fs[0].Explains) != 1 || fs[0].Explains[0].Violation.Step != 12 || len(fs[1].Explains) != 1 || fs[1].Explains[0].Violation.Step != 17 {
		t.Fatalf("consequences misplaced: %+v / %+v", fs[0].Explains, fs[1].Explains)
	}
	if total(fs) != len(vs) {
		t.Fatalf("findings account for %d violations, want %d", total(fs), len(vs))
	}
}

// TestNoRuleNoLink: without the rule, the duplicate is its own finding
// (the canary of the rule table: a rule removed is a finding more).
func TestNoRuleNoLink(t *testing.T) {
	saved := Rules
	defer func() { Rules = saved }()
	Rules = Rules[1:] // drop Retransmit's rule
	fs := Group(flowHistory(), []model.Violation{resend, dupM1})
	if len(fs) != 2 {
		t.Fatalf("without the Retransmit rule want 2 findings, got %d", len(fs))
	}
}

// TestSamePatternOneFinding: occurrences that differ in message, packet id,
// step and client number are one finding.
func TestSamePatternOneFinding(t *testing.T) {
	other := model.NewViolation(model.Retransmit, 15, model.BrokerNode,
		`resent PUBLISH id 8 (msg "m2") to s2 after its PUBREL at step 9 [MQTT-4.3.3-6]`, 9)
	fs := Group(flowHistory(), []model.Violation{resend, other})
	if len(fs) != 1 || fs[0].Count() != 2 || fs[0].First != 0 {
		t.Fatalf("want one finding of 2, got %+v", fs)
	}
}

// TestExcerptHoldsFlow: the clearest occurrence's excerpt holds the whole
// packet-id flow of its message: accept, PUBLISH, PUBREC, PUBREL, PUBCOMP,
// the broker's crash and restart, the reconnect, the resend and both
// deliveries; nothing of m2's later flow on the same id.
func TestExcerptHoldsFlow(t *testing.T) {
	fs := Group(flowHistory(), []model.Violation{resend})
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	if got := fs[0].Excerpt; !equalInts(got, want) {
		t.Fatalf("excerpt %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClausesInRunVersion: a 3.1.1 run cites 3.1.1 numbers; one 3.1.1
// lacks says so; a 5.0 run keeps 5.0's.
func TestClausesInRunVersion(t *testing.T) {
	for _, c := range []struct {
		reason string
		v      uint8
		want   string
	}{
		{"after its PUBREL [MQTT-4.3.3-6]", V311, "MQTT-4.3.3-1"},
		{"after its PUBREL [MQTT-4.3.3-6]", V5, "MQTT-4.3.3-6"},
		{"no PUBCOMP [MQTT-4.3.3-11]", V311, "MQTT-4.3.3-2"},
		{"reuses id 7 [MQTT-2.2.1-4]", V311, "MQTT-2.3.1-4"},
		{"order [MQTT-4.6.0-5] v3.1.1 [MQTT-4.6.0-6]", V311, "MQTT-4.6.0-6"},
		{"order [MQTT-4.6.0-5] v3.1.1 [MQTT-4.6.0-6]", V5, "MQTT-4.6.0-5"},
		{"owed [MQTT-3.3.1-9] [MQTT-3.3.1-10] (3.1.1 [MQTT-3.3.1-6])", V311, "MQTT-3.3.1-6,MQTT-3.3.1-10 (5.0; 3.1.1: none, 3.1.1 has no Retain Handling: every SUBSCRIBE brings the retained messages (MQTT-3.8.4-3))"},
		{"silent [MQTT-3.1.2-23]", V5, "MQTT-3.1.2-20"},
		{"parked [MQTT-4.9.0-2]", V311, "MQTT-4.9.0-2 (5.0; 3.1.1: none, 3.1.1 has no flow control)"},
	} {
		if got := strings.Join(Clauses(c.reason, c.v), ","); got != c.want {
			t.Errorf("Clauses(%q, %d) = %q, want %q", c.reason, c.v, got, c.want)
		}
	}
	if got := Reword(`resent PUBLISH id 7 after its PUBREL [MQTT-4.3.3-6]`, V311); got != `resent PUBLISH id 7 after its PUBREL [MQTT-4.3.3-1]` {
		t.Errorf("Reword: %q", got)
	}
}

// TestFindingVersion: a finding about a 3.1.1 client cites 3.1.1 numbers.
func TestFindingVersion(t *testing.T) {
	fs := Group(flowHistory(), []model.Violation{resend})
	if fs[0].Version != V311 || strings.Join(fs[0].Clauses, ",") != "MQTT-4.3.3-1" {
		t.Fatalf("version %d clauses %v", fs[0].Version, fs[0].Clauses)
	}
	if md := Markdown(flowHistory(), fs, 1); strings.Contains(md, "4.3.3-6") {
		t.Fatalf("a 3.1.1 finding cites a 5.0 number:\n%s", md)
	}
}

// TestFormatAckHasNoQoS: acknowledgements print no QoS (they have none).
func TestFormatAckHasNoQoS(t *testing.T) {
	h := flowHistory()
	for _, i := range []int{4, 5, 7} {
		if s := FormatEvent(i, &h.Events[i]); strings.Contains(s, "qos=") {
			t.Errorf("%q prints a QoS", s)
		}
	}
	if s := FormatEvent(2, &h.Events[2]); !strings.Contains(s, "qos=2") {
		t.Errorf("%q lacks the PUBLISH's QoS", s)
	}
}

// TestPattern: what varies between occurrences goes.
func TestPattern(t *testing.T) {
	a := Pattern(`resent PUBLISH id 177 (msg "lt000002-177") to s2 after its PUBREL at step 7160 [MQTT-4.3.3-6]`)
	b := Pattern(`resent PUBLISH id 3 (msg "lt000002-9") to s1 after its PUBREL at step 12 [MQTT-4.3.3-6]`)
	if a != b {
		t.Fatalf("%q != %q", a, b)
	}
	if c := Pattern(`resent PUBLISH id 3 (msg "x") to s1 with DUP=0 [MQTT-3.3.1-1]`); c == a {
		t.Fatalf("two reasons share a pattern: %q", c)
	}
}

// TestAlreadyHad: a FlowResume "never sent" of a message the client had
// says so in the reading.
func TestAlreadyHad(t *testing.T) {
	v := model.NewViolation(model.FlowResume, 17, model.BrokerNode, `msg "m2", owed to s1 at QoS 2, is never sent though s1 is connected at the end: parked for good [MQTT-4.9.0-2]`, 13)
	fs := Group(flowHistory(), []model.Violation{v})
	if !strings.Contains(fs[0].Reading, "already had m2") {
		t.Fatalf("reading: %s", fs[0].Reading)
	}
}

// TestRefusedIsNoFinding: a message the broker refused (PUBACK 0x97 Quota
// exceeded) is owed to no one, so the model reports no loss of it and no
// finding names it; an accepted message never sent is still a NoLoss
// finding, read as the broker's loss with no disclaimer.
func TestRefusedIsNoFinding(t *testing.T) {
	pub := func(kind model.Kind, node, peer string, id uint16, msg string) model.Event {
		return model.Event{Kind: kind, Node: node, Peer: peer, Packet: model.Packet{Type: model.PUBLISH, ID: id, QoS: 1, Topic: "t", Msg: msg, Payload: msg}}
	}
	ack := func(kind model.Kind, node, peer string, id uint16, reason uint8) model.Event {
		return model.Event{Kind: kind, Node: node, Peer: peer, Packet: model.Packet{Type: model.PUBACK, ID: id, Reason: reason}}
	}
	sub := model.Packet{Type: model.SUBSCRIBE, ID: 1, QoS: 1, Filter: "t"}
	h := &model.History{Events: []model.Event{
		{Kind: model.Sent, Node: "s1", Peer: model.BrokerNode, Packet: sub},
		{Kind: model.Received, Node: model.BrokerNode, Peer: "s1", Packet: sub},
		{Kind: model.Sent, Node: model.BrokerNode, Peer: "s1", Packet: model.Packet{Type: model.SUBACK, ID: 1, Reason: 1}},
		{Kind: model.Subscribed, Node: "s1", Filter: "t", QoS: 1, Persistent: true},
		{Kind: model.Accepted, Node: "p1", Msg: "refused", Topic: "t", QoS: 1},
		pub(model.Sent, "p1", model.BrokerNode, 1, "refused"),
		pub(model.Received, model.BrokerNode, "p1", 1, "refused"),
		ack(model.Sent, model.BrokerNode, "p1", 1, 0x97),
		ack(model.Received, "p1", model.BrokerNode, 1, 0x97),
		{Kind: model.Accepted, Node: "p1", Msg: "lost", Topic: "t", QoS: 1},
		pub(model.Sent, "p1", model.BrokerNode, 2, "lost"),
		pub(model.Received, model.BrokerNode, "p1", 2, "lost"),
		ack(model.Sent, model.BrokerNode, "p1", 2, 0),
		ack(model.Received, "p1", model.BrokerNode, 2, 0),
		{Kind: model.Acknowledged, Node: "p1", Msg: "lost"},
		{Kind: model.LivenessStart},
		{Kind: model.Quiescent},
	}}
	vs := model.Check(*h, model.Options{Only: model.SetOf(model.NoLoss)})
	if len(vs) != 1 || !strings.Contains(vs[0].Reason, `"lost"`) {
		t.Fatalf("want one NoLoss violation, of the accepted message, got %v", vs)
	}
	fs := Group(h, vs)
	if len(fs) != 1 || !strings.HasSuffix(fs[0].Pattern, "["+ShapeNeverSent+"]") {
		t.Fatalf("want one finding of shape %q, got %+v", ShapeNeverSent, fs)
	}
	if text := fs[0].Title() + fs[0].Reading; strings.Contains(text, "refused") || strings.Contains(text, "not a breach") {
		t.Errorf("the finding of an accepted loss carries a disclaimer: %q", text)
	}
}
