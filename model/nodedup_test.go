package model

import (
	"fmt"
	"testing"
)

// noDedupHistory is a QoS 2 message m1 from p1 that the broker sends s1;
// s1's PUBREC is lost with its connection (sent, never received), so on the
// next connection the broker resends the PUBLISH (DUP=1). With redeliver,
// s1's application gets it again at that resend (a receiver that does not
// suppress duplicates); with again, s1 delivers it a second time from the
// first PUBLISH alone (no resend could explain it).
func noDedupHistory(redeliver, again bool) History {
	b := base()
	b.accepted("p1", "m1", 2)
	b.xfer("p1", BrokerNode, publish(1, 2, false, "m1"))
	b.xfer(BrokerNode, "p1", pkt(PUBREC, 1))
	b.xfer("p1", BrokerNode, pkt(PUBREL, 1))
	b.xfer(BrokerNode, "p1", pkt(PUBCOMP, 1)).acked("p1", "m1")
	b.xfer(BrokerNode, "s1", publish(7, 2, false, "m1"))
	b.delivered("s1", "m1", 2)
	if again {
		b.delivered("s1", "m1", 2)
	}
	b.sent("s1", BrokerNode, pkt(PUBREC, 7)) // lost with the connection
	b.closed("s1")
	b.connect("s1", true, true)
	b.xfer(BrokerNode, "s1", publish(7, 2, true, "m1"))
	if redeliver {
		b.delivered("s1", "m1", 2)
	}
	b.xfer("s1", BrokerNode, pkt(PUBREC, 7))
	b.xfer(BrokerNode, "s1", pkt(PUBREL, 7))
	b.xfer("s1", BrokerNode, pkt(PUBCOMP, 7))
	return b.liveness().h
}

// TestQoS2NoDedup: the promise "does not suppress QoS 2 duplicates"
// (Policy.QoS2NoDedup, simrun's -promise client-no-dedup) excuses a
// duplicate that a second receipt of the PUBLISH explains, and only that.
func TestQoS2NoDedup(t *testing.T) {
	noDedup := Policies{Broker: FixedPolicy(), Client: FixedPolicy(), Clients: map[string]Policy{"s1": FixedPolicy()}}
	s1 := noDedup.Clients["s1"]
	s1.QoS2NoDedup = true
	noDedup.Clients["s1"] = s1
	count := func(h History, ps Policies) int {
		_, vs := CheckUnder(h, func(f Faults) Options {
			return Options{Only: PromisesPer(ps, f, ClientFaults(h)), NoDedup: ps.NoDedup([]string{"p1", "s1"})}
		})
		n := 0
		for _, v := range vs {
			if v.Invariant == QoS2ExactlyOnce {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name               string
		h                  History
		spec, underNoDedup int
	}{
		{"the resend suppressed", noDedupHistory(false, false), 0, 0},
		{"the resend delivered again", noDedupHistory(true, false), 1, 0},
		{"one PUBLISH delivered twice", noDedupHistory(false, true), 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := count(c.h, Uniform(FixedPolicy())); got != c.spec {
				t.Errorf("under the spec: %d QoS2ExactlyOnce, want %d", got, c.spec)
			}
			if got := count(c.h, noDedup); got != c.underNoDedup {
				t.Errorf("under QoS2NoDedup: %d QoS2ExactlyOnce, want %d", got, c.underNoDedup)
			}
		})
	}
	if got := fmt.Sprint(noDedup.NoDedup([]string{"s1", "p1", BrokerNode})); got != "[s1]" {
		t.Errorf("NoDedup = %s, want [s1]", got)
	}
	if got := fmt.Sprint(Uniform(s1).NoDedup([]string{"s1", "p1", BrokerNode})); got != "[p1 s1]" {
		t.Errorf("Uniform(no dedup).NoDedup = %s, want [p1 s1]", got)
	}
}
