package packet

import "encoding/binary"

// SWAR constants: one bit or one unit per byte of a uint64.
const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// hasZeroByte reports whether any byte of x is zero.
func hasZeroByte(x uint64) bool { return (x-swarLo)&^x&swarHi != 0 }

// plainASCII reports, eight bytes at a time, whether b is all ASCII without
// U+0000 and, when noWild, without '+' or '#'. It is the fast path of the
// string checks: a false answer sends the caller to the exact, slower check.
func plainASCII(b []byte, noWild bool) bool {
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if x&swarHi != 0 || hasZeroByte(x) ||
			(noWild && (hasZeroByte(x^(swarLo*'+')) || hasZeroByte(x^(swarLo*'#')))) {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 || c == 0 || (noWild && (c == '+' || c == '#')) {
			return false
		}
	}
	return true
}
