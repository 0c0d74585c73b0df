package packet

// Decoder turns a byte stream, arriving in any chunking, into packets.
//
// Memory stays bounded: Feed checks each fixed header as soon as it is
// complete and refuses a packet over the maximum size before its body is
// buffered; consumed bytes are compacted away on the next Feed, so the
// internal buffer holds at most one partial packet plus the bytes of the
// latest Feed. After an error the Decoder keeps returning it and drops what
// it is fed.
//
// A PUBLISH or an acknowledgement (PUBACK, PUBREC, PUBREL, PUBCOMP) is
// decoded into a value the Decoder owns and re-fills at a later Next, so the
// frequent packets cost no allocation: the returned packet is valid until the
// next call to Feed or Next (see the package documentation, "Aliasing and
// lifetime"). Reset readies a Decoder for a new stream, so one that outlives
// its connection can serve the next without a fresh allocation.
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
	own     owned // the values re-filled for the frequent packet types
	// fromClient says the stream is a Client's: it began with the version
	// unknown (v == 0), so its first packet is a CONNECT.
	fromClient bool
	// checked is the version every fixed header in buf[off:scan] was
	// checked under (mixedVersions when they differ): Next then skips
	// checking them again while the version is still that one.
	checked Version
	last    int // the encoded size of the packet Next returned last
}

// mixedVersions marks buf[off:scan] as checked under more than one version.
const mixedVersions Version = 0xFF

// owned holds the Decoder's re-filled packet values: the PUBLISH, and one
// acknowledgement that PUBACK, PUBREC, PUBREL and PUBCOMP (one layout, so
// their pointer types convert) take turns in.
//
// pubClean and ackClean say the value's Props are zero (propsClean), so
// the next decode into it need not reset them: most packets carry no
// properties.
type owned struct {
	publish  Publish
	ack      Puback
	pubClean bool
	ackClean bool
}

// propsClean reports whether Props a decoder just filled (successfully or
// not) are still zero: decodeProps sets a property's Present bit before its
// value and appends to a list before it can fail, so with no Present bit
// and empty lists nothing was written since the last reset.
func propsClean(p *Properties) bool { return p.isEmpty() }

// NewDecoder returns a stream decoder. v==0 means unknown: the first packet
// must be CONNECT and its protocol level sets the version. maxPacketSize is
// the largest packet accepted, fixed header included; 0 means the protocol
// maximum (268,435,455 + 5 bytes). A decoder that starts with v == 0
// reads a Client's stream; one that starts knowing the version reads a
// Server's (which only the rule an oversized packet cites depends on).
func NewDecoder(v Version, maxPacketSize uint32) *Decoder {
	return &Decoder{v: v, max: maxPacketSize, fromClient: v == 0}
}

// resetKeep is the largest buffer Reset keeps for the next stream: room for
// the usual packets, while one huge packet's buffer is let go.
const resetKeep = 4096

// Reset makes d what NewDecoder(v, maxPacketSize) returns, for a new stream,
// keeping the room of its buffer (up to resetKeep bytes). Everything Next
// returned before, packets and the byte slices in them, is invalid after it.
func (d *Decoder) Reset(v Version, maxPacketSize uint32) {
	buf := d.buf[:0]
	if cap(buf) > resetKeep {
		buf = nil
	}
	*d = Decoder{v: v, max: maxPacketSize, buf: buf, fromClient: v == 0}
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
	plain := &plainFirst[firstIndex(v)]
	for d.scan < len(d.buf) {
		buf := d.buf[d.scan:]
		var hdr, total int
		if len(buf) >= 2 && buf[1] < 0x80 && plain[buf[0]] && (d.max == 0 || 2+uint32(buf[1]) <= d.max) {
			hdr, total = 2, 2+int(buf[1]) // header's fast path, inline
		} else {
			var err error
			if _, _, hdr, total, err = header(v, d.fromClient, buf, d.max); err != nil {
				d.pending = err
				d.buf = d.buf[:d.scan]
				if d.off == d.scan {
					d.fail(err)
				}
				return
			}
		}
		if hdr == 0 || d.scan+total > len(d.buf) {
			return
		}
		if d.off == d.scan {
			d.checked = v
		} else if d.checked != v {
			d.checked = mixedVersions
		}
		if v == 0 {
			v = peekLevel(d.buf[d.scan+hdr : d.scan+total])
			plain = &plainFirst[firstIndex(v)]
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
// needed. After an error it keeps returning that error. The packet (a
// PUBLISH or an acknowledgement is the Decoder's own re-filled value) and
// the byte slices in it are valid until the next call to Feed or Next.
func (d *Decoder) Next() (Packet, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.off == len(d.buf) && d.pending == nil {
		// Drained: the usual end of a caller's Next loop, answered
		// without framing an empty buffer.
		d.buf, d.off, d.scan = d.buf[:0], 0, 0
		return nil, nil
	}
	p, n, err := d.decode(d.buf[d.off:])
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
	d.last = n
	if d.scan < d.off {
		d.scan = d.off
	}
	if c, ok := p.(*Connect); ok && d.v == 0 {
		d.v = c.Version
	}
	return p, nil
}

// decode is Decode with the frequent packet types decoded into the
// Decoder's own values.
func (d *Decoder) decode(buf []byte) (Packet, int, error) {
	var t Type
	var flags byte
	var body []byte
	var n int
	var err error
	if d.off < d.scan && d.checked == d.v {
		// Feed checked this header under d.v: a one-byte Remaining Length
		// (the usual packet) is read here, longer ones by checkedFrame.
		if c := buf[1]; c < 0x80 {
			n = 2 + int(c)
			t, flags, body = Type(buf[0]>>4), buf[0]&0x0F, buf[2:n:n]
		} else {
			t, flags, body, n = checkedFrame(buf)
		}
	} else if t, flags, body, n, err = frame(d.v, buf, d.max); err != nil {
		return nil, 0, err
	}
	var p Packet
	switch t {
	case PUBLISH:
		o := &d.own
		p, err = &o.publish, decodePublishInto(d.v, flags, body, &o.publish, !o.pubClean)
		o.pubClean = propsClean(&o.publish.Props)
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		o := &d.own
		err = decodeAckProps(d.v, t, body, &o.ack, !o.ackClean)
		o.ackClean = propsClean(&o.ack.Props)
		switch t {
		case PUBACK:
			p = &o.ack
		case PUBREC:
			p = (*Pubrec)(&o.ack)
		case PUBREL:
			p = (*Pubrel)(&o.ack)
		default:
			p = (*Pubcomp)(&o.ack)
		}
	default:
		p, err = decodeBody(d.v, t, flags, body)
	}
	if err != nil {
		return nil, 0, err
	}
	return p, n, nil
}

// checkedFrame splits off the first packet of buf, whose fixed header is
// known to be valid and whose bytes are all there: frame without the checks.
func checkedFrame(buf []byte) (t Type, flags byte, body []byte, n int) {
	rl, shift, i := 0, 0, 1
	for {
		c := buf[i]
		rl |= int(c&0x7F) << shift
		i++
		if c&0x80 == 0 {
			break
		}
		shift += 7
	}
	n = i + rl
	return Type(buf[0] >> 4), buf[0] & 0x0F, buf[i:n:n], n
}

// LastSize returns the encoded size, fixed header included, of the packet
// Next returned last (what a Maximum Packet Size bounds), 0 before any.
func (d *Decoder) LastSize() int { return d.last }

// Version reports the protocol version in use (0 before CONNECT when unknown).
func (d *Decoder) Version() Version { return d.v }

// SetVersion fixes the version (the client learns it from its own CONNECT).
func (d *Decoder) SetVersion(v Version) { d.v = v }

// Buffered reports how many bytes the decoder holds (returned packets not yet
// compacted away included): a measure for the bounded-memory guarantee.
func (d *Decoder) Buffered() int { return cap(d.buf) }
