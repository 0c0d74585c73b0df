package engine

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestBrokerNeverRewritesHandedOutBytes drives two clients and a broker
// through many QoS 1 and 2 round trips with every change persisted, and
// checks that every Send.Data, Persist.Value and sent PUBLISH's topic and
// payload the broker handed out is unchanged at the end: its arenas (sent
// bytes, message copies, record values) never reuse space.
func TestBrokerNeverRewritesHandedOutBytes(t *testing.T) {
	keep := checkHandedOut(t, true, func(a Action, record func(string, []byte)) {
		switch a := a.(type) {
		case Send:
			record("send", a.Data)
			if p, ok := a.Packet.(*packet.Publish); ok {
				record("topic", p.Topic)
				record("payload", p.Payload)
			}
		case Persist:
			record("persist "+a.Key, a.Value)
			record("key "+a.Key, unsafe.Slice(unsafe.StringData(a.Key), len(a.Key)))
		}
	})
	persisted := 0
	for _, k := range keep {
		if strings.HasPrefix(k.what, "persist") {
			persisted++
		}
	}
	if persisted == 0 {
		t.Fatal("the broker persisted nothing: the test does not cover record values")
	}
}
