package sim

import (
	"math"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"pgregory.net/rapid"
)

// TestTapeReplaysTracer drives a tracer and a tape with the same random
// calls — long strings, negative and huge numbers, times that go back,
// registered fixed words — and checks that the tape, played back in random
// pieces (as repeated Checksum calls do), gives the tracer's text and
// checksum.
func TestTapeReplaysTracer(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		direct := newTracer(true)
		var tp tape
		kept, hashed := newPlayer(true), newPlayer(false)
		word := rapid.OneOf(rapid.StringMatching(`[a-z/=>.-]{0,8}`), rapid.StringMatching(`[a-z/=>.-]{0,300}`))
		fixed := rapid.SampledFrom(twords)
		num := rapid.OneOf(rapid.Int64(), rapid.Int64Range(-2, 300), rapid.SampledFrom([]int64{math.MinInt64, math.MaxInt64, -1, 127, 128, 1 << 40}))
		lines := rapid.IntRange(1, 30).Draw(rt, "lines")
		for range lines {
			now := engine.Time(rapid.OneOf(rapid.Int64Range(0, 1<<50), rapid.Int64Range(0, 2), rapid.Int64Range(-5, 0)).Draw(rt, "now"))
			node := rapid.OneOf(word, rapid.SampledFrom([]string{"a", "b"})).Draw(rt, "node")
			if rapid.Bool().Draw(rt, "fixed") {
				w := fixed.Draw(rt, "what")
				direct.beginW(now, node, w)
				tp.beginW(now, node, w)
			} else {
				what := word.Draw(rt, "what")
				direct.begin(now, node, what)
				tp.begin(now, node, what)
			}
			for range rapid.IntRange(0, 12).Draw(rt, "parts") {
				tapeCall(rt, &direct, &tp, word, fixed, num)
			}
			direct.end()
			tp.end()
			if rapid.Bool().Draw(rt, "play") {
				hashed.play(&tp)
			}
		}
		kept.play(&tp)
		hashed.play(&tp)
		if string(kept.tr.text) != string(direct.text) {
			rt.Fatalf("replayed text:\n%q\nwant:\n%q", kept.tr.text, direct.text)
		}
		if kept.tr.sum != direct.sum || hashed.tr.sum != direct.sum {
			rt.Fatalf("replayed checksums %016x (kept) %016x (in pieces), direct %016x", kept.tr.sum, hashed.tr.sum, direct.sum)
		}
	})
}

// lineWriter is what the tracer and the tape both write a line's pieces
// with.
type lineWriter interface {
	num(int64)
	intW(*tword, int64)
	int(string, int64)
	strW(*tword, string)
	str(string, string)
	word(string)
	wordW(*tword)
	put(string)
	putBytes([]byte)
	putByte(byte)
}

// tapeCall makes one random writing call on both tr and tp.
func tapeCall(rt *rapid.T, tr *tracer, tp *tape, word *rapid.Generator[string], fixed *rapid.Generator[*tword], num *rapid.Generator[int64]) {
	var call func(lineWriter)
	switch rapid.IntRange(0, 9).Draw(rt, "call") {
	case 0:
		v := num.Draw(rt, "v")
		call = func(w lineWriter) { w.num(v) }
	case 1:
		k, v := fixed.Draw(rt, "key"), num.Draw(rt, "v")
		call = func(w lineWriter) { w.intW(k, v) }
	case 2:
		k, v := word.Draw(rt, "key"), num.Draw(rt, "v")
		call = func(w lineWriter) { w.int(k, v) }
	case 3:
		k, v := fixed.Draw(rt, "key"), word.Draw(rt, "v")
		call = func(w lineWriter) { w.strW(k, v) }
	case 4:
		k, v := word.Draw(rt, "key"), word.Draw(rt, "v")
		call = func(w lineWriter) { w.str(k, v) }
	case 5:
		v := word.Draw(rt, "v")
		call = func(w lineWriter) { w.word(v) }
	case 6:
		k := fixed.Draw(rt, "w")
		call = func(w lineWriter) { w.wordW(k) }
	case 7:
		v := word.Draw(rt, "v")
		call = func(w lineWriter) { w.put(v) }
	case 8:
		v := word.Draw(rt, "v")
		call = func(w lineWriter) { w.putBytes([]byte(v)) }
	default:
		c := rapid.Byte().Draw(rt, "c")
		call = func(w lineWriter) { w.putByte(c) }
	}
	call(tr)
	call(tp)
}

// TestTapeLongStrings checks strings longer than a tracer buffer and a
// header line go through the tape intact.
func TestTapeLongStrings(t *testing.T) {
	long := string(make([]byte, 70_000))
	direct := newTracer(true)
	var tp tape
	direct.raw("# header " + long)
	tp.raw("# header " + long)
	direct.begin(1, "n", long)
	tp.begin(1, "n", long)
	direct.strW(kKey, long)
	tp.strW(kKey, long)
	direct.end()
	tp.end()
	p := newPlayer(true)
	p.play(&tp)
	if string(p.tr.text) != string(direct.text) || p.tr.sum != direct.sum {
		t.Fatalf("long strings: replay differs (%d bytes, want %d)", len(p.tr.text), len(direct.text))
	}
}
