package model

import (
	"fmt"
	"slices"
	"testing"
)

// citesWell says what is wrong with v's Events in a history of n events,
// or "": they must be ascending, distinct, inside the history and hold
// Step.
func citesWell(v Violation, n int) string {
	if !slices.Contains(v.Events, v.Step) {
		return fmt.Sprintf("violation %v: Events %v lack its step", v, v.Events)
	}
	for i, s := range v.Events {
		if s < 0 || s >= n || (i > 0 && v.Events[i-1] >= s) {
			return fmt.Sprintf("violation %v: Events %v not ascending, distinct and inside %d events", v, v.Events, n)
		}
	}
	return ""
}

func TestCite(t *testing.T) {
	cases := []struct {
		step  int
		cited []int
		want  []int
	}{
		{3, nil, []int{3}},
		{3, []int{1, -1, 3, 7, 1}, []int{1, 3, 7}},
		{0, []int{-5}, []int{0}},
	}
	for _, c := range cases {
		if got := Cite(c.step, c.cited...); !slices.Equal(got, c.want) {
			t.Errorf("Cite(%d, %v) = %v, want %v", c.step, c.cited, got, c.want)
		}
	}
	v := NewViolation(Order, 4, "s1", "why", 2)
	if v.Step != 4 || v.Invariant != Order || v.Node != "s1" || v.Reason != "why" || !slices.Equal(v.Events, []int{2, 4}) {
		t.Errorf("NewViolation = %+v", v)
	}
}

// TestViolationsCiteTheirEvents: each invariant's violation names, besides
// its step, the events the judgement rests on (by kind, in history order).
func TestViolationsCiteTheirEvents(t *testing.T) {
	reused := base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1")).
		sent("p1", BrokerNode, publish(1, 1, false, "m2"))
	qos2Relsent := base().accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
	qos2Relsent.xfer(BrokerNode, "p1", pkt(PUBREC, 1)).sent("p1", BrokerNode, pkt(PUBREL, 1)).closed("p1")
	qos2Relsent.connect("p1", true, true).sent("p1", BrokerNode, publish(1, 2, true, "m1"))
	stateless := newHB().connect("p1", false, false).closed("p1").connect("s1", true, false).sent("s1", BrokerNode, pkt(SUBSCRIBE, 1))
	unanswered := base().accepted("p1", "m1", 2).xfer(BrokerNode, "s1", publish(3, 2, false, "m1"))
	unanswered.xfer("s1", BrokerNode, pkt(PUBREC, 3)).xfer(BrokerNode, "s1", pkt(PUBREL, 3)).liveness()
	cases := []struct {
		name string
		inv  Invariant
		h    *hb
		want []string // kinds (and packet types) of the cited events
	}{
		{"NoLoss: the SUBACK, the Accepted, the liveness phase", NoLoss, lostQoS1().liveness(),
			[]string{"Sent SUBACK", "Accepted", "LivenessStart"}},
		{"QoS2ExactlyOnce: both deliveries", QoS2ExactlyOnce, base().qos2("m1", 1, 1).delivered("s1", "m1", 2),
			[]string{"Delivered", "Delivered"}},
		{"PacketIDUnique: the send holding the id", PacketIDUnique, reused, []string{"Sent PUBLISH", "Sent PUBLISH"}},
		{"Retransmit: original, PUBREL, resend", Retransmit, qos2Relsent, []string{"Sent PUBLISH", "Sent PUBREL", "Sent PUBLISH"}},
		{"SessionPresent: the CONNACK and the send", SessionPresent, stateless, []string{"Connected", "Sent SUBSCRIBE"}},
		{"PubrelAnswered: the PUBREL and the liveness phase", PubrelAnswered, unanswered, []string{"Received PUBREL", "LivenessStart"}},
		{"NoStuck: liveness start and the stuck event", NoStuck, base().kind(LivenessStart).ev(Event{Kind: Stuck, Reason: "x"}),
			[]string{"LivenessStart", "Stuck"}},
		{"Order: the earlier and the late delivery", Order, orderSwapped(), []string{"Delivered", "Delivered"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := Check(c.h.h, Options{Only: SetOf(c.inv)})
			if len(vs) == 0 {
				t.Fatalf("no %v violation", c.inv)
			}
			var got []string
			for _, i := range vs[0].Events {
				got = append(got, kindText(c.h.h.Events[i]))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("%v cites %v, want %v", vs[0], got, c.want)
			}
		})
	}
}

// orderSwapped: p1 accepts m1 then m2; s1 first gets m2, then m1.
func orderSwapped() *hb {
	b := base().accepted("p1", "m1", 1).accepted("p1", "m2", 1)
	return b.delivered("s1", "m2", 1).delivered("s1", "m1", 1)
}

// kindText names an event's kind, with the packet type of Sent and
// Received.
func kindText(e Event) string {
	names := map[Kind]string{Accepted: "Accepted", Delivered: "Delivered", Subscribed: "Subscribed", Connected: "Connected",
		LivenessStart: "LivenessStart", Stuck: "Stuck", Sent: "Sent", Received: "Received"}
	s, ok := names[e.Kind]
	if !ok {
		s = fmt.Sprintf("Kind(%d)", e.Kind)
	}
	if e.Kind == Sent || e.Kind == Received {
		s += " " + packetName(e.Packet.Type)
	}
	return s
}
