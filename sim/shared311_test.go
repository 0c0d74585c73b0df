package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// shared311Plan: a 3.1.1 subscriber asks for "$share/g/t" (and an
// ordinary "t"), a 3.1.1 publisher publishes on t, with the broker's
// shared subscriptions on.
const shared311Plan = `mqttlab-plan 1
seed 1
profile calm
preset fixed
scenario small
version 4
---
node broker shared
connect p1
connect s1
advance 50ms
subscribe s1 filter=$share/g/t qos=1
subscribe s1 filter=t qos=1
advance 100ms
publish p1 topic=t qos=1 msg=p1-1
advance 1s
`

// TestShared311Refused: the broker refuses a 3.1.1 client's "$share/"
// subscription (SUBACK 0x80: 3.1.1 has no shared subscriptions, so a
// grant would be a subscription that never receives what its client
// means), and the model judges the refusal: nothing owed to the refused
// filter, the ordinary subscription's message delivered, no violation.
func TestShared311Refused(t *testing.T) {
	plan, err := ParsePlan(shared311Plan)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigOf(plan.Header)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(cfg, plan)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var reasons []uint8
	for _, e := range r.History().Events {
		if e.Kind == model.Received && e.Node == "s1" && e.Packet.Type == model.SUBACK {
			reasons = append(reasons, e.Packet.Reason)
		}
	}
	if len(reasons) != 2 || reasons[0] != uint8(packet.V3SubackFailure) || reasons[1] != 1 {
		t.Errorf("s1's SUBACKs %v, want 0x80 for $share/g/t then QoS 1 for t", reasons)
	}
	if vs := model.Check(r.History(), model.Options{}); len(vs) != 0 {
		t.Errorf("violations: %v", vs)
	}
	if r.Stats.Delivered != 1 {
		t.Errorf("delivered %d, want 1 (the ordinary subscription's copy)", r.Stats.Delivered)
	}
}
