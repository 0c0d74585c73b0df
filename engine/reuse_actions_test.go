package engine

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestReuseActions runs the same round trips (QoS 1 and 2, every change
// persisted) with and without ReuseActions: every Step returns the same
// actions, and with it the boxes of one Step's actions are those of an
// earlier Step (the memory is reused; the canary for a rewind that does
// nothing).
func TestReuseActions(t *testing.T) {
	fixed, err := PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]string
	boxes := map[unsafe.Pointer]int{} // box address -> Steps it served, with reuse
	for i, reuse := range []bool{false, true} {
		w := newRTWorldReuse(t, fixed.Client, fixed.Broker, packet.V5, reuse)
		w.seen = func(from int, acts []Action) {
			for _, a := range acts {
				got[i] = append(got[i], describeAction(from, a))
				if reuse {
					boxes[(*ifaceWords)(unsafe.Pointer(&a)).data]++
				}
			}
		}
		for m := range 200 {
			w.toClient(0, Publish{Cmd: CmdID(m + 10), Topic: fmt.Sprintf("bench/%d", m), Payload: []byte{byte(m)}, QoS: packet.QoS(1 + m%2)})
			w.run()
		}
		if w.acked != 200 || w.delivered != 200 {
			t.Fatalf("reuse=%v: %d acknowledged, %d delivered of 200", reuse, w.acked, w.delivered)
		}
	}
	if !slices.Equal(got[0], got[1]) {
		for k := range min(len(got[0]), len(got[1])) {
			if got[0][k] != got[1][k] {
				t.Fatalf("action %d differs with ReuseActions:\n%s\nwithout:\n%s", k, got[1][k], got[0][k])
			}
		}
		t.Fatalf("%d actions with ReuseActions, %d without", len(got[1]), len(got[0]))
	}
	reused := 0
	for _, n := range boxes {
		if n > 1 {
			reused++
		}
	}
	if reused == 0 {
		t.Fatal("with ReuseActions no box served two Steps: the memory is not reused")
	}
}

// describeAction prints a by value (a Send's packet too, not its address).
func describeAction(from int, a Action) string {
	if s, ok := a.(Send); ok {
		return fmt.Sprintf("%d Send conn=%d data=%x packet=%+v", from, s.Conn, s.Data, s.Packet)
	}
	return fmt.Sprintf("%d %T %+v", from, a, a)
}
