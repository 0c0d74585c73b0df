package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// synthRecorder builds a live-like history: both views of every packet
// (the client's, recorded in process, and the broker's, recorded by the
// proxy), one nanosecond apart.
type synthRecorder struct {
	h model.History
	t int64
}

func (r *synthRecorder) add(e model.Event) {
	r.t += 1000
	e.Time = r.t
	r.h.Add(e)
}

// packet records one packet from a to b: Sent by a, then Received by b.
func (r *synthRecorder) packet(a, b string, p model.Packet) {
	r.add(model.Event{Kind: model.Sent, Node: a, Peer: b, Packet: p})
	r.add(model.Event{Kind: model.Received, Node: b, Peer: a, Packet: p})
}

// connect opens client c's connection, persistent 5.0 session.
func (r *synthRecorder) connect(c string, sp bool) {
	r.add(model.Event{Kind: model.ConnOpened, Node: c, Peer: model.BrokerNode})
	r.add(model.Event{Kind: model.ConnOpened, Node: model.BrokerNode, Peer: c})
	r.packet(c, model.BrokerNode, model.Packet{Type: model.CONNECT, Expiry: 3600})
	r.packet(model.BrokerNode, c, model.Packet{Type: model.CONNACK, Sessions: sp})
	r.add(model.Event{Kind: model.Connected, Node: c, Peer: model.BrokerNode, SessionPresent: sp, HadState: sp, Version: 5})
}

// qos2 runs one QoS 2 flow of msg from sender to receiver on id; the
// receiver delivers it at the PUBLISH when it is a subscriber.
func (r *synthRecorder) qos2(from, to string, id uint16, msg string, dup bool) {
	r.packet(from, to, model.Packet{Type: model.PUBLISH, ID: id, QoS: 2, Dup: dup, Topic: "t", Msg: msg, Payload: msg})
	if to != model.BrokerNode {
		r.add(model.Event{Kind: model.Delivered, Node: to, Msg: msg, Topic: "t", QoS: 2, Packet: model.Packet{Type: model.PUBLISH, QoS: 2, Dup: dup, Msg: msg}})
	}
	r.packet(to, from, model.Packet{Type: model.PUBREC, ID: id})
	r.packet(from, to, model.Packet{Type: model.PUBREL, ID: id})
	r.packet(to, from, model.Packet{Type: model.PUBCOMP, ID: id})
}

// synthHistory is a history of at least events events: 2 publishers and
// 2 persistent subscribers at QoS 2, and every crashEvery messages a
// broker crash after which the broker resends its last few completed
// flights to s1 (the rolled-back broker of the mosquitto runs): Retransmit
// violations and the duplicate deliveries they explain.
func synthHistory(events, crashEvery, resends int) model.History {
	r := &synthRecorder{}
	clients := []string{"s1", "s2", "p1", "p2"}
	for _, c := range clients {
		r.connect(c, false)
	}
	for _, s := range clients[:2] {
		r.packet(s, model.BrokerNode, model.Packet{Type: model.SUBSCRIBE, ID: 1, QoS: 2, Filter: "t"})
		r.packet(model.BrokerNode, s, model.Packet{Type: model.SUBACK, ID: 1, Reason: 2})
		r.add(model.Event{Kind: model.Subscribed, Node: s, Filter: "t", QoS: 2, Persistent: true})
	}
	var recent []string
	for n := 1; len(r.h.Events) < events; n++ {
		pub := clients[2+n%2]
		msg := fmt.Sprintf("lt00002a-%d", n)
		id := uint16(n%60000 + 1)
		r.add(model.Event{Kind: model.Accepted, Node: pub, Msg: msg, Topic: "t", QoS: 2})
		r.qos2(pub, model.BrokerNode, id, msg, false)
		r.add(model.Event{Kind: model.Acknowledged, Node: pub, Msg: msg})
		for _, s := range clients[:2] {
			r.qos2(model.BrokerNode, s, id, msg, false)
		}
		recent = append(recent, msg)
		if len(recent) > resends {
			recent = recent[1:]
		}
		if n%crashEvery != 0 {
			continue
		}
		r.add(model.Event{Kind: model.Crash, Node: model.BrokerNode, Point: model.CrashBetweenSteps})
		for _, c := range clients {
			r.add(model.Event{Kind: model.ConnClosed, Node: c, Peer: model.BrokerNode})
			r.add(model.Event{Kind: model.ConnClosed, Node: model.BrokerNode, Peer: c})
		}
		r.add(model.Event{Kind: model.Restart, Node: model.BrokerNode})
		for _, c := range clients {
			r.connect(c, true)
		}
		for i, m := range recent { // already completed: resent after its PUBREL
			var k int
			fmt.Sscanf(m, "lt00002a-%d", &k)
			_ = i
			r.qos2(model.BrokerNode, "s1", uint16(k%60000+1), m, true)
		}
	}
	r.add(model.Event{Kind: model.LivenessStart})
	r.add(model.Event{Kind: model.Quiescent})
	return r.h
}

// BenchmarkLiveJudgeWrite judges a 500,000-event live history and writes
// its run directory (summary, violations, findings, history, chart), as
// simrun live does after a run: docs/live.md quotes it.
//
//	go test ./cmd/simrun -run '^$' -bench BenchmarkLiveJudgeWrite -benchtime 1x -cpu 1
func BenchmarkLiveJudgeWrite(b *testing.B) {
	h := synthHistory(500_000, 200, 20)
	cfg := live.DefaultTestConfig()
	cfg.Seed = 42
	cpu := cpuTime()
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "run")
		rep := live.JudgeRecorded(cfg, h)
		if err := rep.Write(dir); err != nil {
			b.Fatal(err)
		}
		if err := writeLiveChart(dir, rep, "replay"); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(rep.Verdict.Violations)), "violations")
		b.ReportMetric(float64(len(rep.Findings)), "findings")
	}
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(len(h.Events)), "events")
}

// TestChartWindow: a history longer than the bound is charted around the
// first violation's events, the violations renumbered into the window.
func TestChartWindow(t *testing.T) {
	h := synthHistory(3000, 20, 3)
	rep := live.JudgeRecorded(live.DefaultTestConfig(), h)
	vs := findingsFirst(rep.Findings, rep.Verdict.Violations)
	w, wvs, note := chartWindow(h, vs, 1000)
	if len(w.Events) != 1000 || note == "" || len(wvs) == 0 {
		t.Fatalf("window of %d events, %d violations, note %q", len(w.Events), len(wvs), note)
	}
	lo := vs[0].Step - wvs[0].Step
	if wvs[0].Step+lo != vs[0].Step || w.Events[wvs[0].Step].Kind != h.Events[vs[0].Step].Kind {
		t.Fatalf("the lead violation moved: %d in the window, %d in the history", wvs[0].Step, vs[0].Step)
	}
	if _, _, note := chartWindow(h, vs, len(h.Events)); note != "" {
		t.Fatalf("a history within the bound was cut: %s", note)
	}
}

// TestSynthHistoryFindings: the benchmark's history is what it says: a
// resend after PUBREL per crash and resend, each duplicate delivery
// explained by it, and nothing else.
func TestSynthHistoryFindings(t *testing.T) {
	h := synthHistory(20_000, 100, 5)
	cfg := live.DefaultTestConfig()
	rep := live.JudgeRecorded(cfg, h)
	if len(rep.Findings) != 1 || rep.Findings[0].Invariant != model.Retransmit {
		t.Fatalf("want one Retransmit finding, got %d:\n%s", len(rep.Findings), rep.Summary())
	}
	f := rep.Findings[0]
	if f.Count() == 0 || len(f.Explains) != f.Count() || f.Total() != len(rep.Verdict.Violations) {
		t.Fatalf("counts: %d occurrences, %d explained, %d violations\n%s", f.Count(), len(f.Explains), len(rep.Verdict.Violations), rep.Summary())
	}
}
