package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestMaxSizeCanarySwarm: the swarm workload pads payloads up to 4,000
// bytes for v5 subscribers announcing a Maximum Packet Size of 256-2048
// (workload key payload, one seed in two), so the campaign's workload
// catches, within the campaign budget, a broker that judges a copy's fit by
// an estimate (MutMaxSizeEstimate), dropping copies that fit: NoLoss names
// it; and a broker that ignores the client's Maximum Packet Size
// (MutIgnoreMaxSize): MaxPacketSize names it. Each at a seed where fixed
// shows no violation of that rule.
func TestMaxSizeCanarySwarm(t *testing.T) {
	checkSwarmCanaries(t, []swarmCanary{
		{engine.MutMaxSizeEstimate, model.NoLoss},
		{engine.MutIgnoreMaxSize, model.MaxPacketSize},
	})
}

// TestMaxSizeRecorded: with payload on, the history records every
// PUBLISH's encoded size (Packet.Size, the bytes the world carried), the
// broker receives PUBLISHes too large for some subscriber, none it sends
// exceeds the Maximum Packet Size its subscriber announced [MQTT-3.1.2-25],
// and the fixed engines show no NoLoss violation.
func TestMaxSizeRecorded(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := DefaultWorkload().With("payload=on")
	if err != nil {
		t.Fatal(err)
	}
	var rn Runner
	tooBig, big := 0, 0
	for seed := uint64(1); seed <= 20; seed++ {
		r := runSwarmSeed(t, &rn, seed, fixed, wl)
		if violates(r, model.NoLoss) {
			t.Errorf("seed %d: fixed violates NoLoss: %v", seed, r.Violations)
		}
		maxOf, least := map[string]uint32{}, uint32(0)
		for _, e := range r.History().Events {
			p := &e.Packet
			switch {
			case e.Kind == model.Received && e.Node == model.BrokerNode && p.Type == model.CONNECT:
				maxOf[e.Peer] = p.MaxSize
				if p.MaxSize != 0 && (least == 0 || p.MaxSize < least) {
					least = p.MaxSize
				}
			case p.Type == model.PUBLISH && (e.Kind == model.Sent || e.Kind == model.Received) && p.Size == 0:
				t.Fatalf("seed %d: a PUBLISH without its Size: %+v", seed, e)
			case e.Kind == model.Received && e.Node == model.BrokerNode && p.Type == model.PUBLISH:
				if least != 0 && p.Size > least {
					tooBig++
				}
			case e.Kind == model.Sent && e.Node == model.BrokerNode && p.Type == model.PUBLISH:
				if m := maxOf[e.Peer]; m != 0 && p.Size > m {
					t.Errorf("seed %d: the broker sent %s a %d-byte PUBLISH, above its Maximum Packet Size %d", seed, e.Peer, p.Size, m)
				}
				if p.Size > 1000 {
					big++
				}
			}
		}
	}
	if tooBig == 0 || big == 0 {
		t.Errorf("payload=on: %d PUBLISHes too large for a subscriber, %d over 1000 bytes sent; want some of each", tooBig, big)
	}
	t.Logf("20 seeds: %d PUBLISHes too large for some subscriber, %d over 1000 bytes sent", tooBig, big)
}
