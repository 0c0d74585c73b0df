package model

import (
	"fmt"
	"testing"
)

// benchHistory is n alternating QoS1/QoS2 flows through the broker, with a
// reconnect every 50 messages: about 20 events per message.
func benchHistory(n int) History {
	b := base()
	for i := range n {
		msg := fmt.Sprintf("m%d", i)
		id := uint16(i%100 + 1)
		if i%2 == 0 {
			b.qos1(msg, id, id)
		} else {
			b.qos2(msg, id, id)
		}
		if i%50 == 49 {
			b.closed("p1").connect("p1", true, true)
		}
	}
	return b.liveness().h
}

func BenchmarkCheck(b *testing.B) {
	h := benchHistory(500)
	b.ReportMetric(float64(len(h.Events)), "events")
	b.ResetTimer()
	for b.Loop() {
		if vs := CheckPromised(h, FixedPolicy()); len(vs) != 0 {
			b.Fatalf("unexpected violations: %v", vs[:1])
		}
	}
}

// TestBenchHistoryClean guards the benchmark's input: a long correct history
// shows no violation at all.
func TestBenchHistoryClean(t *testing.T) {
	if vs := Check(benchHistory(200), Options{}); len(vs) != 0 {
		t.Fatalf("want none, got %v", vs[:1])
	}
}
