package packet

// Decoder turns a byte stream, arriving in any chunking, into packets.
//
// Memory stays bounded: Feed checks each fixed header as soon as it is
// complete and refuses a packet over the maximum size before its body is
// buffered; consumed bytes are compacted away on the next Feed, so the
// internal buffer holds at most one partial packet plus the bytes of the
// latest Feed. After an error the Decoder keeps returning it and drops what
// it is fed.
type Decoder struct {
	v    Version
	max  uint32
	buf  []byte // buffered bytes; buf[start:] are not yet returned by Next
	off  int    // start of the first packet not yet returned
	scan int    // start of the first packet whose header Feed has not checked
	err  error  // the error Next keeps returning
	// pending is the error of a packet after buffered good ones: Feed
	// dropped its bytes, Next returns it once the good ones are taken.
	pending error
}

// NewDecoder returns a stream decoder. v==0 means unknown: the first packet
// must be CONNECT and its protocol level sets the version. maxPacketSize is
// the largest packet accepted, fixed header included; 0 means the protocol
// maximum (268,435,455 + 5 bytes).
func NewDecoder(v Version, maxPacketSize uint32) *Decoder {
	return &Decoder{v: v, max: maxPacketSize}
}

// Feed appends bytes received from the peer. It does not keep b. Packets
// returned by earlier calls to Next may alias the internal buffer and are
// invalid once Feed is called.
func (d *Decoder) Feed(b []byte) {
	if d.err != nil || d.pending != nil {
		return
	}
	if d.off > 0 {
		n := copy(d.buf, d.buf[d.off:])
		d.buf = d.buf[:n]
		d.scan -= d.off
		d.off = 0
	}
	d.buf = append(d.buf, b...)
	d.checkHeaders()
}

// checkHeaders walks the fixed headers of the buffered packets. At the first
// bad or oversized one it drops that packet's bytes and everything after, and
// records the error for Next to return once the good packets before it are
// taken, so a peer announcing a huge packet never gets its body stored.
func (d *Decoder) checkHeaders() {
	v := d.v
	for d.scan < len(d.buf) {
		_, _, hdr, total, err := header(v, d.buf[d.scan:], d.max)
		if err != nil {
			d.pending = err
			d.buf = d.buf[:d.scan]
			if d.off == d.scan {
				d.fail(err)
			}
			return
		}
		if hdr == 0 || d.scan+total > len(d.buf) {
			return
		}
		if v == 0 {
			v = peekLevel(d.buf[d.scan+hdr : d.scan+total])
		}
		d.scan += total
	}
}

// peekLevel returns the protocol level of a CONNECT body, 0 if it has none.
func peekLevel(body []byte) Version {
	if len(body) < 7 || string(body[:6]) != "\x00\x04"+protocolName {
		return 0
	}
	return Version(body[6])
}

// fail records err and releases the buffer.
func (d *Decoder) fail(err error) {
	d.err, d.pending = err, nil
	d.buf, d.off, d.scan = nil, 0, 0
}

// Next returns the next whole packet, or (nil, nil) when more bytes are
// needed. After an error it keeps returning that error. The packet may alias
// the internal buffer until the next call to Feed or Next.
func (d *Decoder) Next() (Packet, error) {
	if d.err != nil {
		return nil, d.err
	}
	p, n, err := Decode(d.v, d.buf[d.off:], d.max)
	if err == ErrIncomplete {
		if d.pending != nil && d.off == len(d.buf) {
			d.fail(d.pending)
			return nil, d.err
		}
		if d.off == len(d.buf) {
			d.buf, d.off, d.scan = d.buf[:0], 0, 0
		}
		return nil, nil
	}
	if err != nil {
		d.fail(err)
		return nil, err
	}
	d.off += n
	if d.scan < d.off {
		d.scan = d.off
	}
	if c, ok := p.(*Connect); ok && d.v == 0 {
		d.v = c.Version
	}
	return p, nil
}

// Version reports the protocol version in use (0 before CONNECT when unknown).
func (d *Decoder) Version() Version { return d.v }

// SetVersion fixes the version (the client learns it from its own CONNECT).
func (d *Decoder) SetVersion(v Version) { d.v = v }

// Buffered reports how many bytes the decoder holds (returned packets not yet
// compacted away included): a measure for the bounded-memory guarantee.
func (d *Decoder) Buffered() int { return cap(d.buf) }
