package packet

import "strconv"

// Append encodes p for protocol version v and appends it to dst. It allocates
// nothing when dst has room. It refuses (returning dst unchanged and an
// *Error) any packet the decoder would refuse, so what it writes always
// decodes back to p.
func Append(dst []byte, v Version, p Packet) ([]byte, error) {
	if v != V311 && v != V5 {
		// [MQTT-3.1.2-2] only protocol levels 4 and 5 exist here.
		return dst, refuse("MQTT-3.1.2-2", UnsupportedProtocolVersion, "cannot encode for protocol "+v.String())
	}
	if isNil(p) {
		return dst, protocol("§2.1.2", "nil packet")
	}
	switch p := p.(type) {
	case *Connect:
		return appendConnect(dst, v, p)
	case *Connack:
		return appendConnack(dst, v, p)
	case *Publish:
		return appendPublish(dst, v, p)
	case *Puback:
		return appendAck(dst, v, PUBACK, p.PacketID, p.Reason, &p.Props)
	case *Pubrec:
		return appendAck(dst, v, PUBREC, p.PacketID, p.Reason, &p.Props)
	case *Pubrel:
		return appendAck(dst, v, PUBREL, p.PacketID, p.Reason, &p.Props)
	case *Pubcomp:
		return appendAck(dst, v, PUBCOMP, p.PacketID, p.Reason, &p.Props)
	case *Subscribe:
		return appendSubscribe(dst, v, p)
	case *Suback:
		return appendSuback(dst, v, p)
	case *Unsubscribe:
		return appendUnsubscribe(dst, v, p)
	case *Unsuback:
		return appendUnsuback(dst, v, p)
	case *Pingreq:
		return append(dst, byte(PINGREQ)<<4, 0), nil
	case *Pingresp:
		return append(dst, byte(PINGRESP)<<4, 0), nil
	case *Disconnect:
		return appendDisconnect(dst, v, p)
	case *Auth:
		return appendAuth(dst, v, p)
	}
	return dst, protocol("§2.1.2", "not an MQTT control packet (nil or foreign type)")
}

// isNil reports whether p is nil or a nil pointer of one of the packet types.
func isNil(p Packet) bool {
	switch p := p.(type) {
	case nil:
		return true
	case *Connect:
		return p == nil
	case *Connack:
		return p == nil
	case *Publish:
		return p == nil
	case *Puback:
		return p == nil
	case *Pubrec:
		return p == nil
	case *Pubrel:
		return p == nil
	case *Pubcomp:
		return p == nil
	case *Subscribe:
		return p == nil
	case *Suback:
		return p == nil
	case *Unsubscribe:
		return p == nil
	case *Unsuback:
		return p == nil
	case *Pingreq:
		return p == nil
	case *Pingresp:
		return p == nil
	case *Disconnect:
		return p == nil
	case *Auth:
		return p == nil
	}
	return false
}

// appendHeader appends the fixed header: type, flags and Remaining Length.
func appendHeader(v Version, dst []byte, t Type, flags byte, remaining int) ([]byte, error) {
	if remaining > maxRemaining {
		// 3.1.1 §2.2.3 / 5.0 §1.5.5: Remaining Length at most 268,435,455.
		return dst, refuse(rule(v, "§2.2.3", "§1.5.5"), PacketTooLarge, t.String()+" longer than the maximum Remaining Length")
	}
	return appendVBI(append(dst, byte(t)<<4|flags), remaining), nil
}

// Decode decodes one whole packet from the front of buf and returns it with
// the number of bytes it took. It returns ErrIncomplete when buf holds less
// than one packet. maxPacketSize bounds the packet size (fixed header
// included; 0 means the protocol maximum). With v == 0 only CONNECT is
// accepted and its protocol level gives the version. A decoded PUBLISH (and
// every byte-slice field) aliases buf.
func Decode(v Version, buf []byte, maxPacketSize uint32) (Packet, int, error) {
	t, flags, body, n, err := frame(v, buf, maxPacketSize)
	if err != nil {
		return nil, 0, err
	}
	p, err := decodeBody(v, t, flags, body)
	if err != nil {
		return nil, 0, err
	}
	return p, n, nil
}

// DecodePublish decodes the PUBLISH at the front of buf into p without
// allocating (unless it carries v5 properties with strings or lists): Topic,
// Payload and byte-slice properties alias buf. It returns the bytes used, or
// ErrIncomplete. A packet of another type is refused with a Protocol Error.
func DecodePublish(v Version, buf []byte, p *Publish) (int, error) {
	if p == nil {
		return 0, protocol("§3.3", "DecodePublish into a nil *Publish")
	}
	t, flags, body, n, err := frame(v, buf, 0)
	if err != nil {
		return 0, err
	}
	if t != PUBLISH {
		return 0, protocol("§3.3", "DecodePublish got a "+t.String())
	}
	if err := decodePublish(v, flags, body, p); err != nil {
		return 0, err
	}
	return n, nil
}

// header parses the fixed header at the front of buf. It returns hdr == 0
// when buf ends inside it. It checks the type, the reserved flags and the
// size limit, all of which are known before the body arrives. fromClient
// says the bytes are a Client's (the stream began with the version
// unknown): it picks the rule an oversized packet breaks.
func header(v Version, fromClient bool, buf []byte, maxPacketSize uint32) (t Type, flags byte, hdr, total int, err error) {
	if len(buf) >= 2 && buf[1] < 0x80 && plainFirst[firstIndex(v)][buf[0]] {
		// The usual packet: a first byte checkType accepts and a one-byte
		// Remaining Length (always in its shortest form).
		total = 2 + int(buf[1])
		if maxPacketSize == 0 || uint32(total) <= maxPacketSize {
			return Type(buf[0] >> 4), buf[0] & 0x0F, 2, total, nil
		}
	}
	if len(buf) == 0 {
		return 0, 0, 0, 0, nil
	}
	t, flags = Type(buf[0]>>4), buf[0]&0x0F
	if err := checkType(v, t, flags); err != nil {
		return 0, 0, 0, 0, err
	}
	rl, used, err := readVBI(v, buf[1:])
	if err != nil || used == 0 {
		return 0, 0, 0, 0, err
	}
	total = 1 + used + rl
	limit := int64(maxPacketSize)
	if limit == 0 {
		limit = MaxPacketSize
	}
	if int64(total) > limit {
		// A packet over the Maximum Packet Size is refused with 0x95 (checked
		// from the header, before the body is read): see tooLargeRule.
		return 0, 0, 0, 0, refuse(tooLargeRule(v, fromClient), PacketTooLarge,
			t.String()+" of "+strconv.Itoa(total)+" bytes exceeds the maximum packet size "+strconv.FormatInt(limit, 10))
	}
	return t, flags, 1 + used, total, nil
}

// plainFirst says, per version (firstIndex) and first byte of a fixed
// header, whether checkType accepts that type and those flags: header's
// fast path. Built once at package initialisation from checkType itself and
// never written again.
var plainFirst = newPlainFirst()

// firstIndex is the row of plainFirst for v: unknown (0), 3.1.1, 5.0, or
// none (every other version, whose headers take the full check).
func firstIndex(v Version) int {
	switch v {
	case 0:
		return 0
	case V311:
		return 1
	case V5:
		return 2
	}
	return 3
}

func newPlainFirst() *[4][256]bool {
	t := new([4][256]bool)
	for i, v := range [...]Version{0, V311, V5} {
		for b := range 256 {
			t[i][b] = checkType(v, Type(b>>4), byte(b)&0x0F) == nil
		}
	}
	return t
}

// frame splits the first whole packet off buf.
func frame(v Version, buf []byte, maxPacketSize uint32) (t Type, flags byte, body []byte, n int, err error) {
	t, flags, hdr, total, err := header(v, v == 0, buf, maxPacketSize)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	if hdr == 0 || len(buf) < total {
		return 0, 0, nil, 0, ErrIncomplete
	}
	return t, flags, buf[hdr:total:total], total, nil
}

// tooLargeRule is the statement a packet over the receiver's maximum size
// breaks. In 5.0 the sender broke the limit its peer announced: a Client's
// packet [MQTT-3.2.2-15] (the CONNACK's Maximum Packet Size), a Server's
// [MQTT-3.1.2-24] (the CONNECT's). 3.1.1 has no Maximum Packet Size, only
// the Remaining Length's range (§2.2.3): a 3.1.1 packet, and one read
// before the version is known (a CONNECT, sent before any limit was
// announced), meets a limit of the receiver's own, under §2.2.3 as rule
// reads a version not yet known.
func tooLargeRule(v Version, fromClient bool) string {
	switch {
	case v != V5:
		return "§2.2.3"
	case !fromClient:
		return "MQTT-3.1.2-24"
	}
	return "MQTT-3.2.2-15"
}

// checkType refuses reserved packet types, packets before CONNECT when the
// version is unknown, and reserved fixed-header flags.
func checkType(v Version, t Type, flags byte) error {
	if t == 0 || (t == AUTH && v == V311) {
		// 3.1.1 §2.2.1 / 5.0 §2.1.2: type 0 (and 15 in 3.1.1) is reserved.
		return malformed(rule(v, "§2.2.1", "§2.1.2"), "reserved control packet type "+strconv.Itoa(int(t)))
	}
	if v == 0 && t != CONNECT {
		// [MQTT-3.1.0-1] the first packet sent from the Client MUST be CONNECT.
		return protocol("MQTT-3.1.0-1", "first packet is "+t.String()+", not CONNECT")
	}
	want := byte(0)
	switch t {
	case PUBLISH:
		return nil // DUP, QoS and RETAIN are checked by the PUBLISH decoder.
	case PUBREL, SUBSCRIBE, UNSUBSCRIBE:
		want = 2
	}
	if flags != want {
		// [MQTT-2.2.2-1] [MQTT-2.2.2-2] / v5 [MQTT-2.1.3-1]: reserved flag bits MUST hold the listed value.
		return malformed(rule(v, "MQTT-2.2.2-1", "MQTT-2.1.3-1"),
			"reserved flags of "+t.String()+" are "+strconv.Itoa(int(flags))+", must be "+strconv.Itoa(int(want)))
	}
	return nil
}

// decodeBody decodes the variable header and payload of a packet of type t.
func decodeBody(v Version, t Type, flags byte, body []byte) (Packet, error) {
	switch t {
	case CONNECT:
		return decodeConnect(body)
	case CONNACK:
		return decodeConnack(v, body)
	case PUBLISH:
		p := new(Publish)
		if err := decodePublish(v, flags, body, p); err != nil {
			return nil, err
		}
		return p, nil
	case PUBACK, PUBREC, PUBREL, PUBCOMP:
		return decodeAck(v, t, body)
	case SUBSCRIBE:
		return decodeSubscribe(v, body)
	case SUBACK:
		return decodeSuback(v, body)
	case UNSUBSCRIBE:
		return decodeUnsubscribe(v, body)
	case UNSUBACK:
		return decodeUnsuback(v, body)
	case PINGREQ:
		return &Pingreq{}, fixedLen(v, t, body, 0)
	case PINGRESP:
		return &Pingresp{}, fixedLen(v, t, body, 0)
	case DISCONNECT:
		return decodeDisconnect(v, body)
	default: // AUTH; checkType refused the reserved types
		return decodeAuth(v, body)
	}
}

// fixedLen refuses a body whose length differs from the one the standard
// fixes for the packet type (3.1.1 acks, PINGREQ, PINGRESP, ...).
func fixedLen(v Version, t Type, body []byte, n int) error {
	if len(body) != n {
		// 3.1.1 and 5.0 §3.x.1: the Remaining Length of this packet is fixed.
		return malformed("§3."+strconv.Itoa(int(t))+".1",
			t.String()+" Remaining Length is "+strconv.Itoa(len(body))+", must be "+strconv.Itoa(n))
	}
	return nil
}

// trailing refuses bytes left after the last field of a packet.
func trailing(r *reader, t Type) error {
	if r.left() != 0 {
		// 3.1.1 §2.2.3 / 5.0 §2.1.4: the Remaining Length covers exactly the fields.
		return malformed(rule(r.v, "§2.2.3", "§2.1.4"), strconv.Itoa(r.left())+" trailing bytes after the fields of "+t.String())
	}
	return nil
}

// checkID refuses packet identifier 0.
func checkID(v Version, t Type, id uint16) error {
	if id == 0 {
		return zeroID(v, t) // out of line, so that checkID inlines
	}
	return nil
}

// zeroID is checkID's refusal.
func zeroID(v Version, t Type) error {
	return protocol(zeroIDRule(v, t), "packet identifier 0 in "+t.String())
}

// zeroIDRule is the statement a packet identifier 0 in a packet of type t
// breaks. The acknowledgements carry the identifier of the packet they
// acknowledge, which was non-zero.
func zeroIDRule(v Version, t Type) string {
	switch t {
	case PUBACK, PUBREC, PUBREL:
		// [MQTT-2.3.1-6] / v5 [MQTT-2.2.1-5]: the PUBLISH's identifier.
		return rule(v, "MQTT-2.3.1-6", "MQTT-2.2.1-5")
	case PUBCOMP:
		// 3.1.1's [MQTT-2.3.1-6] names PUBACK, PUBREC and PUBREL only, so
		// §2.3.1 (the identifier field); v5 [MQTT-2.2.1-5] names PUBCOMP.
		return rule(v, "§2.3.1", "MQTT-2.2.1-5")
	case SUBACK, UNSUBACK:
		// [MQTT-2.3.1-7] / v5 [MQTT-2.2.1-6]: the SUBSCRIBE's or UNSUBSCRIBE's.
		return rule(v, "MQTT-2.3.1-7", "MQTT-2.2.1-6")
	}
	// PUBLISH (QoS > 0), SUBSCRIBE, UNSUBSCRIBE: [MQTT-2.3.1-1] / v5
	// [MQTT-2.2.1-3]. (A v5 Server's PUBLISH breaks [MQTT-2.2.1-4] instead:
	// the codec does not know which side sent it.)
	return rule(v, "MQTT-2.3.1-1", "MQTT-2.2.1-3")
}

// checkV5Only refuses a packet that does not exist in 3.1.1.
func checkV5Only(v Version, t Type) error {
	if v != V5 {
		// 3.1.1 §2.2.1: type 15 is reserved.
		return malformed("§2.2.1", t.String()+" does not exist in 3.1.1")
	}
	return nil
}
