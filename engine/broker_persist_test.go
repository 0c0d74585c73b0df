package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"unsafe"

	"github.com/mqttlab/mqttlab/engine/packet"
	"pgregory.net/rapid"
)

// TestRecordKeysMatchFormat checks the append-built record keys against the
// fmt formatting they replace: every key ever written to a disk must keep
// its exact spelling, or restarted brokers would not find their records.
func TestRecordKeysMatchFormat(t *testing.T) {
	var b Broker // its byte arena
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.String().Draw(t, "id")
		filter := rapid.String().Draw(t, "filter")
		seq := rapid.Uint64().Draw(t, "seq")
		pid := rapid.Uint16().Draw(t, "pid")
		pid2 := rapid.Uint16().Draw(t, "pid2")
		ck := "/" + strconv.Itoa(len(id)) + ":" + id + "/"
		s := &brokerSession{id: id}
		for _, tc := range []struct{ got, want string }{
			{keySub(id, filter), "b/u" + ck + filter},
			{keyOut(id, seq), "b/o" + ck + fmt.Sprintf("%020d", seq)},
			{keyIn(id, pid), "b/i" + ck + fmt.Sprintf("%05d", pid)},
			{b.outKey(s, seq), "b/o" + ck + fmt.Sprintf("%020d", seq)},
			// the session keeps its last inbound key: another id in
			// between, then the first again, must each get their own
			{b.inKey(s, pid), "b/i" + ck + fmt.Sprintf("%05d", pid)},
			{b.inKey(s, pid), "b/i" + ck + fmt.Sprintf("%05d", pid)},
			{b.inKey(s, pid2), "b/i" + ck + fmt.Sprintf("%05d", pid2)},
			{b.inKey(s, pid), "b/i" + ck + fmt.Sprintf("%05d", pid)},
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
	s := &brokerSession{id: "client-7"}
	for name, f := range map[string]func(){
		"arena out": func() { sink = b.outKey(s, 123456) },
		"arena in":  func() { sink = b.inKey(s, 77); sink = b.inKey(s, 78) },
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

// TestRecordMessageRoundTrip writes messages with recWriter.msg and reads
// them back: topic and payload (one buffer, the topic's length kept in 16
// bits), expiry and forwarded properties come back unchanged, and a record
// whose topic is longer than any topic name can be is refused, not cut.
func TestRecordMessageRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		topic := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "topic")
		payload := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "payload")
		var props *packet.Properties
		if rapid.Bool().Draw(t, "v5") {
			props = &packet.Properties{Present: forwarded, ContentType: rapid.String().Draw(t, "ct"),
				User: []packet.UserProperty{{Key: "k", Value: rapid.String().Draw(t, "uv")}}}
			if rapid.Bool().Draw(t, "expires") {
				props.Present = props.Present.With(packet.PropMessageExpiry)
				props.MessageExpiry = rapid.Uint32().Draw(t, "expiry")
			}
		}
		m := newBrokerMsg(nil, topic, payload, props, true)
		m.startExpiry(Time(rapid.Int64Range(0, 1<<40).Draw(t, "now")))
		var w recWriter
		w.msg(&m)
		var arena *byteArena // the message copied into an allocation of its own, or into an arena as a restore does
		if rapid.Bool().Draw(t, "arena") {
			arena = &byteArena{}
		}
		r := recReader{b: w.b, arena: arena}
		got := r.msg()
		if r.err != nil || len(r.b) != 0 {
			t.Fatalf("read back: %v, %d bytes left", r.err, len(r.b))
		}
		if len(got.buf) > 0 && unsafe.SliceData(got.buf) == unsafe.SliceData(w.b[4:]) {
			t.Fatal("the message aliases the record instead of copying it")
		}
		if !bytes.Equal(got.topic(), topic) || !bytes.Equal(got.payload(), payload) {
			t.Fatalf("topic %q payload %q, want %q %q", got.topic(), got.payload(), topic, payload)
		}
		if got.expires != m.expires || got.interval != m.interval || got.expiresAt != m.expiresAt {
			t.Fatalf("expiry %v %d %d, want %v %d %d", got.expires, got.interval, got.expiresAt, m.expires, m.interval, m.expiresAt)
		}
		if (got.props == nil) != (m.props == nil) || (got.props != nil && !reflect.DeepEqual(*got.props, *m.props)) {
			t.Fatalf("props %+v, want %+v", got.props, m.props)
		}
	})
	long := newBrokerMsg(nil, nil, []byte("p"), nil, false)
	var w recWriter
	w.msg(&long)
	value := append(binary.BigEndian.AppendUint32(nil, maxTopicLen+1), make([]byte, maxTopicLen+1)...)
	value = append(value, w.b[4:]...) // the empty topic's length replaced by a too long topic
	r := recReader{b: value}
	r.msg()
	if !errors.Is(r.err, errRecTopic) {
		t.Fatalf("a %d-byte topic read back with error %v", maxTopicLen+1, r.err)
	}
}

// TestAppendPadded checks the zero padding against fmt's "%0*d" for widths
// below, at and above the number's digits and beyond 20.
func TestAppendPadded(t *testing.T) {
	for _, v := range []uint64{0, 7, 42, 99999, 100000, 1<<64 - 1} {
		for _, w := range []int{0, 1, 5, 19, 20, 21, 30} {
			if got, want := string(appendPadded([]byte("k/"), v, w)), "k/"+fmt.Sprintf("%0*d", w, v); got != want {
				t.Errorf("appendPadded(%d, %d) = %q, want %q", v, w, got, want)
			}
		}
	}
}
