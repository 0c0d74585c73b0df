package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestStopBrokerDuringDialReconnects replays rapid's finding (shrunk by
// hand): p1's dial is held by a partition; right after the heal the broker
// accepts it and then stops cleanly, so the close reaches p1 before the
// open. The client must take that ConnClosed as its Dial's failure and
// connect again once the broker restarts; before the fix it stayed
// "dialling" for ever and its QoS 2 message was never delivered (NoStuck,
// NoLoss).
func TestStopBrokerDuringDialReconnects(t *testing.T) {
	cfg, plan := readPlanFile(t, "stop-during-dial.plan")
	r := Run(cfg, plan)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	// The plan must still reach the situation: a connection of p1 the
	// broker saw open that p1 never did.
	opens := map[string]int{}
	for _, e := range r.History().Events {
		if e.Kind == model.ConnOpened {
			opens[e.Node+">"+e.Peer]++
		}
	}
	if opens[BrokerName+">p1"] <= opens["p1>"+BrokerName] {
		t.Fatalf("the plan no longer closes a dial before p1 sees it open (opens %v); re-shrink it", opens)
	}
	if !r.Quiet || r.Stats.Delivered != 1 {
		t.Fatalf("delivered %d of 1 message (quiet %v)", r.Stats.Delivered, r.Quiet)
	}
	if len(r.Violations) > 0 {
		t.Fatalf("promised violations: %v", r.Violations)
	}
}
