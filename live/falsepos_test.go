package live

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/model"
)

// recorded is a history of live/testdata and what judging it must find:
// exactly these promised violations, per invariant.
type recorded struct {
	file    string
	promise model.Policies
	// tolerance is the timing uncertainty the run measured.
	tolerance time.Duration
	want      map[model.Invariant]int
}

// judgeRecorded judges each recorded history as the tester does (Judge)
// and compares the promised violations per invariant.
func judgeRecorded(t *testing.T, cases []recorded) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			h, err := ReadHistory(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p := c.promise
			if p.Broker == (model.Policy{}) {
				p = model.Uniform(model.FixedPolicy())
			}
			v := Judge(h, p, c.tolerance)
			got := map[model.Invariant]int{}
			for _, x := range v.Violations {
				got[x.Invariant]++
			}
			if fmt.Sprint(got) != fmt.Sprint(nonZero(c.want)) {
				for _, x := range v.Violations {
					t.Logf("%s at step %d (%s): %s", x.Invariant, x.Step, x.Node, x.Reason)
				}
				t.Errorf("violations %v, want %v", got, nonZero(c.want))
			}
		})
	}
}

func nonZero(m map[model.Invariant]int) map[model.Invariant]int {
	out := map[model.Invariant]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestResendNotOverlap (issue 20, class 2): a broker that resends an
// unacknowledged copy on its packet id with DUP=0 breaks one rule, the
// DUP flag [MQTT-3.3.1-1]: one Retransmit violation, not also an Overlap.
// A second copy on a new packet id is another copy [MQTT-3.3.4-2].
func TestResendNotOverlap(t *testing.T) {
	judgeRecorded(t, []recorded{
		{file: "resend-dup0.jsonl", want: map[model.Invariant]int{model.Retransmit: 1}},
		{file: "second-copy.jsonl", want: map[model.Invariant]int{model.Overlap: 1}},
	})
}

// TestKeepAliveTolerance (issue 20, class 4): a client's PINGREQ recorded
// 12 ms past its Keep Alive is within a run's measured timing uncertainty
// (34 ms here) and no violation; one 300 ms past it is still caught; with
// no tolerance (the simulator's exact clock) the 12 ms one is caught too.
func TestKeepAliveTolerance(t *testing.T) {
	const measured = 34 * time.Millisecond
	judgeRecorded(t, []recorded{
		{file: "keepalive-jitter.jsonl", tolerance: measured},
		{file: "keepalive-overshoot.jsonl", tolerance: measured, want: map[model.Invariant]int{model.ClientKeepAlive: 1}},
		{file: "keepalive-jitter.jsonl", want: map[model.Invariant]int{model.ClientKeepAlive: 1}},
	})
}

// moveDeliveries returns h with every Delivered event of a subscriber
// moved to just after that subscriber's ack of the message (its PUBCOMP at
// QoS 2, PUBACK at QoS 1), when it has one later: the order a tester that
// reads stdout slowly records. It reports how many it moved.
func moveDeliveries(h model.History) (model.History, int, int) {
	evs := h.Events
	type key struct{ node, msg string }
	idOf := map[key]uint16{} // the packet id of the node's last received PUBLISH of msg
	ackAt := map[int]int{}   // Delivered step -> the step of its ack
	pending := map[string][]int{}
	for i, e := range evs {
		switch {
		case e.Kind == model.Received && e.Packet.Type == model.PUBLISH && e.Node != model.BrokerNode:
			idOf[key{e.Node, e.Packet.Msg}] = e.Packet.ID
		case e.Kind == model.Delivered:
			if _, ok := idOf[key{e.Node, e.Msg}]; ok {
				pending[e.Node] = append(pending[e.Node], i)
			}
		case e.Kind == model.Sent && (e.Packet.Type == model.PUBCOMP || e.Packet.Type == model.PUBACK) && e.Node != model.BrokerNode:
			rest := pending[e.Node][:0]
			for _, d := range pending[e.Node] {
				if idOf[key{e.Node, evs[d].Msg}] == e.Packet.ID {
					ackAt[d] = i
				} else {
					rest = append(rest, d)
				}
			}
			pending[e.Node] = rest
		}
	}
	var out model.History
	after := map[int][]model.Event{}
	already := 0
	for d, a := range ackAt {
		if a > d {
			after[a] = append(after[a], evs[d])
		}
	}
	for i, e := range evs {
		if e.Kind == model.Delivered {
			if _, ok := ackAt[i]; !ok {
				already++ // no ack after it: recorded after its ack, or never acked
			}
		}
	}
	for a := range after {
		sort.Slice(after[a], func(i, j int) bool { return after[a][i].Msg < after[a][j].Msg })
	}
	moved := 0
	for i, e := range evs {
		if a, ok := ackAt[i]; ok && a > i {
			moved++
			continue
		}
		out.Add(e)
		out.Events = append(out.Events, after[i]...)
	}
	return out, moved, already
}

// countsOf counts violations per invariant.
func countsOf(vs []model.Violation) string {
	n := map[model.Invariant]int{}
	for _, v := range vs {
		n[v.Invariant]++
	}
	return fmt.Sprint(n)
}

// TestDeliveryOrderIndependent (issue 20, class 5): a subscriber's stdout
// is read asynchronously, so its deliveries are recorded after its own
// acknowledgements. The recorded run (mosquitto_sub at QoS 2 under
// client kills and cuts, 'simrun live -seed 5 -subscribers 2 -publishers
// 1 -rate 20 -duration 4s -faults client-kill,cut -promise
// subscribers=mosquitto-clients') has deliveries recorded after their
// PUBCOMP; moving every delivery after its subscriber's ack changes no
// judgement: the same violations of every invariant, none promised. A
// duplicate QoS 2 delivery is caught in either order.
func TestDeliveryOrderIndependent(t *testing.T) {
	h, err := ReadHistory(filepath.Join("testdata", "mosquitto-sub-qos2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	ps := model.Policies{Broker: model.FixedPolicy(), Client: model.FixedPolicy(), Clients: map[string]model.Policy{}}
	mosq := model.FixedPolicy()
	mosq.Retransmit, mosq.QoS2Durable, mosq.AckBeforeCallback = model.RetransmitMemory, false, true
	ps.Clients["s1"], ps.Clients["s2"] = mosq, mosq
	late, moved, already := moveDeliveries(h)
	if moved < 10 || already < 10 {
		t.Fatalf("%d deliveries recorded before their ack, %d after: the recorded run shows both orders", moved, already)
	}
	if len(late.Events) != len(h.Events) {
		t.Fatalf("moving lost events: %d, want %d", len(late.Events), len(h.Events))
	}
	t.Logf("%d deliveries recorded before their subscriber's ack (moved after it), %d after it", moved, already)
	for _, c := range []struct {
		name string
		h    model.History
	}{{"as recorded", h}, {"every delivery after its ack", late}} {
		v := Judge(c.h, ps, 0)
		if len(v.Violations) != 0 {
			t.Errorf("%s: promised violations %s", c.name, countsOf(v.Violations))
		}
		if a, b := countsOf(model.Check(c.h, model.Options{})), countsOf(model.Check(h, model.Options{})); a != b {
			t.Errorf("%s: violations %s, as recorded %s", c.name, a, b)
		}
	}
	// The true counterpart: a QoS 2 message s1's application printed twice.
	for _, hh := range []model.History{h, late} {
		dup := model.History{Events: append([]model.Event(nil), hh.Events...)}
		for _, e := range hh.Events {
			if e.Kind == model.Delivered && e.Node == "s1" && e.QoS == 2 {
				dup.Add(e)
				break
			}
		}
		v := Judge(dup, model.Uniform(model.FixedPolicy()), 0)
		if !strings.Contains(countsOf(v.Violations), "QoS2ExactlyOnce") {
			t.Errorf("a duplicate QoS 2 delivery was not caught: %s", countsOf(v.Violations))
		}
	}
}

// asStuck is h with its Cutoff marker recorded as Stuck, as the tester
// recorded every run that reached its liveness bound before Cutoff.
func asStuck(h model.History) model.History {
	out := model.History{Events: append([]model.Event(nil), h.Events...)}
	for i := range out.Events {
		if out.Events[i].Kind == model.Cutoff {
			out.Events[i].Kind = model.Stuck
		}
	}
	return out
}

// TestLivenessCut (issue 20, class 1): runs recorded with 'simrun live
// -subscribers 1 -publishers 1 -rate 60 -duration 3s -faults none
// -liveness 3s -promise subscribers=mosquitto-clients' and a slow
// subscriber template. A subscriber still delivering at the bound
// (mosquitto_sub piped through 'while read -r l; do echo "$l"; sleep
// 0.03; done', seed 21) is cut: the 106 messages in flight are unfinished,
// not lost, and the run is clean; recorded as Stuck (the tester before
// Cutoff) the same history is 106 NoLoss and a NoStuck. Still caught: the
// same slow subscriber dropping every 10th line (seed 22) loses the two
// messages its stream got past before the cut; a subscriber that stops
// printing after 20 lines (awk 'NR <= 20', seed 23) makes no progress and
// is Stuck, every message after the 20th lost.
func TestLivenessCut(t *testing.T) {
	judgeRecorded(t, []recorded{
		{file: "slow-subscriber-cut.jsonl", promise: mosquittoSubscribers()},
		{file: "slow-drop-cut.jsonl", promise: mosquittoSubscribers(), want: map[model.Invariant]int{model.NoLoss: 2}},
		{file: "stuck-subscriber.jsonl", promise: mosquittoSubscribers(), want: map[model.Invariant]int{model.NoLoss: 153, model.NoStuck: 1}},
	})
	h, err := ReadHistory(filepath.Join("testdata", "slow-subscriber-cut.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	v := Judge(asStuck(h), mosquittoSubscribers(), 0)
	if got := countsOf(v.Violations); got != "map[NoLoss:106 NoStuck:1]" {
		t.Errorf("the cut run recorded as Stuck: %s, want the 106 messages in flight as NoLoss and a NoStuck", got)
	}
}

// mosquittoSubscribers is -promise 'subscribers=mosquitto-clients' of a
// run with subscriber s1 and publisher p1.
func mosquittoSubscribers() model.Policies {
	mosq := model.FixedPolicy()
	mosq.Retransmit, mosq.QoS2Durable, mosq.AckBeforeCallback = model.RetransmitMemory, false, true
	return model.Policies{Broker: model.FixedPolicy(), Client: model.FixedPolicy(), Clients: map[string]model.Policy{"s1": mosq}}
}
