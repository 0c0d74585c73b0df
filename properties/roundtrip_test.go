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
