package brokerfuzz

// The generator's own encoder: it writes whatever field values it is given,
// valid or not, so that the codec (engine/packet) stays the oracle and is
// never the generator. Nothing here validates.

// varint appends n as an MQTT Variable Byte Integer (any size; a value over
// 268,435,455 gets a fifth byte, which the spec forbids).
func varint(dst []byte, n int) []byte {
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		dst = append(dst, b)
		if n == 0 {
			return dst
		}
	}
}

// str appends a two-byte length and s.
func str(dst []byte, s string) []byte {
	return append(append(dst, byte(len(s)>>8), byte(len(s))), s...)
}

// u16 appends n big-endian.
func u16(dst []byte, n uint16) []byte { return append(dst, byte(n>>8), byte(n)) }

// frame prefixes body with the fixed header: first byte and Remaining Length.
func frame(first byte, body []byte) []byte {
	return append(varint([]byte{first}, len(body)), body...)
}

// props appends a v5 property block (its length, then raw property bytes);
// nothing for 3.1.1.
func props(dst []byte, v byte, raw []byte) []byte {
	if v != 5 {
		return dst
	}
	return append(varint(dst, len(raw)), raw...)
}

// connectFields are a CONNECT's fields as the generator sets them.
type connectFields struct {
	protoName  string
	level      byte
	flags      byte // the connect flags byte as is
	keepAlive  uint16
	props      []byte
	clientID   string
	willProps  []byte
	willTopic  string
	willMsg    string
	user, pass string
}

// rawConnect encodes a CONNECT; the payload fields present follow flags.
func rawConnect(f connectFields) []byte {
	b := str(nil, f.protoName)
	b = append(b, f.level, f.flags)
	b = u16(b, f.keepAlive)
	b = props(b, f.level, f.props)
	b = str(b, f.clientID)
	if f.flags&0x04 != 0 {
		b = props(b, f.level, f.willProps)
		b = str(b, f.willTopic)
		b = str(b, f.willMsg)
	}
	if f.flags&0x80 != 0 {
		b = str(b, f.user)
	}
	if f.flags&0x40 != 0 {
		b = str(b, f.pass)
	}
	return frame(0x10, b)
}

// rawPublish encodes a PUBLISH with the given fixed-header flags (DUP, QoS,
// RETAIN bits, any value); the packet id is written when the QoS bits are
// not 0.
func rawPublish(v, flags byte, topic string, id uint16, prop []byte, payload string) []byte {
	b := str(nil, topic)
	if flags&0x06 != 0 {
		b = u16(b, id)
	}
	b = props(b, v, prop)
	b = append(b, payload...)
	return frame(0x30|flags&0x0f, b)
}

// rawSubscribe encodes a SUBSCRIBE with the given first byte (0x82 is right).
func rawSubscribe(v, first byte, id uint16, prop []byte, filters []string, opts []byte) []byte {
	b := u16(nil, id)
	b = props(b, v, prop)
	for i, f := range filters {
		b = append(str(b, f), opts[i])
	}
	return frame(first, b)
}

// rawUnsubscribe encodes an UNSUBSCRIBE with the given first byte (0xa2 is
// right).
func rawUnsubscribe(v, first byte, id uint16, filters []string) []byte {
	b := u16(nil, id)
	b = props(b, v, nil)
	for _, f := range filters {
		b = str(b, f)
	}
	return frame(first, b)
}

// rawAck encodes a PUBACK/PUBREC/PUBREL/PUBCOMP in its two-byte form.
func rawAck(first byte, id uint16) []byte { return frame(first, u16(nil, id)) }

// rawDisconnect encodes a DISCONNECT (v5: with reason and no properties).
func rawDisconnect(v, reason byte) []byte {
	if v == 5 && reason != 0 {
		return frame(0xe0, []byte{reason, 0})
	}
	return []byte{0xe0, 0}
}
