package live_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// serveOn serves the fixed broker on addr with the store in dir.
func serveOn(t *testing.T, addr, dir string, rec *live.Recorder) *live.Broker {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	st, err := live.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := live.ServeBroker(ln, live.BrokerOptions{Config: engine.DefaultBrokerConfig(fixed(t).Broker), Store: st, Recorder: rec})
	if err != nil {
		ln.Close()
		t.Fatalf("ServeBroker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestOurClientOurBrokerReboot runs both of our drivers over TCP, records
// one history for clients and broker, reboots the broker from its store
// while a persistent subscriber is away, and lets the model judge it all.
func TestOurClientOurBrokerReboot(t *testing.T) {
	rec := live.NewRecorder()
	dir := t.TempDir()
	b := serveOn(t, "127.0.0.1:0", dir, rec)
	addr := b.Addr()

	sub := runClient(t, live.ClientOptions{Addr: addr, Config: clientConfig(t, "sub", packet.V311), Recorder: rec})
	connect(t, sub, false, false)
	if _, err := sub.Subscribe(ctx(t), packet.Subscription{Filter: "e/#", QoS: 2}); err != nil {
		t.Fatal(err)
	}
	pub := runClient(t, live.ClientOptions{Addr: addr, Config: clientConfig(t, "pub", packet.V5), Recorder: rec})
	connect(t, pub, false, false)
	for q := packet.QoS(0); q <= 2; q++ {
		if err := pub.Publish(ctx(t), fmt.Sprintf("e/%d", q), []byte(fmt.Sprintf("online-q%d", q)), q, false); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, rec, 0, "sub", model.Delivered, "online-q2", msgIs("online-q2"))
	waitFor(t, rec, 0, "sub", model.Sent, "PUBCOMP", func(e model.Event) bool { return e.Packet.Type == model.PUBCOMP })
	if err := sub.Disconnect(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for q := packet.QoS(1); q <= 2; q++ {
		if err := pub.Publish(ctx(t), fmt.Sprintf("e/%d", q), []byte(fmt.Sprintf("away-q%d", q)), q, false); err != nil {
			t.Fatal(err)
		}
	}

	// Reboot the broker on the same address from its store.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	rec.Add(model.Event{Kind: model.Crash, Time: time.Now().UnixNano(), Node: model.BrokerNode, Point: model.CrashBetweenSteps})
	serveOn(t, addr, dir, rec)
	phase(rec, model.LivenessStart)

	connect(t, sub, false, true)
	waitFor(t, rec, 0, "sub", model.Delivered, "away-q1", msgIs("away-q1"))
	i := waitFor(t, rec, 0, "sub", model.Delivered, "away-q2", msgIs("away-q2"))
	id := rec.History().Events[i].Packet.ID
	waitFor(t, rec, i, "sub", model.Sent, "PUBCOMP of away-q2", func(e model.Event) bool {
		return e.Packet.Type == model.PUBCOMP && e.Packet.ID == id
	})
	// pub's connection died with the broker; it reconnects to the new one.
	connect(t, pub, false, true)
	for _, c := range []*live.Client{pub, sub} {
		if err := c.Disconnect(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	phase(rec, model.Quiescent)
	h := rec.History()
	if n := count(h, model.BrokerNode, model.Restart, nil); n != 1 {
		t.Errorf("%d broker Restart events, want 1", n)
	}
	checkModel(t, rec)
}
