package findings

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// cutHistory: m1 accepted and still being sent to s1 after the liveness
// phase began; the run ends Stuck, with deliveries (of m0) in its last
// second when flowing, or none (the last 2 s before the Stuck quiet).
func cutHistory(flowing bool) *model.History {
	last := int64(3e9)
	if flowing {
		last = int64(4.5e9)
	}
	return &model.History{Events: []model.Event{
		{Kind: model.Accepted, Node: "p1", Msg: "m1", QoS: 2, Time: 1e9}, // 0
		{Kind: model.LivenessStart, Time: 2e9},                           // 1
		{Kind: model.Sent, Node: model.BrokerNode, Peer: "s1", Time: 2.5e9, Packet: model.Packet{Type: model.PUBLISH, ID: 3, QoS: 2, Msg: "m1"}}, // 2
		{Kind: model.Delivered, Node: "s1", Msg: "m0", QoS: 2, Time: last},                                                                       // 3
		{Kind: model.Stuck, Time: 5e9}, // 4
	}}
}

var (
	lostM1 = model.NewViolation(model.NoLoss, 0, "s1", `msg "m1" (p1, "t", QoS 2) never delivered to s1`, 0)
	stuck  = model.NewViolation(model.NoStuck, 4, "", "stuck after the liveness bound: 1 delivery pending", 4)
)

// TestCutAtBound: a run cut at its liveness bound while delivering reads
// as one finding of the bound, the loss of a message still moving listed
// under it; the same run gone quiet before its bound keeps the loss as a
// finding (the canary: the cut must not swallow a true loss).
func TestCutAtBound(t *testing.T) {
	fs := Group(cutHistory(true), []model.Violation{lostM1, stuck})
	if len(fs) != 1 || fs[0].Subject != CutSubject || len(fs[0].Explains) != 1 || fs[0].Explains[0].Rule != CutRule {
		t.Fatalf("flowing at the bound: want one cut finding explaining the loss, got %d: %+v", len(fs), fs)
	}
	fs = Group(cutHistory(false), []model.Violation{lostM1, stuck})
	if len(fs) != 1 || fs[0].Invariant != model.NoLoss || len(fs[0].Explains) != 1 || fs[0].Explains[0].Violation.Invariant != model.NoStuck {
		t.Fatalf("quiet at the bound: want the NoLoss finding explaining the NoStuck, got %d: %+v", len(fs), fs)
	}
}
