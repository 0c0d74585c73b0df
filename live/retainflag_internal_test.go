package live

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestDeliveredCarriesRetain: a subject's delivery of a retained copy is
// recorded with Retain on the event, which the model's routing rules
// (Retained, QoS2ExactlyOnce's retained copies) read; without it a
// retained copy would be judged as a live one.
func TestDeliveredCarriesRetain(t *testing.T) {
	for _, retain := range []bool{false, true} {
		tr := &tester{rec: NewRecorder(), lastPub: map[string]model.Packet{}}
		tr.lastPub["s1\x00m1"] = model.Packet{Type: model.PUBLISH, QoS: 1, ID: 3, Retain: retain, Topic: "t/a", Msg: "m1"}
		tr.delivered("s1", "m1")
		h := tr.rec.History()
		if len(h.Events) != 1 {
			t.Fatalf("retain %v: %d events, want 1", retain, len(h.Events))
		}
		if e := h.Events[0]; e.Kind != model.Delivered || e.Retain != retain || e.Packet.Retain != retain {
			t.Fatalf("retain %v: recorded %+v", retain, e)
		}
	}
}
