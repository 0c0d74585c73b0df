package diff

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// TestFindings proves each listed finding is real: engine/packet accepts
// its example, the peer reads it differently (or refuses it, or drops part
// of it when re-encoding), and only the finding's allowance makes Compare
// pass.
func TestFindings(t *testing.T) {
	for _, f := range Findings {
		b := unhex(t, f.Example)
		oc, n, op, err := Ours(b)
		if err != nil || n != len(b) {
			t.Fatalf("%s: engine/packet refuses its example: %v", f.ID, err)
		}
		pc, cp, perr := Peer(b)
		var differs bool
		switch {
		case perr != nil:
			differs = KnownPeerRefusal(op, b) == f.ID
		case pc != oc:
			differs = SameReading(oc, pc)
		default:
			enc, err := PeerEncode(cp)
			if err != nil {
				t.Fatalf("%s: the peer cannot re-encode: %v", f.ID, err)
			}
			c2, _, _, err := Ours(enc)
			differs = err == nil && c2 != oc && SameReencoded(oc, c2)
		}
		if !differs {
			t.Errorf("%s: its example no longer shows the finding (ours %q, peer %q, %v): remove it from Findings and docs/findings.md", f.ID, oc, pc, perr)
		}
		if d := Compare(b); d != nil {
			t.Errorf("%s: Compare fails on its example: %v", f.ID, d)
		}
	}
}

// TestComparisonsCatchOtherDifferences is the comparators' canary: a
// difference that no finding explains is never excused.
func TestComparisonsCatchOtherDifferences(t *testing.T) {
	for _, c := range []struct{ ours, peer string }{
		{`type=3 dup=false qos=1 retain=false pid=7 topic="t" payload="x"`, `type=3 dup=false qos=2 retain=false pid=7 topic="t" payload="x"`},
		{`type=3 dup=false qos=1 retain=false pid=7 topic="t" payload="x"`, `type=3 dup=false qos=1 retain=false pid=7 topic="t" payload="y"`},
		{`type=2 sp=false reason=0 p31="a"`, `type=2 sp=false reason=0`},
		{`type=3 dup=false qos=0 retain=false pid=0 topic="t" payload="" p11=1 p11=2`, `type=3 dup=false qos=0 retain=false pid=0 topic="t" payload="" p11=1`},
		{`type=4 pid=1 reason=16 p38="a\x00b"`, `type=4 pid=1 reason=16`},
	} {
		if SameReading(c.ours, c.peer) || SameReencoded(c.ours, c.peer) {
			t.Errorf("excused: ours %s, peer %s", c.ours, c.peer)
		}
	}
	if KnownPeerRefusal(&packet.Disconnect{Reason: packet.DisconnectWithWill}, unhex(t, "e0 01 04")) != "" {
		t.Error("a peer refusal of a DISCONNECT with a reason code is excused")
	}
}

// leniency is one input engine/packet refuses under a normative rule and the
// peer accepts: a check the peer does not make.
type leniency struct {
	name, hex, rule string
}

// peerLeniency lists the rules the peer does not check; docs/fuzzing.md lists them.
var peerLeniency = []leniency{
	{"wildcard in a PUBLISH Topic Name", "30 06 00 03 61 2f 2b 00", "MQTT-3.3.2-2"},
	{"PUBLISH with QoS 3", "36 06 00 01 74 00 01 00", "MQTT-3.3.1-4"},
	{"PUBREL with fixed-header flags 0", "60 02 00 01", "MQTT-2.1.3-1"},
	{"SUBSCRIBE with no Topic Filter", "82 03 00 01 00", "MQTT-3.8.3-2"},
	{"PUBLISH with a property included twice", "30 08 00 01 74 04 01 00 01 00", "§2.2.2.2"},
	{"Topic Name that is not UTF-8", "30 04 00 01 ff 00", "MQTT-1.5.4-1"},
	{"PUBLISH QoS 1 with Packet Identifier 0", "32 06 00 01 74 00 00 00", "MQTT-2.2.1-3"},
}

// TestPeerLeniency pins the peer's missing checks: engine/packet refuses each
// input under its rule, the peer accepts it, and Compare passes (the refusal
// side names its rule).
func TestPeerLeniency(t *testing.T) {
	for _, l := range peerLeniency {
		b := unhex(t, l.hex)
		_, _, _, err := Ours(b)
		var pe *packet.Error
		if !errors.As(err, &pe) || pe.Rule != l.rule {
			t.Errorf("%s: engine/packet gives %v, want a refusal under %s", l.name, err, l.rule)
		}
		if _, _, perr := Peer(b); perr != nil {
			t.Errorf("%s: the peer now refuses it (%v): drop it from the list and docs/fuzzing.md", l.name, perr)
		}
		if d := Compare(b); d != nil {
			t.Errorf("%s: %v", l.name, d)
		}
	}
}
