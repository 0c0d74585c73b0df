package packet

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// stream concatenates the vectors of version v, CONNECT first when first is
// set, and returns the wire bytes and the packets.
func stream(t *testing.T, v Version) ([]byte, []Packet) {
	var wire []byte
	var pkts []Packet
	for _, tc := range vectors {
		if tc.v == v {
			wire = append(wire, h(t, tc.wire)...)
			pkts = append(pkts, tc.p)
		}
	}
	return wire, pkts
}

// drain feeds wire in the given chunk sizes, calling Next until it wants more,
// and returns every packet.
func drain(t *testing.T, d *Decoder, wire []byte, chunk func() int) []Packet {
	t.Helper()
	var got []Packet
	for len(wire) > 0 {
		n := min(chunk(), len(wire))
		d.Feed(wire[:n])
		wire = wire[n:]
		for {
			p, err := d.Next()
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if p == nil {
				break
			}
			got = append(got, clonePacket(t, d.Version(), p))
		}
	}
	return got
}

// clonePacket copies p through an encode/decode into fresh memory, since
// decoded packets alias the decoder's buffer only until the next Feed.
func clonePacket(t *testing.T, v Version, p Packet) Packet {
	t.Helper()
	wire, err := Append(nil, v, p)
	if err != nil {
		t.Fatalf("re-encode %#v: %v", p, err)
	}
	q, _, err := Decode(v, wire, 0)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	return q
}

func samePackets(t *testing.T, name string, got, want []Packet) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d packets, want %d", name, len(got), len(want))
	}
	for i := range got {
		if !Equal(got[i], want[i]) {
			t.Fatalf("%s: packet %d\n got %#v\nwant %#v", name, i, got[i], want[i])
		}
	}
}

func TestDecoderChunking(t *testing.T) {
	for _, v := range []Version{V311, V5} {
		wire, want := stream(t, v)
		// One byte at a time; the CONNECT at the front sets the version.
		samePackets(t, v.String()+" bytewise", drain(t, NewDecoder(0, 0), wire, func() int { return 1 }), want)
		// The whole stream at once.
		samePackets(t, v.String()+" whole", drain(t, NewDecoder(v, 0), wire, func() int { return len(wire) }), want)
		// Random splits, several seeds.
		for seed := range uint64(50) {
			r := rand.New(rand.NewPCG(seed, 7))
			got := drain(t, NewDecoder(0, 0), wire, func() int { return 1 + r.IntN(12) })
			samePackets(t, v.String()+" random", got, want)
		}
	}
}

// TestDecoderLastSize: after each Next, LastSize is the encoded size of the
// packet returned, as its test vector's wire bytes have it, however the
// stream is chunked.
func TestDecoderLastSize(t *testing.T) {
	for _, v := range []Version{V311, V5} {
		var sizes []int
		for _, tc := range vectors {
			if tc.v == v {
				sizes = append(sizes, len(h(t, tc.wire)))
			}
		}
		wire, _ := stream(t, v)
		d := NewDecoder(0, 0)
		if d.LastSize() != 0 {
			t.Fatalf("LastSize %d before any packet", d.LastSize())
		}
		var got []int
		for i := range wire {
			d.Feed(wire[i : i+1])
			for {
				p, err := d.Next()
				if err != nil {
					t.Fatalf("%v: Next: %v", v, err)
				}
				if p == nil {
					break
				}
				got = append(got, d.LastSize())
			}
		}
		if !slices.Equal(got, sizes) {
			t.Errorf("%v: sizes %v, want %v", v, got, sizes)
		}
	}
}

func TestDecoderSetsVersionFromConnect(t *testing.T) {
	for _, v := range []Version{V311, V5} {
		d := NewDecoder(0, 0)
		if d.Version() != 0 {
			t.Fatalf("fresh decoder version %v", d.Version())
		}
		wire, _ := stream(t, v)
		d.Feed(wire)
		if _, err := d.Next(); err != nil || d.Version() != v {
			t.Fatalf("after CONNECT: version %v, err %v", d.Version(), err)
		}
	}
	d := NewDecoder(0, 0)
	d.SetVersion(V5)
	d.Feed(h(t, "F0 00"))
	if p, err := d.Next(); err != nil || p.Type() != AUTH {
		t.Fatalf("SetVersion(V5) then AUTH: %v %v", p, err)
	}
}

// TestDecoderBoundedMemory: a header announcing a huge packet is refused
// before its body is buffered, and later bytes are not kept.
func TestDecoderBoundedMemory(t *testing.T) {
	d := NewDecoder(V311, 1024)
	d.Feed(h(t, "30 FF FF FF 7F")) // PUBLISH of 268,435,455 bytes announced
	d.Feed(make([]byte, 64<<10))
	if d.Buffered() > 64 {
		t.Fatalf("decoder holds %d bytes after refusing the header", d.Buffered())
	}
	_, err := d.Next()
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Next: %v, want ErrTooLarge", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Reason != PacketTooLarge {
		t.Fatalf("reason: %v", err)
	}
	// One byte at a time: the refusal comes as the header completes.
	d = NewDecoder(V5, 100)
	for _, c := range h(t, "30 65") { // 101 bytes of Remaining Length
		d.Feed([]byte{c})
	}
	if _, err := d.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bytewise: %v", err)
	}
	// Good packets before an oversized one are still returned.
	d = NewDecoder(V5, 100)
	d.Feed(h(t, "C0 00 D0 00 30 65"))
	for _, want := range []Type{PINGREQ, PINGRESP} {
		if p, err := d.Next(); err != nil || p.Type() != want {
			t.Fatalf("before the big one: %v %v", p, err)
		}
	}
	if _, err := d.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("after the good ones: %v", err)
	}
}

// TestDecoderReusesBuffer: a long stream does not grow the buffer.
func TestDecoderReusesBuffer(t *testing.T) {
	pub, err := Append(nil, V311, &Publish{QoS: 1, PacketID: 1, Topic: b("a/b"), Payload: make([]byte, 100)})
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(V311, 0)
	r := rand.New(rand.NewPCG(1, 2))
	count := 0
	for range 10_000 {
		// Feed one packet in random pieces, draining after each piece.
		for rest := pub; len(rest) > 0; {
			n := 1 + r.IntN(len(rest))
			d.Feed(rest[:n])
			rest = rest[n:]
			for {
				p, err := d.Next()
				if err != nil {
					t.Fatal(err)
				}
				if p == nil {
					break
				}
				count++
			}
		}
	}
	if count != 10_000 {
		t.Fatalf("decoded %d packets", count)
	}
	if d.Buffered() > 4*len(pub) {
		t.Fatalf("buffer grew to %d bytes for %d-byte packets", d.Buffered(), len(pub))
	}
}

// TestDecoderErrorIsSticky: after an error Next keeps returning it and Feed
// drops its input.
func TestDecoderErrorIsSticky(t *testing.T) {
	d := NewDecoder(V5, 0)
	d.Feed(h(t, "C1 00"))
	_, err := d.Next()
	if err == nil {
		t.Fatal("no error for bad flags")
	}
	for range 3 {
		d.Feed(h(t, "C0 00"))
		if p, err2 := d.Next(); p != nil || err2 != err {
			t.Fatalf("after error: %v %v", p, err2)
		}
	}
	if d.Buffered() != 0 {
		t.Fatalf("decoder kept %d bytes after an error", d.Buffered())
	}
}

func TestDecoderFirstPacketMustBeConnect(t *testing.T) {
	d := NewDecoder(0, 0)
	d.Feed(h(t, "30 03 0001't'"))
	if _, err := d.Next(); err == nil || !strings.Contains(err.Error(), "MQTT-3.1.0-1") {
		t.Fatalf("got %v", err)
	}
}

func TestDecoderNeedsMore(t *testing.T) {
	d := NewDecoder(V311, 0)
	if p, err := d.Next(); p != nil || err != nil {
		t.Fatalf("empty decoder: %v %v", p, err)
	}
	d.Feed(h(t, "30"))
	if p, err := d.Next(); p != nil || err != nil {
		t.Fatalf("one byte: %v %v", p, err)
	}
}
