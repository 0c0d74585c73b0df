package model

import "testing"

// TestCutoff: a history cut while still progressing (Cutoff) owes a
// subscriber only the messages its stream got past, and a node only the
// PUBRELs received before one it answered; NoStuck takes the cut as the
// phase's end. The same histories ending in Stuck are losses.
func TestCutoff(t *testing.T) {
	// s1 got m1 and m3 of p1's m1..m4 (m2 skipped, m4 in flight at the cut).
	stream := func(end Kind) History {
		b := newHB().connect("s1", false, false).subscribed("s1", "t/a", 1).connect("p1", false, false)
		for _, m := range []string{"m1", "m2", "m3", "m4"} {
			b.accepted("p1", m, 1).acked("p1", m)
		}
		b.delivered("s1", "m1", 1).delivered("s1", "m3", 1)
		return b.ev(Event{Kind: LivenessStart}).ev(Event{Kind: end}).h
	}
	lost := func(h History) []string {
		var out []string
		for _, v := range Check(h, Options{Only: SetOf(NoLoss, NoStuck)}) {
			out = append(out, v.Invariant.String()+":"+v.Reason[:8])
		}
		return out
	}
	if got := lost(stream(Cutoff)); len(got) != 1 || got[0] != `NoLoss:msg "m2"` {
		t.Errorf("cut: %v, want only m2 (skipped) lost, m4 unfinished", got)
	}
	if got := lost(stream(Stuck)); len(got) != 3 {
		t.Errorf("stuck: %v, want m2 and m4 lost and the Stuck", got)
	}
	// s1 received PUBRELs 1, 2, 3 and answered 2 only.
	pubrels := func(end Kind) History {
		b := newHB().connect("s1", false, false)
		for _, id := range []uint16{1, 2, 3} {
			b.xfer(BrokerNode, "s1", pkt(PUBREL, id))
		}
		b.xfer("s1", BrokerNode, pkt(PUBCOMP, 2))
		return b.ev(Event{Kind: LivenessStart}).ev(Event{Kind: end}).h
	}
	for _, c := range []struct {
		end  Kind
		want int
	}{{Cutoff, 1}, {Quiescent, 2}} {
		if vs := Check(pubrels(c.end), Options{Only: SetOf(PubrelAnswered)}); len(vs) != c.want {
			t.Errorf("end %v: %d PubrelAnswered violations, want %d (%v)", c.end, len(vs), c.want, vs)
		}
	}
}
