package engine

import (
	"fmt"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestRecordKeysMatchFormat checks the append-built record keys against the
// fmt formatting they replace: every key ever written to a disk must keep
// its exact spelling, or restarted brokers would not find their records.
func TestRecordKeysMatchFormat(t *testing.T) {
	var b Broker // its key arena
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.String().Draw(t, "id")
		filter := rapid.String().Draw(t, "filter")
		seq := rapid.Uint64().Draw(t, "seq")
		pid := rapid.Uint16().Draw(t, "pid")
		ck := "/" + strconv.Itoa(len(id)) + ":" + id + "/"
		for _, tc := range []struct{ got, want string }{
			{keySub(id, filter), "b/u" + ck + filter},
			{keyOut(id, seq), "b/o" + ck + fmt.Sprintf("%020d", seq)},
			{keyIn(id, pid), "b/i" + ck + fmt.Sprintf("%05d", pid)},
			{b.outKey(id, seq), "b/o" + ck + fmt.Sprintf("%020d", seq)},
			{b.inKey(id, pid), "b/i" + ck + fmt.Sprintf("%05d", pid)},
			{keySession(id), "b/s/" + strconv.Itoa(len(id)) + ":" + id},
		} {
			if tc.got != tc.want {
				t.Fatalf("key %q, want %q", tc.got, tc.want)
			}
		}
	})
}

// TestRecordKeyEdges pins the padded numbers at their bounds.
func TestRecordKeyEdges(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{keyOut("a", 0), "b/o/1:a/00000000000000000000"},
		{keyOut("a", 42), "b/o/1:a/00000000000000000042"},
		{keyOut("", 1<<64-1), "b/o/0:/18446744073709551615"},
		{keyIn("alice", 1), "b/i/5:alice/00001"},
		{keyIn("alice", 65535), "b/i/5:alice/65535"},
		{keySub("x", "a/+/#"), "b/u/1:x/a/+/#"},
	} {
		if tc.got != tc.want {
			t.Errorf("key %q, want %q", tc.got, tc.want)
		}
	}
}

// TestRecordKeyAllocations checks that a key costs only its string, and the
// per-message keys carved from the broker's arena not even that.
func TestRecordKeyAllocations(t *testing.T) {
	var sink string
	var b Broker
	for name, f := range map[string]func(){
		"arena out": func() { sink = b.outKey("client-7", 123456) },
		"arena in":  func() { sink = b.inKey("client-7", 77) },
	} {
		if n := testing.AllocsPerRun(1000, f); n > 0.1 {
			t.Errorf("%s key: %.2f allocations, want none but a block now and then", name, n)
		}
	}
	for name, f := range map[string]func(){
		"out": func() { sink = keyOut("client-7", 123456) },
		"in":  func() { sink = keyIn("client-7", 77) },
		"sub": func() { sink = keySub("client-7", "sensors/+/t") },
	} {
		if n := testing.AllocsPerRun(100, f); n > 1 {
			t.Errorf("%s key: %.1f allocations, want 1", name, n)
		}
	}
	_ = sink
}
