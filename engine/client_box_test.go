package engine

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestActionSlabBoxesValues checks that slab-boxed actions are ordinary
// Actions: type switches and assertions see the value type and its fields,
// equal values compare equal, and later boxes never change earlier ones.
func TestActionSlabBoxesValues(t *testing.T) {
	var s actionSlab[Complete]
	var got []Action
	for i := range 3 * slabMax {
		got = append(got, s.box(Complete{Cmd: CmdID(i), Result: Accepted}))
	}
	for i, a := range got {
		switch c := a.(type) {
		case Complete:
			if c.Cmd != CmdID(i) || c.Result != Accepted {
				t.Fatalf("action %d: %+v", i, c)
			}
		default:
			t.Fatalf("action %d: type %T", i, a)
		}
		if fmt.Sprint(a) != fmt.Sprint(Complete{Cmd: CmdID(i), Result: Accepted}) {
			t.Fatalf("action %d prints as %v", i, a)
		}
	}
	if _, ok := got[0].(Send); ok {
		t.Fatal("a Complete asserted as Send")
	}
	var timers actionSlab[SetTimer]
	for i := range slabMax + 1 {
		a := timers.box(SetTimer{Timer: TimerID(i), At: 7})
		if a != Action(SetTimer{Timer: TimerID(i), At: 7}) || a == Action(SetTimer{Timer: TimerID(i), At: 8}) {
			t.Fatalf("timer %d does not compare as a plainly boxed value", i)
		}
	}
}

// TestActionSlabAllocations checks the point of the slab: one allocation
// per block, not per action.
func TestActionSlabAllocations(t *testing.T) {
	var s actionSlab[Send]
	var sink Action
	allocs := testing.AllocsPerRun(10*slabMax, func() { sink = s.box(Send{Conn: 1}) })
	if allocs > 0.5 {
		t.Fatalf("%.2f allocations per boxed action", allocs)
	}
	_ = sink
}

// kept is a byte slice the world kept and the copy taken when it got it.
type kept struct {
	what       string
	data, copy []byte
}

// TestClientNeverRewritesHandedOutBytes drives two clients and a broker
// through many QoS 1 and 2 round trips (durable policies: records too) and
// checks that every Send.Data, Persist.Value and delivered topic and
// payload the clients handed out is unchanged at the end: the arena never
// reuses space.
func TestClientNeverRewritesHandedOutBytes(t *testing.T) {
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
			if e.to < 0 {
				w.route(-1, w.broker.Step(0, e.event()))
				continue
			}
			acts := w.clients[e.to].Step(0, e.event())
			for _, a := range acts {
				switch a := a.(type) {
				case Send:
					record("send", a.Data)
				case Persist:
					record("persist "+a.Key, a.Value)
				case Deliver:
					record("topic", unsafe.Slice(unsafe.StringData(a.Msg.Topic), len(a.Msg.Topic)))
					record("payload", a.Msg.Payload)
				}
			}
			w.route(e.to, acts)
		}
		w.queue, w.head = w.queue[:0], 0
	}
	if w.acked != 500 || w.delivered != 500 {
		t.Fatalf("500 messages: %d acknowledged, %d delivered", w.acked, w.delivered)
	}
	for i, k := range keep {
		if !bytes.Equal(k.data, k.copy) {
			t.Fatalf("%s #%d was rewritten: % x, was % x", k.what, i, k.data, k.copy)
		}
	}
}
