package brokerfuzz

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// conn4 and conn5 are valid CONNECTs of client id "t".
var (
	conn4 = rawConnect(connectFields{protoName: "MQTT", level: 4, flags: 2, keepAlive: 60, clientID: "t"})
	conn5 = rawConnect(connectFields{protoName: "MQTT", level: 5, flags: 2, keepAlive: 60, clientID: "t"})
)

// TestExpect: the codec's verdict on hand-written cases: which step is
// refused, for which rule, the refused packet's type and id, and the
// requests that must be answered.
func TestExpect(t *testing.T) {
	pub1 := rawPublish(4, 0x02, "fz/a", 7, nil, "fzm-1-1")
	for _, c := range []struct {
		name     string
		steps    [][]byte
		refused  int
		rule     string
		typ      packet.Type
		id       uint16
		requests []packet.Type
	}{
		{"valid session", [][]byte{conn4, pub1, {0xc0, 0}, rawSubscribe(4, 0x82, 8, nil, []string{"fz/#"}, []byte{1})}, -1, "", 0, 0,
			[]packet.Type{packet.CONNACK, packet.PUBACK, packet.PINGRESP, packet.SUBACK}},
		{"wildcard topic", [][]byte{conn4, rawPublish(4, 0x02, "fz/#", 9, nil, "fzm-1-1")}, 1, "MQTT-3.3.2-2", packet.PUBLISH, 9,
			[]packet.Type{packet.CONNACK}},
		{"before CONNECT", [][]byte{{0xc0, 0}, conn4}, 0, "MQTT-3.1.0-1", packet.PINGREQ, 0, nil},
		{"second CONNECT", [][]byte{conn5, conn5}, 1, "MQTT-3.1.0-2", packet.CONNECT, 0, []packet.Type{packet.CONNACK}},
		{"subscribe flags", [][]byte{conn4, rawSubscribe(4, 0x80, 3, nil, []string{"a"}, []byte{0})}, 1, "MQTT-2.2.2-1", packet.SUBSCRIBE, 3,
			[]packet.Type{packet.CONNACK}},
		// A CONNECT whose client id claims two bytes more than it has takes
		// the next step's first two bytes; the refused packet is what
		// follows them (type 0), not the step's CONNECT.
		{"packet across steps", [][]byte{conn4[:len(conn4)-1], append([]byte{'t', 0x00, 0x00}, pub1...)}, 1, "", packet.Type(0), 0,
			[]packet.Type{packet.CONNACK}},
		{"after DISCONNECT nothing is judged", [][]byte{conn4, {0xe0, 0}, {0x00, 0x00}}, -1, "", 0, 0, []packet.Type{packet.CONNACK}},
	} {
		var cs Case
		for _, d := range c.steps {
			cs.Steps = append(cs.Steps, Step{Conn: 1, Version: 4, Data: d})
		}
		ce := expectOf(cs).conns[1]
		var reqs []packet.Type
		for _, q := range ce.requests {
			reqs = append(reqs, q.want)
		}
		if ce.refused != c.refused || c.rule != "" && ce.rule != c.rule || ce.refused >= 0 && ce.typ != c.typ || c.id != 0 && ce.id != c.id || !reflect.DeepEqual(reqs, c.requests) {
			t.Errorf("%s: refused step %d [%s] %s id %d, requests %v; want step %d [%s] %s id %d, requests %v",
				c.name, ce.refused, ce.rule, ce.typ, ce.id, reqs, c.refused, c.rule, c.typ, c.id, c.requests)
		}
	}
}

// TestNormative: only refusals citing a normative statement are judged.
func TestNormative(t *testing.T) {
	for rule, want := range map[string]bool{"MQTT-3.3.2-2": true, "MQTT-4.8.0-1": true, "§2.2.3": false, "§3.12.1": false, "": false} {
		if normative(rule) != want {
			t.Errorf("normative(%q) = %v", rule, !want)
		}
	}
}

// TestCaseFile: a case survives its replay format, and bad files are
// refused naming the line.
func TestCaseFile(t *testing.T) {
	for seed := range uint64(50) {
		c := Generate(seed)
		got, err := ParseCase(strings.NewReader(c.String()))
		if err != nil || !reflect.DeepEqual(got.Steps, c.Steps) || got.Seed != c.Seed {
			t.Fatalf("seed %d: round trip: %v\n%s", seed, err, c)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"", "no step"},
		{"step 1 4 zz", "line 1: bytes \"zz\" are not hex"},
		{"# c\nstep 0 4 00", "line 2: connection \"0\""},
		{"step 1 7 00", "version \"7\""},
		{"stop 1 4 00", "line 1: want \"step CONN VERSION HEX\""},
	} {
		if _, err := ParseCase(strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestGenerate: the same seed gives the same case; cases use one to three
// connections, each starting with a CONNECT unless mutated before it; and
// over many seeds the codec refuses a good share, for many rules.
func TestGenerate(t *testing.T) {
	rules := map[string]bool{}
	refused := 0
	for seed := range uint64(2000) {
		a, b := Generate(seed), Generate(seed)
		if a.String() != b.String() {
			t.Fatalf("seed %d: two cases", seed)
		}
		if n := a.Conns(); n < 1 || n > 3 {
			t.Fatalf("seed %d: %d connections", seed, n)
		}
		for _, ce := range expectOf(a).conns {
			if ce.refused >= 0 {
				refused++
				rules[ce.rule] = true
			}
		}
	}
	if refused < 1000 || len(rules) < 25 {
		t.Errorf("2000 cases: %d refusals, %d distinct rules; the generator lost its reach", refused, len(rules))
	}
}

// TestRawID reads packet ids from raw (even malformed) bytes.
func TestRawID(t *testing.T) {
	for _, c := range []struct {
		hex string
		id  uint16
		ok  bool
	}{
		{"3209000466 7a2f61 0007 78", 7, true}, // PUBLISH QoS 1 "fz/a" id 7
		{"300600047a2f6178", 0, false},         // QoS 0: no id
		{"820600 05 0001 61 00", 5, true},      // SUBSCRIBE id 5
		{"c000", 0, false},
	} {
		b, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		if id, ok := rawID(b); id != c.id || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.hex, id, ok, c.id, c.ok)
		}
	}
}

// TestWholePacket: a refused packet is judged only once all its bytes were
// sent (or its fixed header is malformed in itself).
func TestWholePacket(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want bool
	}{
		{[]byte{0x23}, false},                        // a header byte alone
		{[]byte{0xf2, 0xc0, 0x00}, false},            // 64 bytes announced, none sent
		{[]byte{0xc2, 0x00}, true},                   // PINGREQ with flags: whole
		{[]byte{0x30, 0x03, 0, 1, '#'}, true},        // PUBLISH "#": whole
		{[]byte{0xc0, 0x80, 0x80, 0x80, 0x80}, true}, // a fifth Remaining Length byte is due
		{[]byte{0xc0, 0x80, 0x80}, false},            // the Remaining Length is not over yet
		{[]byte{0x30, 0x05, 0, 3, 'a', '/', '#'}, true},
	} {
		if got := wholePacket(c.data); got != c.want {
			t.Errorf("% x: %v, want %v", c.data, got, c.want)
		}
	}
}
