package packet

import (
	"unicode/utf8"
)

// maxRemaining is the largest Remaining Length a four-byte Variable Byte
// Integer can carry (3.1.1 §2.2.3, 5.0 §1.5.5).
const maxRemaining = 268_435_455

// MaxPacketSize is the largest packet the protocol allows: a five-byte fixed
// header plus the largest Remaining Length.
const MaxPacketSize = maxRemaining + 5

// vbiLen is the number of bytes the Variable Byte Integer encoding of n takes.
func vbiLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16_384:
		return 2
	case n < 2_097_152:
		return 3
	default:
		return 4
	}
}

// appendVBI appends n (at most maxRemaining) as a Variable Byte Integer.
func appendVBI(dst []byte, n int) []byte {
	for n >= 128 {
		dst = append(dst, byte(n)|0x80)
		n >>= 7
	}
	return append(dst, byte(n))
}

// readVBI decodes a Variable Byte Integer from the front of b. It returns the
// value and the bytes used; used is 0 when b ends inside the integer.
func readVBI(v Version, b []byte) (val int, used int, err error) {
	mul := 1
	for i := 0; i < 4; i++ {
		if i >= len(b) {
			return 0, 0, nil
		}
		c := b[i]
		val += int(c&0x7F) * mul
		if c&0x80 == 0 {
			if i > 0 && c == 0 {
				// [MQTT-1.5.5-1] the encoding MUST use the minimum number of bytes.
				return 0, 0, malformed(rule(v, "§2.2.3", "MQTT-1.5.5-1"), "variable byte integer not in its shortest form")
			}
			return val, i + 1, nil
		}
		mul <<= 7
	}
	// 3.1.1 §2.2.3 / 5.0 §1.5.5: at most four bytes.
	return 0, 0, malformed(rule(v, "§2.2.3", "§1.5.5"), "variable byte integer longer than four bytes")
}

func appendU16(dst []byte, n uint16) []byte { return append(dst, byte(n>>8), byte(n)) }

func appendU32(dst []byte, n uint32) []byte {
	return append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendStr(dst []byte, s string) []byte {
	dst = appendU16(dst, uint16(len(s)))
	return append(dst, s...)
}

func appendBin(dst []byte, b []byte) []byte {
	dst = appendU16(dst, uint16(len(b)))
	return append(dst, b...)
}

// reader walks the body of one packet. Every read past the end is a malformed
// packet: the fields overrun the Remaining Length.
type reader struct {
	v   Version
	b   []byte
	off int
}

func (r *reader) short(field string) error {
	// 3.1.1 §2.2.3 / 5.0 §2.1.4: the fields must fit in the Remaining Length.
	return malformed(rule(r.v, "§2.2.3", "§2.1.4"), field+" runs past the remaining length")
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) byte1(field string) (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.short(field)
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) u16(field string) (uint16, error) {
	if r.left() < 2 {
		return 0, r.short(field)
	}
	n := uint16(r.b[r.off])<<8 | uint16(r.b[r.off+1])
	r.off += 2
	return n, nil
}

func (r *reader) u32(field string) (uint32, error) {
	if r.left() < 4 {
		return 0, r.short(field)
	}
	b := r.b[r.off:]
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	r.off += 4
	return n, nil
}

func (r *reader) vbi(field string) (int, error) {
	n, used, err := readVBI(r.v, r.b[r.off:])
	if err != nil {
		return 0, err
	}
	if used == 0 {
		return 0, r.short(field)
	}
	r.off += used
	return n, nil
}

// bin reads two-byte-length-prefixed data, aliasing the input.
func (r *reader) bin(field string) ([]byte, error) {
	if o := r.off; o+2 <= len(r.b) {
		if end := o + 2 + (int(r.b[o])<<8 | int(r.b[o+1])); end <= len(r.b) {
			r.off = end // the usual case, without the checks' calls
			return r.b[o+2 : end : end], nil
		}
	}
	n, err := r.u16(field)
	if err != nil {
		return nil, err
	}
	if r.left() < int(n) {
		return nil, r.short(field)
	}
	b := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

// str reads a UTF-8 encoded string and checks it.
func (r *reader) str(field string) (string, error) {
	b, err := r.bin(field)
	if err != nil {
		return "", err
	}
	if err := checkUTF8(r.v, b, field); err != nil {
		return "", err
	}
	return string(b), nil
}

// checkUTF8 enforces the UTF-8 string rules on s (the raw bytes of a field).
func checkUTF8(v Version, s []byte, field string) error {
	if plainASCII(s, false) {
		return nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0 {
				// [MQTT-1.5.3-2] / v5 [MQTT-1.5.4-2] MUST NOT include U+0000.
				return malformed(rule(v, "MQTT-1.5.3-2", "MQTT-1.5.4-2"), field+" contains U+0000")
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			// [MQTT-1.5.3-1] / v5 [MQTT-1.5.4-1] ill-formed UTF-8 (including surrogates).
			return malformed(rule(v, "MQTT-1.5.3-1", "MQTT-1.5.4-1"), field+" is not well-formed UTF-8")
		}
		i += n
	}
	return nil
}

// checkUTF8String is checkUTF8 for a Go string, without conversion.
func checkUTF8String(v Version, s string, field string) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0 {
				// [MQTT-1.5.3-2] / v5 [MQTT-1.5.4-2] MUST NOT include U+0000.
				return malformed(rule(v, "MQTT-1.5.3-2", "MQTT-1.5.4-2"), field+" contains U+0000")
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			// [MQTT-1.5.3-1] / v5 [MQTT-1.5.4-1] ill-formed UTF-8 (including surrogates).
			return malformed(rule(v, "MQTT-1.5.3-1", "MQTT-1.5.4-1"), field+" is not well-formed UTF-8")
		}
		i += n
	}
	return nil
}

// checkLen refuses a string or binary field longer than a two-byte length can say.
func checkLen(v Version, n int, field string) error {
	if n > 65535 {
		// 3.1.1 §1.5.3 / 5.0 §1.5.4 and §1.5.6: two-byte length prefix.
		return malformed(rule(v, "§1.5.3", "§1.5.4"), field+" longer than 65535 bytes")
	}
	return nil
}

// checkTopicLen refuses a Topic Name or Topic Filter longer than 65535 bytes.
func checkTopicLen(n int, field string) error {
	if n > 65535 {
		// [MQTT-4.7.3-3] (both versions): they MUST NOT encode to more than 65,535 bytes.
		return malformed("MQTT-4.7.3-3", field+" longer than 65535 bytes")
	}
	return nil
}
