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
	// at and atText[:atLen] cache the decimal text of the last line's time:
	// many lines in a row share it.
	at     engine.Time
	atText [20]byte
	atLen  int
}

func newTracer(keep bool) tracer {
	t := tracer{sum: fnvOffset64, keep: keep, atLen: 1}
	t.atText[0] = '0'
	return t
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

// begin starts a line: "<virtual ns> <node> <what>".
func (t *tracer) begin(now engine.Time, node, what string) {
	if now != t.at {
		t.at, t.atLen = now, len(strconv.AppendInt(t.atText[:0], int64(now), 10))
	}
	if t.n+t.atLen+len(node)+len(what)+2 > len(t.buf) {
		t.putBytes(t.atText[:t.atLen])
		t.putByte(' ')
		t.put(node)
		t.putByte(' ')
		t.put(what)
		return
	}
	b := t.buf[t.n:]
	i := copy(b, t.atText[:t.atLen])
	b[i] = ' '
	i += 1 + copy(b[i+1:], node)
	b[i] = ' '
	i += 1 + copy(b[i+1:], what)
	t.n += i
}

// int appends " key=value". The fast path writes straight into the buffer,
// digits included; near its end, the pieces go through put.
func (t *tracer) int(key string, v int64) {
	if t.n+len(key)+22 > len(t.buf) {
		t.putByte(' ')
		t.put(key)
		t.putByte('=')
		var digits [20]byte
		t.putBytes(strconv.AppendInt(digits[:0], v, 10))
		return
	}
	b := t.buf[t.n:]
	b[0] = ' '
	i := 1 + copy(b[1:], key)
	b[i] = '='
	i++
	if v >= 0 && v < 10 {
		b[i] = byte('0' + v)
		i++
	} else {
		i += len(strconv.AppendInt(b[i:i], v, 10))
	}
	t.n += i
}

// str appends " key=value".
func (t *tracer) str(key, v string) {
	t.putByte(' ')
	t.put(key)
	t.putByte('=')
	t.put(v)
}

// word appends " word".
func (t *tracer) word(v string) {
	t.putByte(' ')
	t.put(v)
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
