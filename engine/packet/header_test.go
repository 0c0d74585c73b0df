package packet

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// slowHeader is header without its fast path: the full checks in order.
func slowHeader(v Version, buf []byte, maxPacketSize uint32) (Type, byte, int, int, error) {
	if len(buf) == 0 {
		return 0, 0, 0, 0, nil
	}
	t, flags := Type(buf[0]>>4), buf[0]&0x0F
	if err := checkType(v, t, flags); err != nil {
		return 0, 0, 0, 0, err
	}
	rl, used, err := readVBI(v, buf[1:])
	if err != nil || used == 0 {
		return 0, 0, 0, 0, err
	}
	total := 1 + used + rl
	limit := int64(maxPacketSize)
	if limit == 0 {
		limit = MaxPacketSize
	}
	if int64(total) > limit {
		return 0, 0, 0, 0, ErrTooLarge
	}
	return t, flags, 1 + used, total, nil
}

// TestHeaderFastPath checks header against the full checks for every first
// byte, under every version row of its table (and an unsupported one), with
// short, long and multi-byte Remaining Lengths and several size limits.
func TestHeaderFastPath(t *testing.T) {
	seconds := [][]byte{nil, {0}, {1}, {0x7F}, {0x80}, {0x80, 0}, {0x80, 1}, {0xFF, 0x7F}}
	for _, v := range []Version{0, V311, V5, 3} {
		for b := range 256 {
			for _, rest := range seconds {
				for _, max := range []uint32{0, 2, 3, 50, 129, 130, 1000} {
					buf := append([]byte{byte(b)}, rest...)
					gt, gf, gh, gn, gerr := header(v, v == 0, buf, max)
					wt, wf, wh, wn, werr := slowHeader(v, buf, max)
					if gt != wt || gf != wf || gh != wh || gn != wn || (gerr == nil) != (werr == nil) ||
						(werr != nil && errors.Is(werr, ErrTooLarge) != errors.Is(gerr, ErrTooLarge)) {
						t.Fatalf("header(%v, % x, %d) = %v %d %d %d %v, want %v %d %d %d %v",
							v, buf, max, gt, gf, gh, gn, gerr, wt, wf, wh, wn, werr)
					}
				}
			}
		}
	}
}

// TestDecoderRemainingLengthSizes streams PUBLISHes whose Remaining Length
// takes one, two and three bytes (around 127 and 16383) in random chunks:
// each must come back whole, whichever framing path (one-byte fast path or
// the general one) reads its header.
func TestDecoderRemainingLengthSizes(t *testing.T) {
	var wire []byte
	var want []int
	for _, n := range []int{0, 1, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 200, 16370, 16375, 16376, 16377, 16378, 16390, 70000} {
		p := &Publish{QoS: 1, PacketID: uint16(n%65535 + 1), Topic: b("a/b"), Payload: make([]byte, n)}
		for i := range p.Payload {
			p.Payload[i] = byte(i)
		}
		var err error
		if wire, err = Append(wire, V311, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	r := rand.New(rand.NewPCG(3, 5))
	d := NewDecoder(V311, 0)
	got := drain(t, d, wire, func() int { return 1 + r.IntN(300) })
	if len(got) != len(want) {
		t.Fatalf("%d packets, want %d", len(got), len(want))
	}
	for i, p := range got {
		pub, ok := p.(*Publish)
		if !ok || len(pub.Payload) != want[i] || string(pub.Topic) != "a/b" {
			t.Fatalf("packet %d: %#v, want a %d-byte PUBLISH on a/b", i, p, want[i])
		}
		for j, c := range pub.Payload {
			if c != byte(j) {
				t.Fatalf("packet %d: payload byte %d is %d", i, j, c)
			}
		}
	}
}
