package properties

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine/packet"
)

func TestRoundTrip(t *testing.T) {
	rapid.Check(t, RoundTrip)
}

// TestPacketGenCoversEveryType guards the generator: every packet type of each
// version must come out of it, or RoundTrip would silently skip some.
func TestPacketGenCoversEveryType(t *testing.T) {
	for _, v := range []packet.Version{packet.V311, packet.V5} {
		t.Run(v.String(), func(t *testing.T) {
			seen := map[packet.Type]bool{}
			rapid.Check(t, func(rt *rapid.T) {
				for range 200 {
					seen[PacketGen(v).Draw(rt, "p").Type()] = true
				}
			})
			want := 14
			if v == packet.V5 {
				want = 15
			}
			if len(seen) != want {
				t.Errorf("generator produced %d packet types, want %d: %v", len(seen), want, seen)
			}
		})
	}
}

// TestRoundTripCanary proves the round-trip check catches a codec that
// changes a packet on the way: flipping one bit of the last wire byte must
// always be reported.
func TestRoundTripCanary(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		v := rapid.SampledFrom([]packet.Version{packet.V311, packet.V5}).Draw(rt, "version")
		p := PacketGen(v).Draw(rt, "packet")
		one := func(int) int { return 1 }
		if err := roundTrip(v, p, nil, one, nil); err != nil {
			rt.Fatalf("clean round trip failed: %v", err)
		}
		flip := func(w []byte) { w[len(w)-1] ^= 0x01 }
		if err := roundTrip(v, p, nil, one, flip); err == nil {
			rt.Fatalf("corrupted round trip of %#v not caught", p)
		}
	})
}
