package model

import (
	"strconv"
	"testing"
)

// TestExplainedBy: a broker that answers Session Present=0 for s1's kept
// session, after a message for s1 was accepted, shows a SessionPresent
// violation at the CONNACK and a NoLoss one at the earlier Accepted; Check
// lists the cause first and the loss after it, explained by it.
func TestExplainedBy(t *testing.T) {
	never := uint32(ExpiryNever)
	b := newHB().conn(0, "s1", 5, false, never, false)
	b.at(1, func(b *hb) {
		b.xfer("s1", BrokerNode, pkt(SUBSCRIBE, 1)).xfer(BrokerNode, "s1", pkt(SUBACK, 1)).subscribed("s1", "t/#", 2)
	})
	b.end(2, "s1").conn(3, "p1", 5, false, never, false)
	b.at(4, func(b *hb) {
		b.accepted("p1", "m1", 1)
		b.xfer("p1", BrokerNode, publish(1, 1, false, "m1")).xfer(BrokerNode, "p1", pkt(PUBACK, 1)).acked("p1", "m1")
	})
	b.conn(5, "s1", 5, false, never, false).liveness()
	vs := Check(b.h, Options{})
	if len(vs) < 2 || vs[0].Invariant != SessionPresent || vs[0].ExplainedBy != "" {
		t.Fatalf("want SessionPresent first, unexplained: %v", vs)
	}
	want := "SessionPresent at step " + strconv.Itoa(vs[0].Step)
	found := false
	for _, v := range vs[1:] {
		if v.Invariant == NoLoss {
			found = true
			if v.ExplainedBy != want {
				t.Fatalf("NoLoss explained by %q, want %q: %v", v.ExplainedBy, want, vs)
			}
		}
	}
	if !found {
		t.Fatalf("no NoLoss violation: %v", vs)
	}
}

// TestExplainedByUnrelated: a loss at another client is not explained by a
// Session Present bug of s1.
func TestExplainedByUnrelated(t *testing.T) {
	c := Violation{Invariant: SessionPresent, Step: 5, Node: BrokerNode}
	v := Violation{Invariant: NoLoss, Step: 2, Node: "s2"}
	if explains(&c, &v, []string{"s1"}, []string{"s2", "p1"}) {
		t.Fatal("a Session Present bug of s1 explains a loss at s2")
	}
	if !explains(&c, &v, []string{"s1"}, []string{"s1", "p1"}) {
		t.Fatal("a Session Present bug of s1 does not explain a loss at s1")
	}
	if explains(&v, &c, []string{"s1"}, []string{"s1"}) {
		t.Fatal("a loss explains a Session Present bug")
	}
	late := Violation{Invariant: Order, Step: 4, Node: "s1"}
	if explains(&c, &late, []string{"s1"}, []string{"s1"}) {
		t.Fatal("a cause at step 5 explains an Order breach at step 4")
	}
}
