package engine

import (
	"bytes"
	"fmt"
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
	fixed, err := PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	w := newRTWorld(t, fixed.Client, fixed.Broker, packet.V5)
	var keep []kept
	record := func(what string, b []byte) { keep = append(keep, kept{what, b, bytes.Clone(b)}) }
	for i := range 500 {
		payload := bytes.Repeat([]byte{byte(i)}, i%300)
		w.toClient(0, Publish{Cmd: CmdID(i + 10), Topic: fmt.Sprintf("bench/%d", i), Payload: payload, QoS: packet.QoS(1 + i%2)})
		for w.head < len(w.queue) {
			e := w.queue[w.head]
			w.queue[w.head] = rtEvent{}
			w.head++
			if e.to >= 0 {
				w.route(e.to, w.clients[e.to].Step(0, e.event()))
				continue
			}
			acts := w.broker.Step(0, e.event())
			for _, a := range acts {
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
			}
			w.route(-1, acts)
		}
		w.queue, w.head = w.queue[:0], 0
	}
	if w.acked != 500 || w.delivered != 500 {
		t.Fatalf("500 messages: %d acknowledged, %d delivered", w.acked, w.delivered)
	}
	persisted := 0
	for i, k := range keep {
		if !bytes.Equal(k.data, k.copy) {
			t.Fatalf("%s #%d was rewritten: % x, was % x", k.what, i, k.data, k.copy)
		}
		if len(k.what) > 7 && k.what[:7] == "persist" {
			persisted++
		}
	}
	if persisted == 0 {
		t.Fatal("the broker persisted nothing: the test does not cover record values")
	}
}
