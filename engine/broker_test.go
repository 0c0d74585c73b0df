package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"pgregory.net/rapid"
)

// run executes script lines in w and returns the actions rendered by the last.
func (w *bsWorld) run(lines ...string) []string {
	w.t.Helper()
	for _, l := range lines {
		w.got = nil
		if err := w.exec(l); err != nil {
			w.t.Fatalf("%s: %v", l, err)
		}
	}
	return w.got
}

// TestSeedUnknownPubrelBroker: seed coremqtt-unknown-pubrel-0x92 on the
// broker side. With UnknownAckAnswer a PUBREL for an unknown id is answered
// PUBCOMP (0x92 in v5) and the connection stays usable [MQTT-4.3.3-11]; an
// unknown PUBREC gets PUBREL 0x92. The legacy policy fails the connection.
func TestSeedUnknownPubrelBroker(t *testing.T) {
	cases := []struct {
		name, version, policy, packet string
		want                          []string
		alive                         bool
	}{
		{"v5-pubrel-answer", "v5", "answer", "pubrel c 9", []string{"c <- PUBCOMP id=9 rc=0x92"}, true},
		{"v311-pubrel-answer", "v311", "answer", "pubrel c 9", []string{"c <- PUBCOMP id=9"}, true},
		{"v5-pubrec-answer", "v5", "answer", "pubrec c 9", []string{"c <- PUBREL id=9 rc=0x92"}, true},
		{"v311-pubrec-answer", "v311", "answer", "pubrec c 9", []string{"c <- PUBREL id=9"}, true},
		{"v5-pubrel-legacy", "v5", "fail", "pubrel c 9", []string{"close c !"}, false},
		{"v311-pubrec-legacy", "v311", "fail", "pubrec c 9", []string{"close c !"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newBsWorld(t)
			w.run("config pubrel="+tc.policy+" pubrec="+tc.policy, "open c", "connect c "+tc.version+" id=c clean")
			if got := w.run(tc.packet); !slices.Equal(got, tc.want) {
				t.Fatalf("%s: got %q, want %q", tc.packet, got, tc.want)
			}
			got := w.run("pingreq c")
			if alive := slices.Equal(got, []string{"c <- PINGRESP"}); alive != tc.alive {
				t.Fatalf("after the unknown ack the connection answers PINGREQ: %v, want %v (%q)", alive, tc.alive, got)
			}
			if st := w.b.Stats(); st.Inflight != 0 || st.Sessions != b2n(tc.alive) {
				t.Fatalf("the answer created state: %+v", st)
			}
		})
	}
}

func b2n(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBrokerUnknownAckError checks the legacy close carries a clear error.
func TestBrokerUnknownAckError(t *testing.T) {
	b, err := NewBroker(DefaultBrokerConfig(BrokerPolicy{Persistence: LegacyPersistNone,
		UnknownPubrel: LegacyUnknownAckFail, UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback}), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Step(0, ConnOpened{Conn: 1})
	b.Step(0, BytesReceived{Conn: 1, Data: mustAppend(t, packet.V5, &packet.Connect{Version: packet.V5, ClientID: "x", CleanStart: true})})
	acts := b.Step(0, BytesReceived{Conn: 1, Data: mustAppend(t, packet.V5, &packet.Pubrel{PacketID: 4})})
	if len(acts) != 1 {
		t.Fatalf("got %d actions, want one CloseConn: %#v", len(acts), acts)
	}
	cc, ok := acts[0].(CloseConn)
	if !ok || !errors.Is(cc.Reason, ErrBrokerUnknownAck) || !strings.Contains(cc.Reason.Error(), "PUBREL for unknown packet id 4") {
		t.Fatalf("got %#v, want CloseConn wrapping ErrBrokerUnknownAck", acts[0])
	}
}

func mustAppend(t testing.TB, v packet.Version, p packet.Packet) []byte {
	t.Helper()
	b, err := packet.Append(nil, v, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBrokerConfigValidate: each invalid field is reported, wrapping
// ErrBrokerConfig and naming the field.
func TestBrokerConfigValidate(t *testing.T) {
	good := DefaultBrokerConfig(BrokerPolicy{Persistence: PersistEveryChange, UnknownPubrel: UnknownAckAnswer,
		UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback})
	if _, err := NewBroker(good, nil); err != nil {
		t.Fatalf("default config refused: %v", err)
	}
	cases := []struct {
		field string
		edit  func(c *BrokerConfig)
	}{
		{"Persistence", func(c *BrokerConfig) { c.Policy.Persistence = 0 }},
		{"SnapshotEvery", func(c *BrokerConfig) { c.Policy.Persistence = PersistPeriodic }},
		{"UnknownPubrel", func(c *BrokerConfig) { c.Policy.UnknownPubrel = 9 }},
		{"UnknownPubrec", func(c *BrokerConfig) { c.Policy.UnknownPubrec = 0 }},
		{"AckOrder", func(c *BrokerConfig) { c.Policy.AckOrder = 0 }},
		{"MaxPacketSize", func(c *BrokerConfig) { c.MaxPacketSize = 10 }},
		{"ReceiveMaximum", func(c *BrokerConfig) { c.ReceiveMaximum = 0 }},
		{"InflightV311", func(c *BrokerConfig) { c.InflightV311 = 0 }},
		{"MaxQueued", func(c *BrokerConfig) { c.MaxQueued = 0 }},
		{"QueueFull", func(c *BrokerConfig) { c.QueueFull = 7 }},
		{"AssignedIDPrefix", func(c *BrokerConfig) { c.AssignedIDPrefix = "" }},
	}
	for _, tc := range cases {
		c := good
		tc.edit(&c)
		_, err := NewBroker(c, nil)
		if !errors.Is(err, ErrBrokerConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: got %v, want an ErrBrokerConfig naming the field", tc.field, err)
		}
	}
}

// TestTopicMatch is the table of filter matching rules [MQTT-4.7.1-2]
// [MQTT-4.7.1-3] [MQTT-4.7.2-1], checked on the tree and on filterMatches.
func TestTopicMatch(t *testing.T) {
	cases := []struct {
		filter, topic string
		match         bool
	}{
		{"a/b", "a/b", true},
		{"a/b", "a/c", false},
		{"a/+", "a/b", true},
		{"a/+", "a", false},
		{"a/+", "a/b/c", false},
		{"a/#", "a", true},
		{"a/#", "a/b/c", true},
		{"#", "a/b", true},
		{"#", "$SYS/x", false},
		{"+/x", "$SYS/x", false},
		{"$SYS/#", "$SYS/x", true},
		{"$SYS/+", "$SYS/x", true},
		{"+", "", false},
		{"+/+", "/x", true},
		{"a//b", "a//b", true},
		{"+", "a/", false},
		{"a/+", "a/", true},
		{"sport/tennis/#", "sport/tennis", true},
		{"sport/+/player", "sport/tennis/player", true},
	}
	for _, tc := range cases {
		var tree topicTree
		tree.add(tc.filter, &brokerSession{id: "c"}, subOptions{QoS: 1})
		got := len(tree.match([]byte(tc.topic), nil)) == 1
		if got != tc.match {
			t.Errorf("tree: %q matches %q = %v, want %v", tc.filter, tc.topic, got, tc.match)
		}
		if got := filterMatches(tc.filter, []byte(tc.topic)); got != tc.match {
			t.Errorf("filterMatches(%q, %q) = %v, want %v", tc.filter, tc.topic, got, tc.match)
		}
	}
}

// TestTopicTreeProperty: for random filters and topics the tree returns
// exactly the clients whose filter matches (by filterMatches), once each, in
// client order, and removing every subscription empties the tree.
func TestTopicTreeProperty(t *testing.T) {
	level := rapid.SampledFrom([]string{"a", "b", "", "$x"})
	rapid.Check(t, func(t *rapid.T) {
		var tree topicTree
		filters := map[string][]string{} // client -> filters
		n := rapid.IntRange(1, 8).Draw(t, "subs")
		for i := range n {
			parts := rapid.SliceOfN(rapid.OneOf(level, rapid.Just("+")), 1, 3).Draw(t, "levels")
			if rapid.Bool().Draw(t, "hash") {
				parts = append(parts, "#")
			}
			f := strings.Join(parts, "/")
			if !validFilter(f) {
				continue
			}
			c := fmt.Sprintf("c%d", i%3)
			tree.add(f, &brokerSession{id: c}, subOptions{QoS: packet.QoS(i % 3)})
			filters[c] = append(filters[c], f)
		}
		topic := strings.Join(rapid.SliceOfN(level, 1, 4).Draw(t, "topic"), "/")
		var want []string
		for _, c := range sortedKeys(filters) {
			for _, f := range filters[c] {
				if filterMatches(f, []byte(topic)) {
					want = append(want, c)
					break
				}
			}
		}
		var got []string
		for _, m := range tree.match([]byte(topic), nil) {
			got = append(got, m.client)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("topic %q, filters %v: tree %v, want %v", topic, filters, got, want)
		}
		for c, fs := range filters {
			for _, f := range fs {
				tree.remove(f, c)
			}
		}
		if len(tree.root.children) != 0 || len(tree.root.subs) != 0 || tree.root.plus != nil || tree.root.hash != nil {
			t.Fatalf("tree not empty after removing everything: %+v", tree.root)
		}
	})
}

// TestBrokerRecordsCorrupt: a record that does not decode is an error that
// wraps ErrBrokerRecord and names its key.
func TestBrokerRecordsCorrupt(t *testing.T) {
	w := newBsWorld(t)
	w.run("config persistence=every", "open s", "connect s v5 id=sub expiry=100", "subscribe s 1 t:1",
		"open p", "connect p v5 id=pub expiry=100", "publish p q2 id=1 retain t m", "close s", "publish p q1 id=2 t n")
	keys := sortedKeys(w.synced)
	for _, prefix := range []string{prefixSession, prefixSub, prefixOut, prefixInbound, prefixRetained} {
		if !slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, prefix) }) {
			t.Fatalf("no %s record in %v", prefix, keys)
		}
	}
	recs := func(edit func(k string, v []byte) (string, []byte)) []Record {
		var out []Record
		for _, k := range keys {
			nk, nv := edit(k, append([]byte(nil), w.synced[k]...))
			out = append(out, Record{Key: nk, Value: nv})
		}
		return out
	}
	b, err := NewBroker(w.cfg, recs(func(k string, v []byte) (string, []byte) { return k, v }))
	if err != nil {
		t.Fatalf("intact records refused: %v", err)
	}
	if st := b.Stats(); st.Sessions != 2 || st.Inflight != 1 || st.Queued != 1 || st.Retained != 1 {
		t.Fatalf("restored stats %+v", st)
	}
	for _, victim := range keys {
		for name, edit := range map[string]func([]byte) []byte{
			"truncated": func(v []byte) []byte { return v[:len(v)-1] },
			"trailing":  func(v []byte) []byte { return append(v, 0) },
			"empty":     func([]byte) []byte { return nil },
		} {
			_, err := NewBroker(w.cfg, recs(func(k string, v []byte) (string, []byte) {
				if k == victim {
					return k, edit(v)
				}
				return k, v
			}))
			if !errors.Is(err, ErrBrokerRecord) || !strings.Contains(err.Error(), fmt.Sprintf("%q", victim)) {
				t.Errorf("%s %s: got %v, want ErrBrokerRecord naming the key", name, victim, err)
			}
		}
	}
	_, err = NewBroker(w.cfg, []Record{{Key: "b/zz", Value: []byte{1}}})
	if !errors.Is(err, ErrBrokerRecord) || !strings.Contains(err.Error(), `"b/zz"`) {
		t.Errorf("unknown key: got %v", err)
	}
}

// TestBrokerDeterministicFanout: many subscribers, matched through several
// wildcard filters, always receive in client-id order, identically on every
// run (map order never leaks).
func TestBrokerDeterministicFanout(t *testing.T) {
	script := []string{"open p", "connect p v5 id=pub clean"}
	for i := range 12 {
		c := fmt.Sprintf("s%02d", (i*7)%12)
		script = append(script, "open "+c, "connect "+c+" v311 id="+c+" clean",
			"subscribe "+c+" 1 a/+:1 #:0 a/b:1")
	}
	var first []string
	for run := range 10 {
		w := newBsWorld(t)
		got := w.run(append(script, "publish p q1 id=1 a/b x")...)
		if run == 0 {
			first = got
			for i := range 12 {
				want := fmt.Sprintf("s%02d <- PUBLISH q1 id=1 a/b \"x\"", i)
				if got[i] != want {
					t.Fatalf("delivery %d: %q, want %q (all: %q)", i, got[i], want, got)
				}
			}
			continue
		}
		if !slices.Equal(got, first) {
			t.Fatalf("run %d differs:\n%q\n%q", run, got, first)
		}
	}
}

// TestBrokerHostileBytes: random bytes on several connections, before and
// after a valid CONNECT, never panic; every connection the broker closes
// stays closed.
func TestBrokerHostileBytes(t *testing.T) {
	connect := map[packet.Version][]byte{}
	for _, v := range []packet.Version{packet.V311, packet.V5} {
		b, err := packet.Append(nil, v, &packet.Connect{Version: v, ClientID: "h", KeepAlive: 5})
		if err != nil {
			t.Fatal(err)
		}
		connect[v] = b
	}
	rapid.Check(t, func(t *rapid.T) {
		b, err := NewBroker(DefaultBrokerConfig(BrokerPolicy{Persistence: PersistEveryChange, UnknownPubrel: UnknownAckAnswer,
			UnknownPubrec: UnknownAckAnswer, AckOrder: AckAfterCallback}), nil)
		if err != nil {
			t.Fatal(err)
		}
		closed := map[ConnID]bool{}
		now := Time(0)
		for i := range rapid.IntRange(1, 30).Draw(t, "events") {
			conn := ConnID(rapid.IntRange(1, 3).Draw(t, "conn"))
			now += Time(rapid.Int64Range(0, 10*Second).Draw(t, "dt"))
			var ev Event
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0:
				ev, closed[conn] = ConnOpened{Conn: conn}, false
			case 1:
				ev = ConnClosed{Conn: conn}
			case 2:
				ev = BytesReceived{Conn: conn, Data: connect[rapid.SampledFrom([]packet.Version{packet.V311, packet.V5}).Draw(t, "v")]}
			case 3:
				ev = TimerFired{Timer: TimerID(rapid.IntRange(1, 10).Draw(t, "timer"))}
			default:
				ev = BytesReceived{Conn: conn, Data: rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, fmt.Sprint("bytes", i))}
			}
			for _, a := range b.Step(now, ev) {
				switch a := a.(type) {
				case Send:
					if closed[a.Conn] {
						t.Fatalf("Send on connection %d after the broker closed it", a.Conn)
					}
				case CloseConn:
					closed[a.Conn] = true
				}
			}
		}
	})
}
