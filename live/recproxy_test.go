package live_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// startRecProxy starts the recording proxy in front of target, recording
// the broker's view and every client's view into rec.
func startRecProxy(t *testing.T, target string, rec *live.Recorder) *live.Proxy {
	t.Helper()
	p, err := live.StartProxy(live.ProxyOptions{Target: target, Recorder: rec, RecordBroker: true,
		Observe: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// packetTrace is the (kind, peer, packet type, id, msg, qos) sequence of a
// history's events of node of kind k (with peer, if given): the order of
// one direction of the node's connections.
func packetTrace(h model.History, node string, k model.Kind, peer ...string) []string {
	var out []string
	for _, e := range h.Events {
		if len(peer) > 0 && e.Peer != peer[0] {
			continue
		}
		if e.Node == node && e.Kind == k {
			out = append(out, fmt.Sprintf("%d %s t%d id%d %s q%d", e.Kind, e.Peer, e.Packet.Type, e.Packet.ID, e.Packet.Msg, e.Packet.QoS))
		}
	}
	return out
}

// TestProxyRecordsBothViews: traffic of our clients and broker through the
// proxy. The proxy's record of each client's view and of the broker's view
// is packet for packet what the drivers record themselves, and its
// Connected and Subscribed events match the client's.
func TestProxyRecordsBothViews(t *testing.T) {
	brec, crec, prec := live.NewRecorder(), live.NewRecorder(), live.NewRecorder()
	b := serveBroker(t, t.TempDir(), brec)
	p := startRecProxy(t, b.Addr(), prec)
	sub := runClient(t, live.ClientOptions{Addr: p.Addr(), Config: clientConfig(t, "sub", packet.V5), Recorder: crec})
	connect(t, sub, false, false)
	if _, err := sub.Subscribe(ctx(t), packet.Subscription{Filter: "p/#", QoS: 2}); err != nil {
		t.Fatal(err)
	}
	pub := runClient(t, live.ClientOptions{Addr: p.Addr(), Config: clientConfig(t, "pub", packet.V311), Recorder: crec})
	connect(t, pub, false, false)
	for i := range 6 {
		if err := pub.Publish(ctx(t), "p/x", fmt.Appendf(nil, "m%d", i), packet.QoS(i%3), false); err != nil {
			t.Fatal(err)
		}
	}
	// m5 (QoS 2) is the last flow: wait for its PUBCOMP, after its delivery
	// (the first PUBCOMP is m2's), or the DISCONNECT below may close the
	// proxy's connection before the broker's PUBREL of m5 is read from it.
	i := waitFor(t, crec, 0, "sub", model.Delivered, "m5", msgIs("m5"))
	waitFor(t, crec, i, "sub", model.Sent, "m5's PUBCOMP", func(e model.Event) bool { return e.Packet.Type == model.PUBCOMP })
	for _, c := range []*live.Client{sub, pub} {
		if err := c.Disconnect(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, brec, 0, model.BrokerNode, model.Received, "both DISCONNECTs", func(e model.Event) bool { return e.Packet.Type == model.DISCONNECT && e.Peer == "sub" })
	waitFor(t, brec, 0, model.BrokerNode, model.Received, "both DISCONNECTs", func(e model.Event) bool { return e.Packet.Type == model.DISCONNECT && e.Peer == "pub" })
	waitFor(t, prec, 0, model.BrokerNode, model.Received, "both DISCONNECTs", func(e model.Event) bool { return e.Packet.Type == model.DISCONNECT && e.Peer == "pub" })
	// The proxy records each direction on its own goroutine: a packet it
	// forwarded may be answered (and the answer recorded by the drivers)
	// before its own record of it lands. Wait, bounded, until the views
	// agree, then compare.
	var ph, ch, bh model.History
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ph, ch, bh = prec.History(), crec.History(), brec.History()
		if proxyAgrees(ph, ch, bh) || time.Now().After(deadline) {
			break
		}
	}
	for _, k := range []model.Kind{model.Sent, model.Received} {
		for _, node := range []string{"sub", "pub"} {
			if got, want := packetTrace(ph, node, k), packetTrace(ch, node, k); !slices.Equal(got, want) || len(got) == 0 {
				t.Errorf("%s: proxy recorded\n%q\nthe client recorded\n%q", node, got, want)
			}
			if got, want := packetTrace(ph, model.BrokerNode, k, node), packetTrace(bh, model.BrokerNode, k, node); !slices.Equal(got, want) || len(got) == 0 {
				t.Errorf("broker with %s: proxy recorded\n%q\nthe broker recorded\n%q", node, got, want)
			}
		}
	}
	for _, k := range []model.Kind{model.Connected, model.Subscribed} {
		if got, want := len(events(ph, 0, "sub", k, nil)), len(events(ch, 0, "sub", k, nil)); got != want || got == 0 {
			t.Errorf("proxy recorded %d events of kind %d for sub, the client %d", got, k, want)
		}
	}
}

// proxyAgrees reports whether the proxy's history ph records, packet for
// packet, what the clients (ch) and the broker (bh) recorded.
func proxyAgrees(ph, ch, bh model.History) bool {
	for _, k := range []model.Kind{model.Sent, model.Received} {
		for _, node := range []string{"sub", "pub"} {
			if !slices.Equal(packetTrace(ph, node, k), packetTrace(ch, node, k)) ||
				!slices.Equal(packetTrace(ph, model.BrokerNode, k, node), packetTrace(bh, model.BrokerNode, k, node)) {
				return false
			}
		}
	}
	return true
}

// TestProxyFaults: a black-holed upward direction swallows the publisher's
// PUBLISH (recorded as Sent by the client, never Received by the broker);
// Heal cuts the connection, and after a reconnect the resent message goes
// through. Cut closes a connection, which both views record.
func TestProxyFaults(t *testing.T) {
	brec, rec := live.NewRecorder(), live.NewRecorder()
	b := serveBroker(t, t.TempDir(), brec)
	p := startRecProxy(t, b.Addr(), rec)
	crec := live.NewRecorder()
	pub := runClient(t, live.ClientOptions{Addr: p.Addr(), Config: clientConfig(t, "pub", packet.V5), Recorder: crec})
	connect(t, pub, false, false)
	if n := p.BlackHole(func(id string) bool { return id == "pub" }, live.Up); n != 1 {
		t.Fatalf("black-holed %d connections, want 1", n)
	}
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := pub.Publish(short, "f/x", []byte("held"), 1, false); err == nil {
		t.Fatal("publish through a black hole was acknowledged")
	}
	waitFor(t, rec, 0, "pub", model.Sent, "PUBLISH held", msgIs("held"))
	if n := len(events(rec.History(), 0, model.BrokerNode, model.Received, msgIs("held"))); n != 0 {
		t.Fatalf("broker recorded as receiving the black-holed PUBLISH %d times", n)
	}
	if n := p.Heal(); n != 1 {
		t.Fatalf("Heal cut %d connections, want 1", n)
	}
	waitFor(t, rec, 0, "pub", model.ConnClosed, "close after Heal", nil)
	waitFor(t, rec, 0, model.BrokerNode, model.ConnClosed, "close after Heal", nil)
	waitFor(t, crec, 0, "pub", model.ConnClosed, "the client seeing the close", nil)
	connect(t, pub, false, true)
	waitFor(t, rec, 0, model.BrokerNode, model.Received, "resent PUBLISH", func(e model.Event) bool { return e.Packet.Msg == "held" && e.Packet.Dup })
	p.Slow(3, time.Millisecond)
	if err := pub.Publish(ctx(t), "f/x", []byte("slow"), 2, false); err != nil {
		t.Fatal(err)
	}
	p.Heal()
	from := rec.Len()
	if n := p.Cut(nil); n != 1 {
		t.Fatalf("Cut closed %d connections, want 1", n)
	}
	waitFor(t, rec, from, "pub", model.ConnClosed, "close after Cut", nil)
}
