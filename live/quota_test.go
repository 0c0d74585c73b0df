package live_test

import (
	"fmt"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// TestClientReceiveMaxRecorded: a v5 subscriber announcing Receive Maximum
// 2 records it on its Sent CONNECT, and the fixed broker's QoS 1
// PUBLISHes to it stays within that quota as the model judges it
// [MQTT-3.3.4-9].
func TestClientReceiveMaxRecorded(t *testing.T) {
	rec := live.NewRecorder()
	b := serveOn(t, "127.0.0.1:0", t.TempDir(), rec)
	cfg := clientConfig(t, "sub", packet.V5)
	cfg.ReceiveMaximum = 2
	sub := runClient(t, live.ClientOptions{Addr: b.Addr(), Config: cfg, Recorder: rec})
	connect(t, sub, false, false)
	if _, err := sub.Subscribe(ctx(t), packet.Subscription{Filter: "q/#", QoS: 1}); err != nil {
		t.Fatal(err)
	}
	pub := runClient(t, live.ClientOptions{Addr: b.Addr(), Config: clientConfig(t, "pub", packet.V5), Recorder: rec})
	connect(t, pub, false, false)
	const n = 8
	for i := range n {
		if err := pub.Publish(ctx(t), "q/a", []byte(fmt.Sprintf("rm-%d", i)), 1, false); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, rec, 0, "sub", model.Delivered, fmt.Sprintf("rm-%d", n-1), msgIs(fmt.Sprintf("rm-%d", n-1)))
	h := rec.History()
	connects := map[string]uint16{}
	for _, e := range h.Events {
		if e.Kind == model.Sent && e.Packet.Type == model.CONNECT {
			connects[e.Node] = e.ReceiveMax
		}
	}
	if connects["sub"] != 2 || connects["pub"] != 0 {
		t.Fatalf("Sent CONNECT Receive Maximum by client %v, want sub 2 and pub 0 (absent)\n%s", connects, dump(h))
	}
	if vs := model.Check(h, model.Options{Only: model.SetOf(model.SendQuota)}); len(vs) != 0 {
		t.Fatalf("SendQuota: %v\n%s", vs, dump(h))
	}
}
