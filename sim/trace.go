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

// tracer builds one trace line at a time in a reused buffer, hashes every
// line into an FNV-64a checksum, and keeps the full text only when asked.
type tracer struct {
	line  []byte
	sum   uint64
	keep  bool
	text  []byte
	lines int
	// at and atText[:atLen] cache the decimal text of the last line's time:
	// many lines in a row share it. A fixed array, so refreshing it stores
	// no pointer (no GC write barrier).
	at     engine.Time
	atText [20]byte
	atLen  int
}

func newTracer(keep bool) tracer {
	t := tracer{sum: fnvOffset64, keep: keep, atLen: 1}
	t.atText[0] = '0'
	return t
}

// begin starts a line: "<virtual ns> <node> <what>".
func (t *tracer) begin(now engine.Time, node, what string) {
	if now != t.at {
		t.at, t.atLen = now, len(strconv.AppendInt(t.atText[:0], int64(now), 10))
	}
	t.line = append(t.line[:0], t.atText[:t.atLen]...)
	t.line = append(t.line, ' ')
	t.line = append(t.line, node...)
	t.line = append(t.line, ' ')
	t.line = append(t.line, what...)
}

// int appends " key=value".
func (t *tracer) int(key string, v int64) {
	t.line = append(t.line, ' ')
	t.line = append(t.line, key...)
	t.line = append(t.line, '=')
	// Digits go through a stack buffer: appending in place stores no
	// pointer, where t.line = strconv.AppendInt(t.line, ...) would.
	var digits [20]byte
	t.line = append(t.line, strconv.AppendInt(digits[:0], v, 10)...)
}

// str appends " key=value".
func (t *tracer) str(key, v string) {
	t.line = append(t.line, ' ')
	t.line = append(t.line, key...)
	t.line = append(t.line, '=')
	t.line = append(t.line, v...)
}

// word appends " word".
func (t *tracer) word(v string) {
	t.line = append(t.line, ' ')
	t.line = append(t.line, v...)
}

// end finishes the line: hashes it with its newline and keeps it if asked.
func (t *tracer) end() {
	t.line = append(t.line, '\n')
	h := t.sum
	for _, b := range t.line {
		h ^= uint64(b)
		h *= fnvPrime64
	}
	t.sum = h
	t.lines++
	if t.keep {
		t.text = append(t.text, t.line...)
	}
}

// raw adds a whole line (the header).
func (t *tracer) raw(s string) {
	t.line = append(t.line[:0], s...)
	t.end()
}

// boolInt is 1 for true.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
