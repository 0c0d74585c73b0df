package diff

import (
	"errors"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// FuzzDiffPaho decodes the same bytes with engine/packet and with the peer
// codec, and re-encodes each side's packet with the other side's encoder;
// see the package doc for how each disagreement is judged.
func FuzzDiffPaho(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := Compare(data); d != nil {
			t.Fatal(d)
		}
	})
}

// keep errors and packet imported for the corpus tools that rewrite this file.
var _ = errors.Is
var _ packet.Version
