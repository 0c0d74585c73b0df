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
	bad := &notPlain[0]
	if noWild {
		bad = &notPlain[1]
	}
	for _, c := range b {
		if bad[c] {
			return false
		}
	}
	return true
}

// notPlain marks, per byte value, what plainASCII refuses: non-ASCII and
// U+0000 (row 0), and also '+' and '#' (row 1, noWild). Built once at
// package initialisation and never written again.
var notPlain = func() (t [2][256]bool) {
	for c := range 256 {
		t[0][c] = c >= 0x80 || c == 0
		t[1][c] = t[0][c] || c == '+' || c == '#'
	}
	return t
}()
