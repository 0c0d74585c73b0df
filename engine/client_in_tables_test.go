package engine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"pgregory.net/rapid"
)

// TestSeqTableMatchesMap runs random puts, dels and resets on a seqTable
// and a map side by side: the same presence and value for every id (0
// included, stored shifted, and math.MaxUint64, which goes to the map), the
// same count and the same sorted ids, across the direct and mapped ranges.
func TestSeqTableMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tab seqTable
		ref := map[uint16]uint64{}
		idGen := rapid.OneOf(rapid.Uint16Range(0, 40), rapid.Uint16Range(idTableDirect-3, idTableDirect+3), rapid.Uint16())
		for range rapid.IntRange(0, 100).Draw(t, "ops") {
			id := idGen.Draw(t, "id")
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0:
				tab.reset()
				clear(ref)
			case 1, 2, 3:
				tab.del(id)
				delete(ref, id)
			default:
				seq := rapid.OneOf(rapid.Uint64Range(0, 3), rapid.Uint64Range(math.MaxUint64-2, math.MaxUint64)).Draw(t, "seq")
				tab.put(id, seq)
				ref[id] = seq
			}
			seq, ok := tab.get(id)
			want, wantOK := ref[id]
			if seq != want || ok != wantOK || tab.has(id) != wantOK {
				t.Fatalf("id %d: got %d %v, want %d %v", id, seq, ok, want, wantOK)
			}
			if tab.len() != len(ref) {
				t.Fatalf("len %d, want %d", tab.len(), len(ref))
			}
			if got, want := tab.ids(), slices.Sorted(maps.Keys(ref)); !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
		}
	})
}

// TestDeliveryQueueMatchesMap pushes deliveries with increasing ids and
// takes random ones (mostly the oldest, as the application usually acks)
// on a deliveryQueue and a map side by side: take finds exactly the
// queued ones, and no slot outside the queue keeps a delivery alive.
func TestDeliveryQueueMatchesMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q deliveryQueue
		ref := map[DeliveryID]*clientDelivery{}
		next := DeliveryID(1)
		for range rapid.IntRange(0, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op == 0:
				q.reset()
				clear(ref)
			case op < 5:
				d := &clientDelivery{did: next}
				next++
				q.push(d)
				ref[d.did] = d
			default:
				id := rapid.Uint64Range(0, uint64(next)).Draw(t, "id")
				if op < 8 && q.len() > 0 {
					id = uint64(q.ds[q.head].did) // the oldest
				}
				got, want := q.take(DeliveryID(id)), ref[DeliveryID(id)]
				delete(ref, DeliveryID(id))
				if got != want {
					t.Fatalf("take %d: got %v, want %v", id, got, want)
				}
			}
			if q.len() != len(ref) {
				t.Fatalf("len %d, want %d", q.len(), len(ref))
			}
			all := q.ds[:cap(q.ds)]
			for i, d := range all {
				inside := i >= q.head && i < len(q.ds)
				if inside != (d != nil) {
					t.Fatalf("slot %d (queue %d..%d) holds %v", i, q.head, len(q.ds), d)
				}
				if inside && i > q.head && all[i-1].did >= d.did {
					t.Fatalf("slot %d out of order", i)
				}
			}
		}
	})
}

// TestClientAckQueueOrder drives a connected after-callback client with
// PUBLISHes (QoS 1 and 2, fresh ids) and application Acks in any order:
// the PUBACKs and PUBRECs must leave in the order their PUBLISHes arrived,
// each once its delivery and every earlier one is acked [MQTT-4.6.0-2]
// [MQTT-4.6.0-3], however the owed-ack queue's head moves and wraps.
func TestClientAckQueueOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultClientConfig("c1", presetFixedClient)
		cfg.KeepAlive = 0
		c, err := NewClient(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Step(0, Connect{Cmd: 1})
		c.Step(0, ConnOpened{Conn: 1})
		wire := func(p packet.Packet) []byte {
			b, err := packet.Append(nil, packet.V5, p)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		c.Step(0, BytesReceived{Conn: 1, Data: wire(&packet.Connack{})})
		type owed struct {
			id    uint16
			qos   packet.QoS
			did   DeliveryID
			acked bool
		}
		var model []owed // arrival order, not yet sent
		next := uint16(1)
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			var acts []Action
			if len(model) == 0 || len(model) < 40 && rapid.Bool().Draw(t, "publish") {
				q := packet.QoS(rapid.IntRange(1, 2).Draw(t, "qos"))
				acts = c.Step(0, BytesReceived{Conn: 1, Data: wire(&packet.Publish{QoS: q, PacketID: next, Topic: []byte("a"), Payload: []byte("x")})})
				var did DeliveryID
				for _, a := range acts {
					if d, ok := a.(Deliver); ok {
						did = d.Delivery
					}
				}
				if did == 0 {
					t.Fatalf("PUBLISH %d not delivered: %#v", next, acts)
				}
				model = append(model, owed{id: next, qos: q, did: did})
				next++
				continue
			}
			i := rapid.IntRange(0, len(model)-1).Draw(t, "ack")
			if model[i].acked {
				continue
			}
			model[i].acked = true
			acts = c.Step(0, Ack{Delivery: model[i].did})
			var want []string
			for len(model) > 0 && model[0].acked {
				typ := packet.PUBACK
				if model[0].qos == 2 {
					typ = packet.PUBREC
				}
				want = append(want, fmt.Sprintf("%v %d", typ, model[0].id))
				model = model[1:]
			}
			var got []string
			for _, a := range acts {
				if s, ok := a.(Send); ok {
					switch p := s.Packet.(type) {
					case *packet.Puback:
						got = append(got, fmt.Sprintf("%v %d", packet.PUBACK, p.PacketID))
					case *packet.Pubrec:
						got = append(got, fmt.Sprintf("%v %d", packet.PUBREC, p.PacketID))
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after an Ack the client sent %q, want %q", got, want)
			}
		}
	})
}
