package sim

import (
	"encoding/binary"
	"slices"

	"github.com/mqttlab/mqttlab/engine"
)

// tape records the trace during a run as the calls that write it, in a
// compact byte code, and renders them into text, and the text into its
// FNV-64a checksum, only when the trace or the checksum is asked for.
// Formatting numbers and hashing every byte as it was written took a fifth
// of a seed's CPU, most of it in FNV-64a's serial multiply per byte; a
// campaign asks for the checksum of every seed and still pays for it, a
// raw-speed run or a property test that only reads the verdict does not.
// The tape is one pointer-free byte slice, about a third of the text's size,
// so the collector never scans it.
//
// The tape has the tracer's writing methods (begin, beginW, num, intW, ...)
// and is replayed through a tracer, so the text has one formatter. A replay
// only has to give the same bytes, so the tape records a line's time and
// node only when they change.
//
// A call is its op byte, then the index of its tword for the ops that have
// one, then its value as a uvarint: a number, a time as the zigzag varint of
// its change, a node's index in nodes, or a string's length followed by its
// bytes.
type tape struct {
	// buf[:n] is the tape; len(buf) is its room. Writing stores bytes and
	// n, never the slice itself, so it costs no GC write barrier while the
	// collector marks (storing a slice header back at every call did).
	buf   []byte
	n     int
	nodes []string // node names, by index
	// byName indexes nodes once there are many (a swarm world's hundreds
	// or thousands of clients): a scan per line would grow as their square.
	byName map[string]int
	at     engine.Time
	node   int  // the last line's node, an index in nodes
	began  bool // at and node hold the last line's
}

// The ops of a tape.
const (
	opTime    = iota // the next lines' time changes by a zigzag varint
	opNode           // the next lines' node: its index in nodes
	opBegin          // begin a line with a string
	opBeginW         // begin a line with a tword
	opNum            // a number
	opIntW           // a tword, then a number
	opStrW           // a tword, then a string
	opPut            // a string
	opPutByte        // a byte
	opEnd            // end the line
)

// callRoom is the most bytes a call other than a string's bytes takes: op,
// tword, and a ten-byte uvarint.
const callRoom = 12

// twords lists every registered tword by index; tw registers them.
var twords []*tword

// bytes returns the tape so far.
func (t *tape) bytes() []byte { return t.buf[:t.n] }

// reserve makes room for at least n more bytes.
func (t *tape) reserve(n int) {
	if t.n+n > len(t.buf) {
		t.buf = slices.Grow(t.buf[:t.n], max(n, t.n))
		t.buf = t.buf[:cap(t.buf)]
	}
}

// reset empties the tape, keeping its room.
func (t *tape) reset() {
	t.n, t.nodes, t.at, t.node, t.began = 0, t.nodes[:0], 0, 0, false
	clear(t.byName)
}

// appendLong appends bytes built by f from the tape so far (the slow
// paths: long varints, strings).
func (t *tape) appendLong(room int, f func([]byte) []byte) {
	t.reserve(room)
	b := f(t.buf[:t.n])
	if cap(b) != cap(t.buf) { // f wrote more than room: b is a new array
		t.buf = b[:cap(b)]
	}
	t.n = len(b)
}

// call appends an op without a tword and its value; the fast path, a value
// of one byte with room to spare, is inlined into the callers.
func (t *tape) call(op byte, v uint64) {
	if n := t.n; v < 0x80 && n+2 <= len(t.buf) {
		b := t.buf[n : n+2]
		b[0], b[1] = op, byte(v)
		t.n = n + 2
		return
	}
	t.callLong(op, v)
}

// callLong is call with a value of any size.
func (t *tape) callLong(op byte, v uint64) {
	t.appendLong(callRoom, func(b []byte) []byte { return binary.AppendUvarint(append(b, op), v) })
}

// callW appends an op, its tword and its value, with call's fast path.
func (t *tape) callW(op byte, w *tword, v uint64) {
	if n := t.n; v < 0x80 && n+3 <= len(t.buf) {
		b := t.buf[n : n+3]
		b[0], b[1], b[2] = op, w.idx, byte(v)
		t.n = n + 3
		return
	}
	t.callWLong(op, w, v)
}

// callWLong is callW with a value of any size.
func (t *tape) callWLong(op byte, w *tword, v uint64) {
	t.appendLong(callRoom, func(b []byte) []byte { return binary.AppendUvarint(append(b, op, w.idx), v) })
}

// line records a line's time and node when they differ from the last line's.
func (t *tape) line(now engine.Time, node string) {
	if !t.began || now != t.at || node != t.nodes[t.node] {
		t.newLine(now, node)
	}
}

// newLine records what changed since the last line.
func (t *tape) newLine(now engine.Time, node string) {
	if !t.began || now != t.at {
		d := int64(now - t.at)
		t.appendLong(callRoom, func(b []byte) []byte { return binary.AppendVarint(append(b, opTime), d) })
		t.at = now
	}
	if !t.began || node != t.nodes[t.node] {
		t.node = t.nodeIndex(node) // an int: no GC write barrier, unlike the name
		t.call(opNode, uint64(t.node))
	}
	t.began = true
}

// nodeIndex returns node's index in nodes, adding it.
func (t *tape) nodeIndex(node string) int {
	if t.byName != nil {
		if i, ok := t.byName[node]; ok {
			return i
		}
	} else {
		for i, n := range t.nodes {
			if n == node {
				return i
			}
		}
	}
	t.nodes = append(t.nodes, node)
	switch {
	case t.byName != nil:
		t.byName[node] = len(t.nodes) - 1
	case len(t.nodes) > tapeScanNodes:
		t.byName = make(map[string]int, 2*len(t.nodes))
		for i, n := range t.nodes {
			t.byName[n] = i
		}
	}
	return len(t.nodes) - 1
}

// tapeScanNodes is how many nodes the tape finds by a scan before it
// indexes them in a map.
const tapeScanNodes = 32

// text appends an op, a tword index when w is set, and a string's length
// and bytes.
func text[S string | []byte](t *tape, op byte, w *tword, s S) {
	t.appendLong(callRoom+len(s), func(b []byte) []byte {
		b = append(b, op)
		if w != nil {
			b = append(b, w.idx)
		}
		return append(binary.AppendUvarint(b, uint64(len(s))), s...)
	})
}

// begin starts a line: "<virtual ns> <node> <what>".
func (t *tape) begin(now engine.Time, node, what string) {
	t.line(now, node)
	text(t, opBegin, nil, what)
}

// beginW is begin with a fixed what.
func (t *tape) beginW(now engine.Time, node string, what *tword) {
	t.line(now, node)
	if n := t.n; n+2 <= len(t.buf) {
		b := t.buf[n : n+2]
		b[0], b[1] = opBeginW, what.idx
		t.n = n + 2
		return
	}
	t.beginWLong(what)
}

// beginWLong is beginW's op and tword when the tape is full.
func (t *tape) beginWLong(what *tword) {
	t.appendLong(2, func(b []byte) []byte { return append(b, opBeginW, what.idx) })
}

// num appends v in decimal.
func (t *tape) num(v int64) { t.call(opNum, uint64(v)) }

// intW appends a fixed key and v in decimal.
func (t *tape) intW(key *tword, v int64) { t.callW(opIntW, key, uint64(v)) }

// int appends key (" name=") and v in decimal.
func (t *tape) int(key string, v int64) {
	t.put(key)
	t.num(v)
}

// strW appends a fixed key and v.
func (t *tape) strW(key *tword, v string) { text(t, opStrW, key, v) }

// str appends key (" name=") and v.
func (t *tape) str(key, v string) {
	t.put(key)
	t.put(v)
}

// word appends " word".
func (t *tape) word(v string) {
	t.putByte(' ')
	t.put(v)
}

// wordW appends a fixed piece as it is.
func (t *tape) wordW(w *tword) { t.callW(opStrW, w, 0) }

// put appends s.
func (t *tape) put(s string) { text(t, opPut, nil, s) }

// putBytes appends b.
func (t *tape) putBytes(b []byte) { text(t, opPut, nil, b) }

// putByte appends c.
func (t *tape) putByte(c byte) { t.call(opPutByte, uint64(c)) }

// end finishes the line.
func (t *tape) end() {
	if n := t.n; n < len(t.buf) {
		t.buf[n] = opEnd
		t.n = n + 1
		return
	}
	t.endLong()
}

// endLong is end when the tape is full.
func (t *tape) endLong() {
	t.appendLong(1, func(b []byte) []byte { return append(b, opEnd) })
}

// raw adds a whole line (the header).
func (t *tape) raw(s string) {
	t.put(s)
	t.end()
}

// player replays a tape into a tracer, from where it stopped last: the
// checksum of the trace so far can be asked for again as the run goes on.
type player struct {
	tr   tracer
	pos  int         // tape bytes replayed
	at   engine.Time // the time of the next line
	node string      // the node of the next line
}

// newPlayer returns a player whose tracer keeps the text when keep is set.
func newPlayer(keep bool) *player { return &player{tr: newTracer(keep)} }

// play replays the calls of t not yet replayed. The tape is the world's own
// writing, so it is well formed.
func (p *player) play(t *tape) {
	b, r := t.bytes(), &p.tr
	i := p.pos
	for i < len(b) {
		op := b[i]
		i++
		switch op {
		case opEnd:
			r.end()
		case opBeginW:
			r.beginW(p.at, p.node, twords[b[i]])
			i++
		case opIntW:
			w := twords[b[i]]
			v, n := uvarint(b[i+1:])
			i += 1 + n
			r.intW(w, int64(v))
		case opNum:
			v, n := uvarint(b[i:])
			i += n
			r.num(int64(v))
		case opStrW:
			r.wordW(twords[b[i]])
			i = p.text(b, i+1)
		case opPut:
			i = p.text(b, i)
		case opBegin:
			r.begin(p.at, p.node, "")
			i = p.text(b, i)
		case opPutByte:
			v, n := uvarint(b[i:])
			i += n
			r.putByte(byte(v))
		case opTime:
			d, n := binary.Varint(b[i:])
			i += n
			p.at += engine.Time(d)
		case opNode:
			v, n := uvarint(b[i:])
			i += n
			p.node = t.nodes[v]
		}
	}
	p.pos = i
}

// text replays the string at b[i:] (its length, then its bytes) and returns
// the index after it.
func (p *player) text(b []byte, i int) int {
	l, n := uvarint(b[i:])
	i += n
	p.tr.putBytes(b[i : i+int(l)])
	return i + int(l)
}

// uvarint is binary.Uvarint with the one-byte case inlined.
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// trace is a run's trace: its tape, and the hash-only player behind
// checksum, made on the first call.
type trace struct {
	tape
	sum *player
}

// checksum returns the FNV-64a checksum of the trace so far, replaying only
// what was recorded since the last call.
func (t *trace) checksum() uint64 {
	if t.sum == nil {
		t.sum = newPlayer(false)
	}
	t.sum.play(&t.tape)
	return t.sum.tr.sum
}

// text renders the whole trace so far.
func (t *trace) text() string {
	p := newPlayer(true)
	p.play(&t.tape)
	return string(p.tr.text)
}
