package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// flowKinds and flowTypes are what a packet-flow history is mostly made of.
var (
	flowKinds = []Kind{Sent, Received, Sent, Received, Sent, Received, ConnOpened, ConnClosed, Connected, Crash, Accepted, Acknowledged, Delivered, LivenessStart}
	flowTypes = []uint8{PUBLISH, PUBLISH, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, CONNECT, CONNACK}
)

// wideHistory draws a random history over many nodes, messages, topics and
// packet ids (the generator of random_test.go, widened): big enough that
// the index's tables leave their dense forms. A flow history draws mostly
// packets of the publish flows.
func wideHistory(r *rand.Rand, n, nodeCount, msgCount int, maxID uint16, flow bool) History {
	nodes := []string{BrokerNode, ""}
	for i := range nodeCount {
		nodes = append(nodes, fmt.Sprintf("c%d", i))
	}
	msgs := []string{""}
	for i := range msgCount {
		msgs = append(msgs, fmt.Sprintf("m%d", i))
	}
	topics := []string{"t/a", "t/b", "u/a", "$s/a"}
	filters := []string{"t/#", "+", "#", "", "t/a", "+/a"}
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	var h History
	for range n {
		kind, typ := Kind(r.IntN(int(Failed)+2)), uint8(r.IntN(17))
		if flow {
			kind, typ = flowKinds[r.IntN(len(flowKinds))], flowTypes[r.IntN(len(flowTypes))]
		}
		h.Add(Event{
			Kind: kind,
			Node: pick(nodes), Peer: pick(nodes),
			Packet: Packet{Type: typ, ID: uint16(r.IntN(int(maxID) + 1)), QoS: uint8(r.IntN(4)),
				Dup: r.IntN(2) == 0, Reason: uint8(r.IntN(2)) * 0x80, Topic: pick(topics), Msg: pick(msgs),
				Payload: pick([]string{"", "x"}), Sessions: r.IntN(2) == 0, Clean: r.IntN(2) == 0, Filter: pick(filters)},
			Msg: pick(msgs), Topic: pick(topics), Filter: pick(filters),
			QoS: uint8(r.IntN(4)), Persistent: r.IntN(2) == 0, CleanStart: r.IntN(3) == 0,
			SessionPresent: r.IntN(2) == 0, HadState: r.IntN(2) == 0, Version: uint8(4 + r.IntN(2)),
			ReceiveMax: uint16(r.IntN(3)), Point: CrashPoint(r.IntN(7)),
		})
	}
	return h
}

// TestIndexFormsAgree proves the map forms of the index's tables (taken by
// histories with many nodes, messages or large packet ids) give the same
// verdicts as the dense forms the usual histories take.
func TestIndexFormsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := []struct{ nodes, msgs int }{{3, 3}, {6, 8}, {30, 40}, {80, 5}}
	for run := range 400 {
		s := shapes[run%len(shapes)]
		h := wideHistory(r, 1+r.IntN(300), s.nodes, s.msgs, 5, run%2 == 0)
		dense, sparse := newIndexOf(&h, false), newIndexOf(&h, true)
		if got, want := check(sparse, Options{}), check(dense, Options{}); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d (%d nodes): sparse %v\ndense %v", run, s.nodes, got, want)
		}
		if got, want := faultsOf(sparse), faultsOf(dense); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: sparse faults %+v, dense %+v", run, got, want)
		}
	}
}

// TestLargePacketIDs proves packet ids above the dense range are tracked
// like small ones: shifting every non-zero id by a constant changes no
// verdict but the ids the reasons quote.
func TestLargePacketIDs(t *testing.T) {
	const shift = 3 * maxDenseID
	r := rand.New(rand.NewPCG(5, 6))
	for run := range 400 {
		h := wideHistory(r, 1+r.IntN(200), 2, 4, 4, run%4 != 0)
		big := History{Events: append([]Event(nil), h.Events...)}
		for i := range big.Events {
			if id := &big.Events[i].Packet.ID; *id != 0 {
				*id += shift
			}
		}
		small, large := Check(h, Options{}), Check(big, Options{})
		if len(small) != len(large) {
			t.Fatalf("run %d: %d violations with small ids, %d with large", run, len(small), len(large))
		}
		for i := range small {
			a, b := small[i], large[i]
			if a.Step != b.Step || a.Invariant != b.Invariant || a.Node != b.Node {
				t.Fatalf("run %d: small ids %v, large ids %v", run, a, b)
			}
		}
		if a, b := FaultsOf(h), FaultsOf(big); !reflect.DeepEqual(a, b) {
			t.Fatalf("run %d: faults %+v vs %+v", run, a, b)
		}
	}
}

// TestEventCodes proves a compiled eventSet takes exactly the events the
// set does, for every kind and packet type a history may hold.
func TestEventCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	sets := []eventSet{
		{kinds: kindBits(Accepted, Crash), sent: typeBits(PUBLISH), received: typeBits(PUBACK, 31)},
		{kinds: ^uint32(0), allSent: true, received: ^uint32(0)},
		{},
	}
	for range 20 {
		sets = append(sets, eventSet{kinds: r.Uint32(), sent: r.Uint32(), received: r.Uint32(), allSent: r.IntN(2) == 0})
	}
	for _, s := range sets {
		c := s.codes()
		for kind := range 256 {
			for typ := range 256 {
				k := evKind{kind: Kind(kind), typ: uint8(typ), code: codeOf(Kind(kind), uint8(typ))}
				if got, want := c.has(k), s.has(k); got != want {
					t.Fatalf("set %+v, kind %d type %d: compiled %v, set %v", s, kind, typ, got, want)
				}
			}
		}
	}
}
