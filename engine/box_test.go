package engine

import (
	"bytes"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// ackFields returns the type, id, reason and property set of an ack packet.
func ackFields(t *testing.T, p packet.Packet) (packet.Type, uint16, packet.ReasonCode, packet.Properties) {
	t.Helper()
	switch a := p.(type) {
	case *packet.Puback:
		return a.Type(), a.PacketID, a.Reason, a.Props
	case *packet.Pubrec:
		return a.Type(), a.PacketID, a.Reason, a.Props
	case *packet.Pubrel:
		return a.Type(), a.PacketID, a.Reason, a.Props
	case *packet.Pubcomp:
		return a.Type(), a.PacketID, a.Reason, a.Props
	}
	t.Fatalf("%T is not an acknowledgement", p)
	return 0, 0, 0, packet.Properties{}
}

// TestAckValues checks that ack returns the asked-for packet whether it is
// shared or carved: type, id and reason, no properties, for ids on both
// sides of the shared range.
func TestAckValues(t *testing.T) {
	var k ackSlabs
	types := []packet.Type{packet.PUBACK, packet.PUBREC, packet.PUBREL, packet.PUBCOMP}
	ids := []uint16{1, 2, 63, sharedAckIDs - 1, sharedAckIDs, 1000, 65535}
	reasons := []packet.ReasonCode{packet.Success, packet.PacketIdentifierNotFound}
	for _, typ := range types {
		for _, id := range ids {
			for _, rc := range reasons {
				gt, gid, grc, props := ackFields(t, k.ack(typ, id, rc))
				if gt != typ || gid != id || grc != rc || props.Present != 0 || props.User != nil {
					t.Fatalf("ack(%v, %d, %v) = %v id %d reason %v props %+v", typ, id, rc, gt, gid, grc, props)
				}
			}
		}
	}
}

// TestAckSharing checks the point of the shared table: every engine gets
// the one read-only Success ack of a small id, with no allocation, while
// other acks are values of their own.
func TestAckSharing(t *testing.T) {
	var k1, k2 ackSlabs
	for _, typ := range []packet.Type{packet.PUBACK, packet.PUBREC, packet.PUBREL, packet.PUBCOMP} {
		if k1.ack(typ, 7, packet.Success) != k2.ack(typ, 7, packet.Success) {
			t.Fatalf("%v id 7: two engines got different Success acks", typ)
		}
		if k1.ack(typ, 7, packet.PacketIdentifierNotFound) == k2.ack(typ, 7, packet.PacketIdentifierNotFound) {
			t.Fatalf("%v id 7: a non-Success ack was shared", typ)
		}
		if k1.ack(typ, sharedAckIDs, packet.Success) == k1.ack(typ, sharedAckIDs, packet.Success) {
			t.Fatalf("%v id %d: an ack beyond the shared range was shared", typ, sharedAckIDs)
		}
	}
	var sink packet.Packet
	allocs := testing.AllocsPerRun(100, func() { sink = k1.ack(packet.PUBREC, 9, packet.Success) })
	if allocs != 0 {
		t.Fatalf("%.2f allocations per shared ack", allocs)
	}
	_ = sink
}

// TestNextBlock pins the slab block sizes: doubling from slabMin, up to
// slabMax values, and up to slabMaxBytes for large values.
func TestNextBlock(t *testing.T) {
	for _, tc := range []struct {
		n    int
		size uintptr
		want int
	}{
		{0, 48, slabMin}, {4, 48, 8}, {16, 48, slabMax}, {slabMax, 48, slabMax},
		{0, 0, slabMin}, {16, 0, slabMax}, // zero-size values: no division by zero
		{0, 304, slabMin}, {8, 304, slabMaxBytes / 304}, {slabMaxBytes / 304, 304, slabMaxBytes / 304},
		{4, 100000, slabMin}, // a value over slabMaxBytes still gets slabMin per block
	} {
		if got := nextBlock(tc.n, tc.size); got != tc.want {
			t.Errorf("nextBlock(%d, %d) = %d, want %d", tc.n, tc.size, got, tc.want)
		}
	}
}

// TestPublish0Sharing checks the broker's shared QoS 0 PUBLISH: the copies
// of one message with the same flags at the same time are one read-only
// packet, and any difference (message, retain, properties, time) gets a
// packet of its own with the right fields.
func TestPublish0Sharing(t *testing.T) {
	var k brokerPackets
	props := &packet.Properties{Present: packet.PropSet(0).With(packet.PropContentType), ContentType: "text"}
	m1 := brokerOut{msg: newBrokerMsg(nil, []byte("a/b"), []byte("one"), props, true)}
	m2 := brokerOut{msg: newBrokerMsg(nil, []byte("a/b"), []byte("one"), props, true)} // equal bytes, another message
	first := k.publish0(&m1, false, 5)
	if again := k.publish0(&m1, false, 5); again != first {
		t.Fatal("the same QoS 0 copy twice: two packets")
	}
	retained := m1
	retained.retain = true
	for _, tc := range []struct {
		name string
		p    *packet.Publish
	}{
		{"other message", k.publish0(&m2, false, 5)},
		{"retain", k.publish0(&retained, false, 5)},
		{"properties", k.publish0(&m1, true, 5)},
		{"later", k.publish0(&m1, false, 6)},
	} {
		if tc.p == first {
			t.Fatalf("%s: shared the packet of a different copy", tc.name)
		}
	}
	for _, tc := range []struct {
		out       *brokerOut
		withProps bool
	}{{&m1, false}, {&retained, false}, {&m1, true}} {
		p := k.publish0(tc.out, tc.withProps, 9)
		if string(p.Topic) != "a/b" || string(p.Payload) != "one" || p.QoS != 0 || p.PacketID != 0 || p.Dup ||
			p.Retain != tc.out.retain || (p.Props.ContentType == "text") != tc.withProps {
			t.Fatalf("publish0(retain %v, props %v) = %+v", tc.out.retain, tc.withProps, p)
		}
	}
}

// TestPublishNSharing checks the broker's shared QoS 1/2 PUBLISH: two
// copies of one message with the same id, flags and time are one read-only
// packet; a different id, QoS, DUP, message or time gets its own, with the
// right fields.
func TestPublishNSharing(t *testing.T) {
	var k brokerPackets
	m1 := brokerOut{msg: newBrokerMsg(nil, []byte("a/b"), []byte("one"), nil, false), qos: 1, id: 3}
	m2 := brokerOut{msg: newBrokerMsg(nil, []byte("a/b"), []byte("one"), nil, false), qos: 1, id: 3}
	copy1 := m1 // another session's copy of the same message
	first := k.publishN(false, &m1, false, 5)
	if again := k.publishN(false, &copy1, false, 5); again != first {
		t.Fatal("two copies with the same id: two packets")
	}
	otherID, qos2 := m1, m1
	otherID.id, qos2.qos = 4, 2
	for _, tc := range []struct {
		name string
		out  *brokerOut
		dup  bool
		at   Time
	}{
		{"other id", &otherID, false, 5},
		{"qos 2", &qos2, false, 5},
		{"dup", &m1, true, 5},
		{"other message", &m2, false, 5},
		{"later", &m1, false, 6},
	} {
		p := k.publishN(tc.dup, tc.out, false, tc.at)
		if p == first {
			t.Fatalf("%s: shared the packet of a different copy", tc.name)
		}
		if string(p.Topic) != "a/b" || string(p.Payload) != "one" || p.QoS != tc.out.qos || p.PacketID != tc.out.id || p.Dup != tc.dup {
			t.Fatalf("%s: publishN = %+v", tc.name, p)
		}
	}
	if k.publish0(&m1, false, 5) == k.publishN(false, &m1, false, 5) {
		t.Fatal("a QoS 0 and a QoS 1 copy share a packet")
	}
}

// TestSharedAckWire: the pre-encoded bytes of every shared ack are what the
// codec writes for it in both versions; a carved ack, id 0 (which the codec
// refuses), another packet type and an unsupported version get none.
func TestSharedAckWire(t *testing.T) {
	var k ackSlabs
	for _, typ := range []packet.Type{packet.PUBACK, packet.PUBREC, packet.PUBREL, packet.PUBCOMP} {
		for _, v := range []packet.Version{packet.V311, packet.V5} {
			for id := uint16(1); id < sharedAckIDs; id++ {
				p := k.ack(typ, id, packet.Success)
				want, err := packet.Append(nil, v, p)
				if err != nil {
					t.Fatalf("Append(%v %d): %v", typ, id, err)
				}
				if got := sharedAckWire(v, p); string(got) != string(want) || cap(got) != len(got) {
					t.Fatalf("sharedAckWire(v%d, %v %d) = % x (cap %d), want % x", v, typ, id, got, cap(got), want)
				}
			}
			carved := k.ack(typ, 7, packet.PacketIdentifierNotFound)
			for _, p := range []packet.Packet{sharedAcks.get(typ, 0), carved, k.ack(typ, sharedAckIDs, packet.Success), &packet.Pingreq{}} {
				if got := sharedAckWire(v, p); got != nil {
					t.Fatalf("sharedAckWire(v%d, %#v) = % x, want nil", v, p, got)
				}
			}
		}
		if got := sharedAckWire(3, k.ack(typ, 1, packet.Success)); got != nil {
			t.Fatalf("sharedAckWire(v3, %v 1) = % x, want nil", typ, got)
		}
	}
}

// TestSharedAckMatchesLookup checks sharedAck against the general path it
// short-cuts: for every version, type, id edge and reason, a shared ack it
// returns is the one ackSlabs.ack hands out with the bytes sharedAckWire
// gives (and the codec writes), and it returns none exactly when that path
// finds no shared wire.
func TestSharedAckMatchesLookup(t *testing.T) {
	var k ackSlabs
	for _, v := range []packet.Version{0, 3, packet.V311, packet.V5, 6} {
		for typ := packet.Type(0); typ < 16; typ++ {
			for _, id := range []uint16{0, 1, 2, 77, sharedAckIDs - 1, sharedAckIDs, 65535} {
				for _, rc := range []packet.ReasonCode{packet.Success, packet.NoMatchingSubscribers, packet.PacketIdentifierNotFound} {
					p, w := sharedAck(v, typ, id, rc)
					isAck := typ >= packet.PUBACK && typ <= packet.PUBCOMP
					var want []byte
					var general packet.Packet
					if isAck {
						general = k.ack(typ, id, rc)
						want = sharedAckWire(v, general)
					}
					if (p == nil) != (want == nil) {
						t.Fatalf("sharedAck(%v, %v, %d, %v) = %v, general path's shared wire %x", v, typ, id, rc, p, want)
					}
					if p == nil {
						continue
					}
					if p != general || !bytes.Equal(w, want) || cap(w) != len(w) {
						t.Fatalf("sharedAck(%v, %v, %d, %v) = %#v % x, want %#v % x", v, typ, id, rc, p, w, general, want)
					}
					if enc, err := packet.Append(nil, v, p); err != nil || !bytes.Equal(enc, w) {
						t.Fatalf("sharedAck(%v, %v, %d) bytes % x, codec % x (%v)", v, typ, id, w, enc, err)
					}
				}
			}
		}
	}
}
