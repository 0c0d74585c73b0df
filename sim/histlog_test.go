package sim

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"os"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/internal/histpkt"
	"github.com/mqttlab/mqttlab/model"
)

const goldenHistories = "testdata/golden-histories.txt"

// historySum is the FNV-64a of every event printed with %+v, one per line.
func historySum(h model.History) string {
	s := fnv.New64a()
	for _, e := range h.Events {
		fmt.Fprintf(s, "%+v\n", e)
	}
	return fmt.Sprintf("%016x %d", s.Sum64(), len(h.Events))
}

// TestGoldenHistories compares the histories of the golden runs, field by
// field, with sums committed in testdata: the compact record and its
// rebuilding into model.Events must give exactly the events the world saw.
// The committed sums were taken when the world still recorded model.Events
// directly. Regenerate with: go test ./sim -run TestGoldenHistories -update
func TestGoldenHistories(t *testing.T) {
	var b strings.Builder
	got := map[string]string{}
	runGoldenCases(t, func(k string, r Result) {
		got[k] = historySum(r.History())
		fmt.Fprintf(&b, "%s %s\n", k, got[k])
	})
	if *update {
		head := "# scenario/profile/seed/version FNV-64a of the history's events printed with %+v, one per line; event count (go test ./sim -run TestGoldenHistories -update)\n"
		if err := os.WriteFile(goldenHistories, []byte(head+b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(goldenHistories)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, want, _ := strings.Cut(line, " ")
		seen++
		if got[k] != want {
			t.Errorf("%s: history %s, golden %s", k, got[k], want)
		}
	}
	if seen != len(got) {
		t.Errorf("%s has %d runs, want %d", goldenHistories, seen, len(got))
	}
}

// TestHistoryBuiltOnce checks that the events built from the record are
// kept: a second call extends the first (no event built twice) and a
// caller's append cannot write into the log.
func TestHistoryBuiltOnce(t *testing.T) {
	w, err := New(Config{Seed: 3, Profile: "calm", Scenario: "small"})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Generate(Config{Seed: 3, Profile: "calm", Scenario: "small"})
	if err != nil {
		t.Fatal(err)
	}
	half := len(plan.Ops) / 2
	for _, op := range plan.Ops[:half] {
		if err := w.Apply(op); err != nil {
			t.Fatal(err)
		}
	}
	h1 := w.History()
	n := len(h1.Events)
	if n == 0 {
		t.Fatal("no events after half the plan")
	}
	_ = append(h1.Events, model.Event{Kind: model.Failed, Reason: "caller's own"})
	for _, op := range plan.Ops[half:] {
		if err := w.Apply(op); err != nil {
			t.Fatal(err)
		}
	}
	w.RunUntilQuiet()
	h2 := w.History()
	if len(h2.Events) <= n {
		t.Fatalf("history did not grow: %d then %d events", n, len(h2.Events))
	}
	if &h1.Events[0] != &h2.Events[0] && fmt.Sprint(h1.Events[:n]) != fmt.Sprint(h2.Events[:n]) {
		t.Fatal("the first events changed between calls")
	}
	if h2.Events[n].Reason == "caller's own" {
		t.Fatal("a caller's append wrote into the log")
	}
}

// TestRecordFlags checks that every flag and field of a record reaches the
// model's Event (the golden runs never publish retained messages, so they
// cannot catch a lost Retain).
func TestRecordFlags(t *testing.T) {
	strs := newStrTable()
	id := strs.id
	cases := []struct {
		name string
		rec  hrec
		want model.Event
	}{
		{"plain", hrec{kind: model.Restart, time: 5, node: id("p1")}, model.Event{Kind: model.Restart, Time: 5, Node: "p1"}},
		{"retain", hrec{kind: model.Accepted, node: id("p1"), msg: id("p1-1"), topic: id("t"), qos: 1, flags: evRetain},
			model.Event{Kind: model.Accepted, Node: "p1", Msg: "p1-1", Topic: "t", QoS: 1, Retain: true}},
		{"persistent", hrec{kind: model.Subscribed, filter: id("t/#"), flags: evPersistent}, model.Event{Kind: model.Subscribed, Filter: "t/#", Persistent: true}},
		{"connected", hrec{kind: model.Connected, peer: id("broker"), version: 5, receiveMax: 10, flags: evCleanStart | evSessionPresent | evHadState},
			model.Event{Kind: model.Connected, Peer: "broker", Version: 5, ReceiveMax: 10, CleanStart: true, SessionPresent: true, HadState: true}},
		{"crash", hrec{kind: model.Crash, point: model.CrashInCallbackPost, reason: id("why")}, model.Event{Kind: model.Crash, Point: model.CrashInCallbackPost, Reason: "why"}},
		{"packet", hrec{kind: model.Sent, pkt: cpacket{typ: 3, id: 9, qos: 2, reason: 0x92, topic: id("t"), msg: id("m"), payload: id("pl"), filter: id("f"), flags: pktDup | pktRetain | pktSessions | pktClean}},
			model.Event{Kind: model.Sent, Packet: model.Packet{Type: 3, ID: 9, QoS: 2, Reason: 0x92, Topic: "t", Msg: "m", Payload: "pl", Filter: "f", Dup: true, Retain: true, Sessions: true, Clean: true}}},
		{"publish expiry", hrec{kind: model.Sent, pkt: cpacket{typ: 3, id: 1, topic: id("t"), msg: id("m"), expiry: 30}},
			model.Event{Kind: model.Sent, Packet: model.Packet{Type: 3, ID: 1, Topic: "t", Msg: "m", Expiry: 30}}},
		{"connect will", hrec{kind: model.Sent, pkt: cpacket{typ: 1, id: 10, filter: 5, expiry: 60, qos: 1, topic: id("w"), msg: id("bye"), payload: id("bye"), flags: pktWill | pktRetain | pktClean}},
			model.Event{Kind: model.Sent, Packet: model.Packet{Type: 1, KeepAlive: 10, WillDelay: 5, Expiry: 60, QoS: 1, Topic: "w", Msg: "bye", Payload: "bye", Will: true, Retain: true, Clean: true}}},
		{"connack keep alive", hrec{kind: model.Received, pkt: cpacket{typ: 2, id: 30}},
			model.Event{Kind: model.Received, Packet: model.Packet{Type: 2, KeepAlive: 30}}},
		{"subscribe opts", hrec{kind: model.Sent, pkt: cpacket{typ: 8, id: 2, qos: 1, reason: 0x2C, filter: id("t/#")}},
			model.Event{Kind: model.Sent, Packet: model.Packet{Type: 8, ID: 2, QoS: 1, Opts: 0x2C, Filter: "t/#"}}},
		{"publish subids", hrec{kind: model.Received, pkt: cpacket{typ: 3, id: 1, topic: id("t"), subids: id("\x07\x00\x00\x00\x01\x01\x00\x00")}},
			model.Event{Kind: model.Received, Packet: model.Packet{Type: 3, ID: 1, Topic: "t", SubIDs: []uint32{7, 257}}}},
	}
	for _, c := range cases {
		if got := c.rec.event(strs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestRecordPacking checks that the log's 48-byte record gives back every
// field of the record it was packed from, in each slot layout, and that a
// record whose strings fit no layout is kept whole.
func TestRecordPacking(t *testing.T) {
	if n := unsafe.Sizeof(crec{}); n != 48 {
		t.Errorf("crec is %d bytes, want 48", n)
	}
	strs := newStrTable()
	id := strs.id
	pkt := cpacket{typ: 3, id: 9, qos: 2, reason: 0x92, topic: id("t"), msg: id("m"), payload: id("pl"), filter: id("f"), flags: pktDup | pktClean}
	cases := []struct {
		name   string
		rec    hrec
		layout uint8
	}{
		{"event", hrec{kind: model.Accepted, time: 7, node: id("p1"), peer: id("broker"), msg: id("p1-1"), topic: id("t"), filter: id("f"), reason: id("r"),
			qos: 1, version: 5, receiveMax: 10, point: model.CrashInCallbackPre, flags: evRetain | evHadState}, layEvent},
		{"packet", hrec{kind: model.Sent, time: 8, node: id("p1"), peer: id("broker"), pkt: pkt}, layPacket},
		{"shared", hrec{kind: model.Delivered, time: 9, node: id("p2"), msg: id("m"), topic: id("t"), qos: 2, flags: evRetain, pkt: pkt}, layShared},
		{"spill", hrec{kind: model.Delivered, time: 10, node: id("p2"), msg: id("other"), topic: id("t"), pkt: pkt}, laySpill},
		{"spill reason", hrec{kind: model.Sent, reason: id("why"), pkt: pkt}, laySpill},
		{"spill expiry", hrec{kind: model.Sent, pkt: cpacket{typ: 3, id: 1, topic: id("t"), msg: id("m"), payload: id("m"), expiry: 30}}, laySpill},
		{"spill subids", hrec{kind: model.Sent, pkt: cpacket{typ: 3, id: 1, topic: id("t"), msg: id("m"), payload: id("m"), subids: id("\x07\x00\x00\x00")}}, laySpill},
	}
	var l histLog
	for _, c := range cases {
		packed := l.pack(&c.rec)
		if packed.layout != c.layout {
			t.Errorf("%s: layout %d, want %d", c.name, packed.layout, c.layout)
		}
		if got := l.unpack(&packed); got != c.rec {
			t.Errorf("%s: unpacked %+v, want %+v", c.name, got, c.rec)
		}
	}
}

// TestInternIDRecentCache interns strings that collide in the recent cache
// (one slot, many strings), through a buffer reused between calls as a
// decoder's would be, and checks every id against the first one its string
// got and every string against its id.
func TestInternIDRecentCache(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := &World{strs: newStrTable()}
		first := map[string]uint32{}
		buf := make([]byte, 0, 64)
		words := rapid.SliceOfN(rapid.StringMatching(`[a-c]{1,3}`), 1, 200).Draw(rt, "words")
		for _, s := range words {
			buf = append(buf[:0], s...)
			id := w.internID(buf)
			if want, ok := first[s]; ok && id != want {
				rt.Fatalf("%q got id %d, first %d", s, id, want)
			}
			first[s] = id
			if w.strs.strs[id] != s {
				rt.Fatalf("id %d spells %q, want %q", id, w.strs.strs[id], s)
			}
		}
		if len(w.strs.strs) != len(first)+1 {
			rt.Fatalf("%d strings kept for %d distinct ones", len(w.strs.strs)-1, len(first))
		}
	})
}

// TestCompactPacketFastPaths holds compactPacket's fast path for PUBACK, PUBREC,
// PUBREL and PUBCOMP equal to the record histpkt.Split's description gives.
func TestCompactPacketFastPaths(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		id := rapid.Uint16().Draw(rt, "id")
		rc := packet.ReasonCode(rapid.Uint8().Draw(rt, "rc"))
		pub := &packet.Publish{PacketID: id, QoS: packet.QoS(rapid.IntRange(0, 2).Draw(rt, "qos")),
			Dup: rapid.Bool().Draw(rt, "dup"), Retain: rapid.Bool().Draw(rt, "retain"),
			Topic: []byte(rapid.StringMatching(`[a-z/]{0,6}`).Draw(rt, "topic")), Payload: []byte(rapid.StringMatching(`[a-z0-9-]{0,6}`).Draw(rt, "payload"))}
		pub.Props.SubscriptionIDs = rapid.SliceOfN(rapid.Uint32Range(1, 268435455), 0, 3).Draw(rt, "subids")
		for _, p := range []packet.Packet{
			&packet.Puback{PacketID: id, Reason: rc}, &packet.Pubrec{PacketID: id, Reason: rc},
			&packet.Pubrel{PacketID: id, Reason: rc}, &packet.Pubcomp{PacketID: id, Reason: rc}, pub,
		} {
			w := &World{strs: newStrTable()}
			parts := histpkt.Split(p)
			s := parts.Scalars
			want := cpacket{id: s.ID, typ: s.Type, qos: s.QoS, reason: s.Reason, expiry: s.Expiry,
				flags: flagIf(s.Dup, pktDup) | flagIf(s.Retain, pktRetain) | flagIf(s.Sessions, pktSessions) | flagIf(s.Clean, pktClean)}
			if parts.Publish {
				want.topic, want.payload = w.internID(parts.Topic), w.internID(parts.Payload)
				want.msg = want.payload
				want.subids = w.subIDsID(s.SubIDs)
			}
			if got := w.compactPacket(p); got != want {
				rt.Fatalf("%T: compactPacket %+v, Split gives %+v", p, got, want)
			}
		}
	})
}
