package codec

import (
	"errors"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// versionOf picks the decoder version from the first input byte: 3.1.1, 5.0,
// or unknown (0: only CONNECT is accepted and sets it).
func versionOf(b byte) packet.Version {
	switch b % 3 {
	case 0:
		return packet.V311
	case 1:
		return packet.V5
	}
	return 0
}

// FuzzDecode checks the codec on arbitrary bytes: decoding never panics and
// fails only with an *Error or ErrIncomplete; the stream decoder fed one byte
// at a time agrees with the one-shot Decode; whatever decodes re-encodes,
// and decodes back to an Equal packet with the same bytes.
func FuzzDecode(f *testing.F) {
	var c checker
	f.Fuzz(c.check)
}

// checker runs the target's checks on one input. Its encode buffers are
// and errors.As targets are reused from one input to the next (Go's fuzzer calls a worker's target
// function sequentially, and so does the seed replay), so an execution
// allocates only what the codec itself does.
type checker struct {
	out, again []byte
	err, serr  *packet.Error // errors.As targets of checkRefusal
}

// check is the body of the fuzz target.
func (c *checker) check(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	v, wire := versionOf(data[0]), data[1:]
	p, n, err := packet.Decode(v, wire, 0)
	streamed, serr := streamFirst(v, wire)
	if err != nil {
		c.checkRefusal(t, err, serr)
		return
	}
	if serr != nil || !packet.Equal(p, streamed) {
		t.Fatalf("stream decoder disagrees: %#v, %v; Decode gave %#v", streamed, serr, p)
	}
	if p.Type() == packet.PUBLISH {
		var pub packet.Publish
		if m, err := packet.DecodePublish(v, wire, &pub); err != nil || m != n || !packet.Equal(p, &pub) {
			t.Fatalf("DecodePublish disagrees: %v, %d vs %d", err, m, n)
		}
	}
	ver := v
	if conn, ok := p.(*packet.Connect); ok {
		ver = conn.Version
	}
	c.reencode(t, ver, p, wire[:n])
}

// reencode checks that p, decoded from wire, encodes, decodes back to an
// Equal packet, and encodes again to the same bytes.
func (c *checker) reencode(t *testing.T, ver packet.Version, p packet.Packet, wire []byte) {
	out, err := packet.Append(c.out[:0], ver, p)
	if err != nil {
		t.Fatalf("decoded %#v from % x but cannot re-encode: %v", p, wire, err)
	}
	c.out = out
	q, m, err := packet.Decode(ver, out, 0)
	if err != nil || m != len(out) {
		t.Fatalf("re-encoded % x does not decode: %v (%d of %d bytes)", out, err, m, len(out))
	}
	if !packet.Equal(p, q) {
		t.Fatalf("re-decode differs:\n%#v\n%#v", p, q)
	}
	// q aliases out, so the second encoding goes to a buffer of its own.
	again, err := packet.Append(c.again[:0], ver, q)
	if err != nil || string(again) != string(out) {
		t.Fatalf("encoding is not canonical: % x vs % x", again, out)
	}
	c.again = again
}

// checkRefusal asserts that a decode error is a proper refusal and that the
// stream decoder gave the same one: the same rule, reason and message.
func (c *checker) checkRefusal(t *testing.T, err, serr error) {
	t.Helper()
	if errors.Is(err, packet.ErrIncomplete) {
		if serr != nil {
			t.Fatalf("Decode wants more bytes, stream decoder failed: %v", serr)
		}
		return
	}
	// The targets of errors.As are the checker's own fields, so the check
	// allocates nothing.
	if !errors.As(err, &c.err) || c.err.Rule == "" || c.err.Msg == "" || c.err.Reason < 0x80 {
		t.Fatalf("decode error is not a proper *packet.Error: %#v", err)
	}
	if !errors.Is(err, packet.ErrMalformed) && !errors.Is(err, packet.ErrProtocol) && !errors.Is(err, packet.ErrTooLarge) {
		t.Fatalf("error %v unwraps to no sentinel", err)
	}
	if serr == nil || !errors.As(serr, &c.serr) || *c.serr != *c.err {
		t.Fatalf("stream decoder error %#v, Decode error %#v", serr, err)
	}
}

// streamFirst feeds wire one byte at a time and returns the first packet or
// error of the stream decoder; (nil, nil) when it wants more bytes.
func streamFirst(v packet.Version, wire []byte) (packet.Packet, error) {
	d := packet.NewDecoder(v, 0)
	for i := range wire {
		d.Feed(wire[i : i+1])
		if p, err := d.Next(); p != nil || err != nil {
			return p, err
		}
	}
	return nil, nil
}
