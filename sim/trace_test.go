package sim

import (
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine"
)

// TestTracerMatchesReference drives the tracer with random lines — long
// nodes, keys and values that cross its buffer's end, negative and large
// numbers — and compares its text and checksum with a plain reference: the
// lines built with strings.Builder and hashed by hash/fnv.
func TestTracerMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tr := newTracer(true)
		var ref strings.Builder
		word := rapid.OneOf(rapid.StringMatching(`[a-z/=>.-]{0,8}`), rapid.StringMatching(`[a-z/=>.-]{0,300}`))
		lines := rapid.IntRange(1, 30).Draw(rt, "lines")
		for range lines {
			// Repeated times and nodes exercise the cached line prefix.
			now := engine.Time(rapid.OneOf(rapid.Int64Range(0, 1<<50), rapid.Int64Range(0, 2)).Draw(rt, "now"))
			node := rapid.OneOf(word, rapid.SampledFrom([]string{"a", "b"})).Draw(rt, "node")
			what := word.Draw(rt, "what")
			if len(what) <= tblock && rapid.Bool().Draw(rt, "fixed") {
				tr.beginW(now, node, makeTword(what))
			} else {
				tr.begin(now, node, what)
			}
			ref.WriteString(strconv.FormatInt(int64(now), 10) + " " + node + " " + what)
			parts := rapid.IntRange(0, 12).Draw(rt, "parts")
			for range parts {
				key := word.Draw(rt, "key")
				fixed := len(key)+2 <= tblock && rapid.Bool().Draw(rt, "fixed")
				v := rapid.OneOf(rapid.Int64(), rapid.Int64Range(-2, 1200), rapid.SampledFrom([]int64{math.MinInt64, math.MaxInt64, -1, 9, 10, 99, 100, 999, 1000, 1e18})).Draw(rt, "v")
				switch rapid.IntRange(0, 3).Draw(rt, "kind") {
				case 0:
					if fixed {
						tr.intW(makeTword(" "+key+"="), v)
					} else {
						tr.int(" "+key+"=", v)
					}
					ref.WriteString(" " + key + "=" + strconv.FormatInt(v, 10))
				case 3:
					tr.num(v)
					ref.WriteString(strconv.FormatInt(v, 10))
				case 1:
					v := word.Draw(rt, "v")
					if fixed {
						tr.strW(makeTword(" "+key+"="), v)
					} else {
						tr.str(" "+key+"=", v)
					}
					ref.WriteString(" " + key + "=" + v)
				default:
					if fixed {
						tr.wordW(makeTword(" " + key))
					} else {
						tr.word(key)
					}
					ref.WriteString(" " + key)
				}
			}
			tr.end()
			ref.WriteString("\n")
		}
		if string(tr.text) != ref.String() {
			rt.Fatalf("text:\n%q\nwant:\n%q", tr.text, ref.String())
		}
		h := fnv.New64a()
		h.Write([]byte(ref.String()))
		if tr.sum != h.Sum64() {
			rt.Fatalf("checksum %016x, FNV-64a of the text %016x", tr.sum, h.Sum64())
		}
		if tr.lines != lines {
			rt.Fatalf("%d lines counted, %d written", tr.lines, lines)
		}
	})
}

// TestTracerBufferEdges puts every piece at every offset of the tracer's
// buffer: a line padded by k bytes, then the widest numbers, the one-, two-
// and three-digit fast paths, a string and a word, for every k up to past the
// buffer's size; each line is written twice with the same time and node (the
// cached prefix), and once with a node too long for the prefix cache, a
// prefix longer than a block, and through the fixed-piece (tword) calls with
// a padded block prefix.
func TestTracerBufferEdges(t *testing.T) {
	tr := newTracer(true)
	var ref strings.Builder
	long := strings.Repeat("n", len(tr.pText))
	mid := strings.Repeat("m", tblock)
	wide := strings.Repeat("w", tblock)
	for k := range 2*len(tr.buf) + 3 {
		pad := strings.Repeat("x", k)
		for _, node := range []string{"n", "n", long, mid} {
			tr.begin(engine.Time(k), node, pad)
			ref.WriteString(strconv.Itoa(k) + " " + node + " " + pad)
			for _, v := range []int64{math.MinInt64, math.MaxInt64, 7, -7, 0, 10, 99, 100, 999, 1000} {
				tr.int(" k=", v)
				tr.intW(makeTword(" kw="), v)
				tr.num(v)
				ref.WriteString(" k=" + strconv.FormatInt(v, 10) + " kw=" + strconv.FormatInt(v, 10) + strconv.FormatInt(v, 10))
			}
			tr.str(" s=", pad)
			tr.word("w")
			tr.wordW(makeTword(" " + wide[1:]))
			tr.end()
			ref.WriteString(" s=" + pad + " w " + wide[1:] + "\n")
			// The fixed calls at every offset: k bytes of what after the prefix.
			what := pad[:min(k, tblock)]
			tr.beginW(engine.Time(k), node, makeTword(what))
			tr.strW(makeTword(" s="), pad)
			tr.intW(makeTword(" "+wide[2:]+"="), int64(k))
			tr.wordW(makeTword(" " + wide[1:]))
			tr.end()
			ref.WriteString(strconv.Itoa(k) + " " + node + " " + what + " s=" + pad + " " + wide[2:] + "=" + strconv.Itoa(k) + " " + wide[1:] + "\n")
		}
	}
	if string(tr.text) != ref.String() {
		t.Fatal("tracer text differs from the reference at some buffer offset")
	}
	h := fnv.New64a()
	h.Write([]byte(ref.String()))
	if tr.sum != h.Sum64() {
		t.Fatalf("checksum %016x, FNV-64a of the text %016x", tr.sum, h.Sum64())
	}
}

// TestAppendDec compares the trace's time formatting with strconv, at the
// digit-pair edges, the extremes and random values.
func TestAppendDec(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 1 << 50, math.MaxInt64, -1, math.MinInt64} {
		if got, want := string(appendDec([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendDec(%d) = %q, want %q", v, got, want)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		v := rapid.Int64().Draw(rt, "v")
		if got, want := string(appendDec(nil, v)), strconv.FormatInt(v, 10); got != want {
			rt.Fatalf("appendDec(%d) = %q, want %q", v, got, want)
		}
	})
}
