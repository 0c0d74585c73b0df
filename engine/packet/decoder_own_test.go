package packet

import (
	"math/rand/v2"
	"testing"
)

// randomFrequent returns a random v5 PUBLISH or acknowledgement, with or
// without a reason code and properties, so that consecutive packets of one
// type differ in every field the Decoder re-fills.
func randomFrequent(r *rand.Rand) Packet {
	id := uint16(1 + r.IntN(65535))
	var p Properties
	if r.IntN(2) == 0 {
		p.Present = props(PropReasonString)
		p.ReasonString = "why"
		p.User = []UserProperty{{Key: "k", Value: string(rune('a' + r.IntN(26)))}}
	}
	ackReason := []ReasonCode{Success, NoMatchingSubscribers, UnspecifiedError}[r.IntN(3)]
	relReason := []ReasonCode{Success, PacketIdentifierNotFound}[r.IntN(2)]
	switch r.IntN(5) {
	case 0:
		pub := &Publish{QoS: QoS(r.IntN(3)), Retain: r.IntN(2) == 0, Topic: b("t/" + string(rune('a'+r.IntN(26)))),
			Payload: make([]byte, r.IntN(40))}
		if pub.QoS > 0 {
			pub.PacketID, pub.Dup = id, r.IntN(2) == 0
		}
		if r.IntN(2) == 0 {
			pub.Props = Properties{Present: props(PropContentType, PropMessageExpiry), ContentType: "text", MessageExpiry: r.Uint32()}
		}
		return pub
	case 1:
		return &Puback{PacketID: id, Reason: ackReason, Props: p}
	case 2:
		return &Pubrec{PacketID: id, Reason: ackReason, Props: p}
	case 3:
		p.User = nil // PUBREL keeps the reason string only
		return &Pubrel{PacketID: id, Reason: relReason, Props: p}
	default:
		return &Pubcomp{PacketID: id, Reason: relReason, Props: p}
	}
}

// TestDecoderRefillsEveryField decodes long random streams of the packet
// types the Decoder re-fills: each packet, used before the next Next as the
// lifetime rule says, must equal what was encoded, with nothing left over
// from an earlier packet of its type (a reason, a property, a DUP flag).
func TestDecoderRefillsEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 50 {
		var wire []byte
		var want []Packet
		for range 200 {
			p := randomFrequent(r)
			var err error
			if wire, err = Append(wire, V5, p); err != nil {
				t.Fatalf("encode %#v: %v", p, err)
			}
			want = append(want, p)
		}
		d := NewDecoder(V5, 0)
		d.Feed(wire)
		for i, w := range want {
			got, err := d.Next()
			if err != nil {
				t.Fatalf("round %d packet %d: %v", round, i, err)
			}
			if !Equal(got, w) {
				t.Fatalf("round %d packet %d\n got %#v\nwant %#v", round, i, got, w)
			}
		}
	}
}

// TestDecoderFrequentPacketsAllocateNothing checks the point of the re-filled
// values: a stream of PUBLISH and acknowledgements decodes without
// allocating, in 3.1.1 and 5.0.
func TestDecoderFrequentPacketsAllocateNothing(t *testing.T) {
	for _, v := range []Version{V311, V5} {
		var wire []byte
		for _, p := range []Packet{
			&Publish{QoS: 1, PacketID: 3, Topic: b("a/b"), Payload: b("hello")},
			&Puback{PacketID: 3}, &Pubrec{PacketID: 4}, &Pubrel{PacketID: 4}, &Pubcomp{PacketID: 4},
		} {
			var err error
			if wire, err = Append(wire, v, p); err != nil {
				t.Fatal(err)
			}
		}
		d := NewDecoder(v, 0)
		n := 0
		allocs := testing.AllocsPerRun(100, func() {
			d.Feed(wire)
			for {
				p, err := d.Next()
				if err != nil {
					t.Fatal(err)
				}
				if p == nil {
					return
				}
				n++
			}
		})
		if n != 5*101 {
			t.Fatalf("%v: decoded %d packets, want %d", v, n, 5*101)
		}
		if allocs != 0 {
			t.Errorf("%v: %.1f allocations per stream of 5 packets, want 0", v, allocs)
		}
	}
}

// TestDecoderResetStartsAFreshStream leaves a Decoder in each state a
// connection can end in (mid-packet, failed, with a learnt version) and
// checks that after Reset it decodes a new stream exactly as a fresh
// decoder does: the same packets, version and errors.
func TestDecoderResetStartsAFreshStream(t *testing.T) {
	connect, err := Append(nil, V5, &Connect{Version: V5, ClientID: "c", CleanStart: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 5))
	var frequent []byte
	for range 50 {
		if frequent, err = Append(frequent, V5, randomFrequent(r)); err != nil {
			t.Fatal(err)
		}
	}
	endings := []struct {
		name string
		old  []byte
	}{
		{"mid-packet", frequent[:len(frequent)-1]},
		{"failed", []byte{0xF0, 0x00}},          // reserved flags: a refused packet
		{"oversized", []byte{0x30, 0xFF, 0x7F}}, // over the 64-byte maximum below
		{"versioned", connect},
	}
	streams := []struct {
		name string
		v    Version
		wire []byte
	}{
		{"connect then frequent", 0, append(append([]byte(nil), connect...), frequent...)},
		{"v5 frequent", V5, frequent},
		{"v3 before connect", 0, frequent},
	}
	for _, e := range endings {
		ending, old := e.name, e.old
		for _, s := range streams {
			name := s.name
			d := NewDecoder(V311, 64)
			d.Feed(old)
			for p, err := d.Next(); p != nil && err == nil; p, err = d.Next() {
			}
			d.Reset(s.v, 0)
			fresh := NewDecoder(s.v, 0)
			d.Feed(s.wire)
			fresh.Feed(s.wire)
			for i := 0; ; i++ {
				got, gerr := d.Next()
				want, werr := fresh.Next()
				if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
					t.Fatalf("%s, %s: packet %d: error %v, fresh decoder %v", ending, name, i, gerr, werr)
				}
				if gerr != nil || want == nil {
					if got != nil {
						t.Fatalf("%s, %s: packet %d: %#v after the fresh decoder's end", ending, name, i, got)
					}
					break
				}
				if !Equal(got, want) || d.Version() != fresh.Version() {
					t.Fatalf("%s, %s: packet %d\n got %#v (version %v)\nwant %#v (version %v)", ending, name, i, got, d.Version(), want, fresh.Version())
				}
			}
		}
	}
}
