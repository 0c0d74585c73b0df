package model

import (
	"fmt"
	"regexp"
	"testing"
)

// handOnRun is s1 and s2, members of $share/g/t/# at QoS 1, both away
// (s1's session expiring after expiry seconds, s2's never), while p1
// publishes m1..m4 at QoS 1 (the broker chose s1 for m1 and m3, s2 for m2
// and m4, which no packet shows); then, at 10 s, end (s1's session ends
// or not) and the broker's drop log of s2's copies of m1 and m3 at its
// drop-newest bound; s2 comes back and gets m2 and m4.
func handOnRun(expiry uint32, end func(*hb)) History {
	b := newHB().shareSub("s1", "$share/g/t/#", 1, 1).shareSub("s2", "$share/g/t/#", 1, 1)
	b.neverExpires("s2")
	for i := range b.h.Events {
		if e := &b.h.Events[i]; e.Packet.Type == CONNECT && (e.Node == "s1" || e.Peer == "s1") {
			e.Packet.Expiry = expiry
		}
	}
	b.closed("s1").closed("s2").connect("p1", false, false)
	for i, m := range []string{"m1", "m2", "m3", "m4"} {
		pid := uint16(i + 1)
		b.accepted("p1", m, 1).xfer("p1", BrokerNode, publish(pid, 1, false, m))
		b.xfer(BrokerNode, "p1", pkt(PUBACK, pid)).acked("p1", m)
	}
	b.at(10, func(b *hb) {
		end(b)
		for _, m := range []string{"m1", "m3"} {
			b.ev(Event{Kind: Dropped, Node: BrokerNode, Peer: "s2", Msg: m, Topic: "t/a", Reason: "queue-full bound=2 policy=drop-newest"})
		}
	})
	b.at(11, func(b *hb) {
		b.connect("s2", true, true)
		for i, m := range []string{"m2", "m4"} {
			sid := uint16(i + 1)
			b.xfer(BrokerNode, "s2", publish(sid, 1, false, m)).delivered("s2", m, 1).xfer("s2", BrokerNode, pkt(PUBACK, sid))
		}
		b.liveness()
	})
	b.neverExpires("s2", "p1")
	return b.h
}

// TestSharedHandOnDrop: a member's copy handed on to another member at the
// end of its session (MQTT 5.0 §4.8.2) joins that member's queue then,
// behind the later copies of its publisher already there: its queue-full
// drop under drop-newest is judged against the queue it met then, and
// only when the history shows an end of the chosen member's session after
// the broker received the message; otherwise it met the queue of its
// receipt [MQTT-4.1.0-1] (swarm seed 690059481150, g1's clean start
// handing p1-1, p1-3 and p1-5 on to g2, whose queue of 4 held 3).
func TestSharedHandOnDrop(t *testing.T) {
	never := uint32(ExpiryNever)
	clean := func(b *hb) { b.xfer("s1", BrokerNode, Packet{Type: CONNECT, Clean: true, Expiry: never}) }
	none := func(*hb) {}
	tests := []struct {
		name  string
		h     History
		bound int
		lost  []string // the messages SharedDelivery reports delivered to no member
	}{
		{"handed on at a clean start, queue full", handOnRun(never, clean), 2, nil},
		{"handed on at a clean start, queue short of the bound", handOnRun(never, clean), 4, []string{"m1", "m3"}},
		{"handed on at the session's expiry, queue full", handOnRun(5, none), 2, nil},
		{"no end of s1's session: dropped at m1's receipt", handOnRun(never, none), 2, []string{"m1"}},
		{"s1's session expired after the drops", handOnRun(20, none), 2, []string{"m1"}},
	}
	re := regexp.MustCompile(`msg "([^"]*)"`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := Check(tc.h, Options{Only: SetOf(SharedDelivery), Limits: BrokerLimits{Queue: tc.bound, QueueFull: DropNewest}})
			var lost []string
			for _, v := range vs {
				lost = append(lost, re.FindStringSubmatch(v.Reason)[1])
			}
			if fmt.Sprint(lost) != fmt.Sprint(tc.lost) {
				for _, v := range vs {
					t.Logf("%s: %s", v.Invariant, v.Reason)
				}
				t.Fatalf("lost %v, want %v", lost, tc.lost)
			}
		})
	}
}
