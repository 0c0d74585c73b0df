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
	checkHandedOut(t, false, func(a Action, record func(string, []byte)) {
		switch a := a.(type) {
		case Send:
			record("send", a.Data)
		case Persist:
			record("persist "+a.Key, a.Value)
		case Deliver:
			record("topic", unsafe.Slice(unsafe.StringData(a.Msg.Topic), len(a.Msg.Topic)))
			record("payload", a.Msg.Payload)
		}
	})
}

// checkHandedOut drives two clients and a broker (preset fixed, 5.0)
// through 500 QoS 1 and 2 round trips. note sees every action of the
// observed side (the broker if broker, else the clients) and records the
// byte slices it hands out; at the end every recorded slice must hold the
// bytes it held when it was recorded. It returns what was recorded.
func checkHandedOut(t *testing.T, broker bool, note func(a Action, record func(what string, b []byte))) []kept {
	t.Helper()
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
			var acts []Action
			if e.to < 0 {
				acts = w.broker.Step(0, e.event())
			} else {
				acts = w.clients[e.to].Step(0, e.event())
			}
			if broker == (e.to < 0) {
				for _, a := range acts {
					note(a, record)
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
	return keep
}
