package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestStreamBusy: a stream is busy while a packet other than a keep-alive
// one is on its way, whole or in part; PINGREQs and PINGRESPs alone are not
// work the world waits for.
func TestStreamBusy(t *testing.T) {
	mark := func(typ packet.Type) pktMark { return pktMark{pkt: cpacket{typ: uint8(typ)}} }
	for _, c := range []struct {
		name string
		pkts []pktMark
		head int
		want bool
	}{
		{"empty", nil, 0, false},
		{"one PINGREQ", []pktMark{mark(packet.PINGREQ)}, 0, false},
		{"pings both ways", []pktMark{mark(packet.PINGRESP), mark(packet.PINGREQ)}, 0, false},
		{"a PUBLISH after a ping", []pktMark{mark(packet.PINGREQ), mark(packet.PUBLISH)}, 0, true},
		{"a PUBACK before a ping", []pktMark{mark(packet.PUBACK), mark(packet.PINGRESP)}, 0, true},
		{"a DISCONNECT", []pktMark{mark(packet.DISCONNECT)}, 0, true},
		{"a delivered PUBLISH, a ping left", []pktMark{mark(packet.PUBLISH), mark(packet.PINGREQ)}, 1, false},
	} {
		s := stream{pkts: c.pkts, pktHead: c.head}
		if got := s.busy(); got != c.want {
			t.Errorf("%s: busy %v, want %v", c.name, got, c.want)
		}
	}
}

// TestKeepAliveStormGoesQuiet: a world of 400 idle clients, most with a
// 1 s Keep Alive, goes quiet after the heal with no violation. Waiting for
// no byte at all in flight, it never did: some ping was always on its way,
// and the run ended Stuck at the liveness bound after a million events
// (NoStuck; TestWorkloadValues/idle=400 at 300 seeds a value).
func TestKeepAliveStormGoesQuiet(t *testing.T) {
	wl, err := DefaultWorkload().With("idle=400")
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, Config{Seed: 10000235, Profile: "swarm", Scenario: SwarmScenario, Workload: wl})
	if !r.Quiet || len(r.Violations) > 0 {
		t.Fatalf("quiet %v, violations %v\nreplay: simrun run -seed 10000235 -workload idle=400", r.Quiet, r.Violations)
	}
}
