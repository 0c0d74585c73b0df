package brokerfuzz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mqttlab/mqttlab/internal/mosquittotest"
)

// readCase reads a case file of testdata/.
func readCase(t *testing.T, path string) Case {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseCase(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// TestJudgeNotMisled: the shapes of the hour-long runs' false findings are
// not judged (testdata/judge/): a watched copy of a marker that a valid
// packet of the case also carries is not attributed to the refused packet,
// and a bridge CONNECT (level 0x84) is not judged; a refused packet with a
// marker of its own still is.
func TestJudgeNotMisled(t *testing.T) {
	for _, name := range []string{"forwarded-repeated-marker.case", "forwarded-completed-marker.case"} {
		e := expectOf(readCase(t, filepath.Join("judge", name)))
		if ce := e.conns[2]; ce == nil || !ce.judged() || !e.valid[ce.marker] || e.attributable(ce) {
			t.Errorf("%s: conn 2's refused packet is attributed, though a valid packet carries its marker: %+v", name, ce)
		}
	}
	e := expectOf(readCase(t, "judge/bridge-level.case"))
	for conn, ce := range e.conns {
		if ce.refused < 0 || ce.judged() || !ce.bridge {
			t.Errorf("bridge-level.case: conn %d: refused %d, judged %v, bridge %v; want a refusal that is not judged", conn, ce.refused, ce.judged(), ce.bridge)
		}
	}
	wild := Case{Steps: []Step{{Conn: 1, Version: 4, Data: conn4}, {Conn: 1, Version: 4, Data: rawPublish(4, 0x02, "fz/#", 9, nil, "fzm-9-1")}}}
	if e := expectOf(wild); !e.conns[1].judged() || !e.attributable(e.conns[1]) {
		t.Errorf("a wildcard PUBLISH with a marker of its own is not judged as forwardable")
	}
	if bridgeLevel(conn4) || bridgeLevel(conn5) {
		t.Errorf("levels 4 and 5 read as bridge levels")
	}
}

// TestJudgeReplays: the three cases replay clean against our broker and
// mosquitto (each was a false finding of fuzz-broker's first hour-long
// runs).
func TestJudgeReplays(t *testing.T) {
	m := mosquittotest.Start(t, mosquittotest.Options{})
	targets := []Target{serveOurs(t, ""), {Name: "mosquitto", Addr: m.Addr}}
	for _, name := range []string{"forwarded-repeated-marker.case", "forwarded-completed-marker.case", "bridge-level.case"} {
		c := readCase(t, filepath.Join("judge", name))
		for _, tg := range targets {
			if vs, err := Replay(tg, c, quick); err != nil || len(vs) != 0 {
				t.Errorf("%s against %s: %v %v", name, tg.Name, vs, err)
			}
		}
	}
}
