package sim

import (
	"strconv"

	"github.com/mqttlab/mqttlab/engine"
)

// FNV-64a parameters.
const (
	fnvOffset64 uint64 = 14695981039346656037
	fnvPrime64  uint64 = 1099511628211
)

// tracer builds each trace line in a fixed buffer inside itself, hashes
// every line into an FNV-64a checksum, and keeps the full text only when
// asked. The buffer is an array, not a slice: building a line stores no
// pointer, so it costs no GC write barrier however often the collector runs.
// A line longer than the buffer is hashed (and kept) in pieces: FNV is a
// stream hash, so the sum is the same.
type tracer struct {
	buf   [256]byte
	n     int // bytes of buf in use
	sum   uint64
	keep  bool
	text  []byte
	lines int
	// pText[:pLen] caches the prefix "<pAt> <pNode> " of the last line:
	// many lines in a row share time and node.
	pAt   engine.Time
	pNode string
	pText [64]byte
	pLen  int
}

func newTracer(keep bool) tracer {
	return tracer{sum: fnvOffset64, keep: keep}
}

// put appends s to the line.
func (t *tracer) put(s string) { putText(t, s) }

// putBytes appends b to the line.
func (t *tracer) putBytes(b []byte) { putText(t, b) }

// putText appends s to the line, hashing full buffers on the way.
func putText[S string | []byte](t *tracer, s S) {
	for {
		c := copy(t.buf[t.n:], s)
		t.n += c
		if c == len(s) {
			return
		}
		s = s[c:]
		t.flush()
	}
}

// putByte appends c to the line.
func (t *tracer) putByte(c byte) {
	if t.n == len(t.buf) {
		t.flush()
	}
	t.buf[t.n] = c
	t.n++
}

// flush hashes the buffered bytes (and keeps them if asked).
func (t *tracer) flush() {
	h := t.sum
	for _, b := range t.buf[:t.n] {
		h ^= uint64(b)
		h *= fnvPrime64
	}
	t.sum = h
	if t.keep {
		t.text = append(t.text, t.buf[:t.n]...)
	}
	t.n = 0
}

// begin starts a line: "<virtual ns> <node> <what>". The "<virtual ns>
// <node> " prefix is cached: runs of lines share both time and node.
func (t *tracer) begin(now engine.Time, node, what string) {
	if now != t.pAt || node != t.pNode || t.pLen == 0 {
		t.setPrefix(now, node)
	}
	if t.pLen < 0 || t.n+t.pLen+len(what) > len(t.buf) {
		t.putLong(now, node)
		t.put(what)
		return
	}
	b := t.buf[t.n:]
	i := copy(b, t.pText[:t.pLen])
	t.n += i + copy(b[i:], what)
}

// setPrefix caches the text "<now> <node> "; pLen is -1 when it does not
// fit the cache (the line then goes through putLong).
func (t *tracer) setPrefix(now engine.Time, node string) {
	t.pAt, t.pNode = now, node
	b := appendDec(t.pText[:0], int64(now))
	if len(b)+len(node)+2 > len(t.pText) {
		t.pLen = -1
		return
	}
	b = append(b, ' ')
	b = append(b, node...)
	b = append(b, ' ')
	t.pLen = len(b)
}

// decPairs holds "00" to "99".
const decPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" +
	"90919293949596979899"

// appendDec appends v in decimal, two digits per step for v >= 0 (the
// times of the trace), through strconv for v < 0.
func appendDec(b []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(b, v, 10)
	}
	var d [20]byte
	i := len(d)
	u := uint64(v)
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		d[i], d[i+1] = decPairs[r], decPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		d[i], d[i+1] = decPairs[u*2], decPairs[u*2+1]
	} else {
		i--
		d[i] = byte('0' + u)
	}
	return append(b, d[i:]...)
}

// putLong appends "<now> <node> " piece by piece.
func (t *tracer) putLong(now engine.Time, node string) {
	var digits [20]byte
	t.putBytes(strconv.AppendInt(digits[:0], int64(now), 10))
	t.putByte(' ')
	t.put(node)
	t.putByte(' ')
}

// int appends key (ready-made, " name=") and v in decimal. The fast path
// writes straight into the buffer; near its end, the pieces go through put.
func (t *tracer) int(key string, v int64) {
	if t.n+len(key)+20 > len(t.buf) {
		t.put(key)
		t.putInt(v)
		return
	}
	t.n += copy(t.buf[t.n:], key)
	t.digits(v)
}

// putInt appends v in decimal through put (near the buffer's end).
func (t *tracer) putInt(v int64) {
	var digits [20]byte
	t.putBytes(strconv.AppendInt(digits[:0], v, 10))
}

// digits appends v in decimal straight into the buffer, small numbers digit
// by digit; the caller has checked that 20 bytes are free.
func (t *tracer) digits(v int64) {
	b := (*[20]byte)(t.buf[t.n:]) // one length check; constant indexes after it
	switch u := uint64(v); {
	case u < 10:
		b[0] = byte('0' + u)
		t.n++
	case u < 100:
		b[0], b[1] = decPairs[u*2], decPairs[u*2+1]
		t.n += 2
	case u < 1000:
		r := (u % 100) * 2
		b[0], b[1], b[2] = byte('0'+u/100), decPairs[r], decPairs[r+1]
		t.n += 3
	default:
		t.n += len(strconv.AppendInt(b[:0], v, 10))
	}
}

// num appends v in decimal, with no key (the line's last piece ends in
// "=").
func (t *tracer) num(v int64) {
	if t.n+20 > len(t.buf) {
		t.putInt(v)
		return
	}
	t.digits(v)
}

// str appends key (ready-made, " name=") and v.
func (t *tracer) str(key, v string) {
	if t.n+len(key)+len(v) > len(t.buf) {
		t.put(key)
		t.put(v)
		return
	}
	b := t.buf[t.n:]
	i := copy(b, key)
	t.n += i + copy(b[i:], v)
}

// word appends " word".
func (t *tracer) word(v string) {
	t.putByte(' ')
	t.put(v)
}

// tword is a fixed piece of a line (a "what", a " key=", a " WORD") kept
// both as a string and as a 32-byte block: the fast paths copy the whole
// block, two machine moves instead of a call to memmove, and advance by
// len(s).
type tword struct {
	s   string
	b   [tblock]byte
	idx byte // its index in twords (tape words name it by that)
}

// tblock is the size of a tword's block and of the prefix block.
const tblock = 32

// tw makes the tword of s (at most tblock bytes: it is for the fixed texts
// in packets.go) and registers it in twords, so tape words can name it. It
// is for package-level words: twords is written only while the package
// initialises.
func tw(s string) *tword {
	if len(twords) == 256 {
		panic("sim: more twords than a tape word can name")
	}
	w := makeTword(s)
	w.idx = byte(len(twords))
	twords = append(twords, w)
	return w
}

// makeTword makes the tword of s without registering it (for tests of the
// tracer alone).
func makeTword(s string) *tword {
	if len(s) > tblock {
		panic("sim: tword longer than its block: " + s)
	}
	w := &tword{s: s}
	copy(w.b[:], s)
	return w
}

// noWord is the tword of tape calls that name none.
var noWord = tw("")

// beginW is begin with a fixed what. Its fast path copies the cached
// prefix and what as blocks.
func (t *tracer) beginW(now engine.Time, node string, what *tword) {
	if now != t.pAt || node != t.pNode || t.pLen == 0 {
		t.setPrefix(now, node)
	}
	if t.pLen < 0 || t.pLen > tblock || t.n+2*tblock > len(t.buf) {
		t.begin(now, node, what.s)
		return
	}
	p := *(*[tblock]byte)(t.pText[:]) // via a local: no memmove call
	*(*[tblock]byte)(t.buf[t.n:]) = p
	t.n += t.pLen
	*(*[tblock]byte)(t.buf[t.n:]) = what.b
	t.n += len(what.s)
}

// intW is int with a fixed key.
func (t *tracer) intW(key *tword, v int64) {
	if t.n+tblock+20 > len(t.buf) {
		t.int(key.s, v)
		return
	}
	*(*[tblock]byte)(t.buf[t.n:]) = key.b
	t.n += len(key.s)
	t.digits(v)
}

// strW is str with a fixed key.
func (t *tracer) strW(key *tword, v string) {
	if t.n+tblock+len(v) > len(t.buf) {
		t.str(key.s, v)
		return
	}
	*(*[tblock]byte)(t.buf[t.n:]) = key.b
	t.n += len(key.s)
	t.n += copy(t.buf[t.n:], v)
}

// wordW appends a fixed piece as it is (its text carries its own leading
// space).
func (t *tracer) wordW(w *tword) {
	if t.n+tblock > len(t.buf) {
		t.put(w.s)
		return
	}
	*(*[tblock]byte)(t.buf[t.n:]) = w.b
	t.n += len(w.s)
}

// end finishes the line: hashes it with its newline and keeps it if asked.
func (t *tracer) end() {
	t.putByte('\n')
	t.flush()
	t.lines++
}

// raw adds a whole line (the header).
func (t *tracer) raw(s string) {
	t.put(s)
	t.end()
}

// boolInt is 1 for true.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
