package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestDowngradeAckLostOwesNothing replays swarm seed 3778 (unsub=draw),
// shrunk: s7 holds t/c/y at QoS 1, resubscribes it at QoS 0, and its
// connection resets after the broker took the SUBSCRIBE and before s7 read
// the SUBACK. The broker rightly routes p4's QoS 1 message at QoS 0
// [MQTT-3.8.4-3] [MQTT-3.8.4-8] and, s7 being away, drops it. The observer
// owed it to s7 (it learnt the downgrade only from the SUBACK), so the run
// never went quiet (NoStuck); it now takes the downgrade at the broker's
// Received SUBSCRIBE.
func TestDowngradeAckLostOwesNothing(t *testing.T) {
	cfg, plan := readPlanFile(t, "downgrade-ack-lost.plan")
	r := Run(cfg, plan)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	// The plan must still reach the situation: the broker sent s7 a SUBACK
	// of a QoS 0 SUBSCRIBE that s7 never read.
	var qos0, sent, read int
	for _, e := range r.History().Events {
		switch {
		case e.Kind == model.Received && e.Node == BrokerName && e.Packet.Type == model.SUBSCRIBE && e.Packet.QoS == 0:
			qos0++
		case e.Kind == model.Sent && e.Node == BrokerName && e.Packet.Type == model.SUBACK:
			sent++
		case e.Kind == model.Received && e.Node == "s7" && e.Packet.Type == model.SUBACK:
			read++
		}
	}
	if qos0 != 1 || sent != 2 || read != 1 {
		t.Fatalf("the plan no longer loses the SUBACK of s7's QoS 0 SUBSCRIBE (QoS 0 SUBSCRIBEs %d, SUBACKs sent %d, read %d); re-shrink it", qos0, sent, read)
	}
	if !r.Quiet || len(r.Violations) > 0 {
		t.Fatalf("quiet %v, promised violations: %v", r.Quiet, r.Violations)
	}
}
