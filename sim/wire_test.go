package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// liarEngine wraps an engine and rewrites the bytes of its n-th Send
// (counted from 1) of packet type typ with edit, leaving the claimed packet
// alone: a bug that builds the right packet but writes other bytes.
type liarEngine struct {
	Engine
	typ  packet.Type
	n    *int
	edit func([]byte) []byte
}

func (e liarEngine) Step(now engine.Time, ev engine.Event) []engine.Action {
	acts := e.Engine.Step(now, ev)
	for i, a := range acts {
		s, ok := a.(engine.Send)
		if !ok || s.Packet == nil || s.Packet.Type() != e.typ {
			continue
		}
		if *e.n--; *e.n == 0 {
			s.Data = e.edit(append([]byte(nil), s.Data...))
			acts[i] = s
		}
	}
	return acts
}

// liarFactory builds the real engines; node name lies on its n-th Send of
// typ.
func liarFactory(name string, typ packet.Type, n int, edit func([]byte) []byte) engineFactory {
	left := n
	return func(spec NodeSpec, restored []engine.Record) (Engine, error) {
		eng, err := defaultFactory(spec, restored)
		if err != nil || spec.Name != name {
			return eng, err
		}
		return liarEngine{Engine: eng, typ: typ, n: &left, edit: edit}, nil
	}
}

// TestWireMismatchCanary: an engine that writes other bytes than the packet
// it claims fails the run loudly (ErrWireMismatch naming both), whether the
// bytes decode to another packet or to nothing; the history records what
// the wire carried.
func TestWireMismatchCanary(t *testing.T) {
	cases := []struct {
		name, node string
		typ        packet.Type
		edit       func([]byte) []byte
		want       string
	}{
		{"publish dup bit", "p1", packet.PUBLISH, func(b []byte) []byte { b[0] |= 0x08; return b }, "dup true"},
		{"puback id", BrokerName, packet.PUBACK, func(b []byte) []byte { b[3] ^= 2; return b }, "PUBACK{id"},
		{"connack session present", BrokerName, packet.CONNACK, func(b []byte) []byte { b[2] ^= 1; return b }, "CONNACK"},
		{"truncated", "p1", packet.PUBLISH, func(b []byte) []byte { return b[:len(b)-1] }, "do not decode"},
		{"two packets", "p1", packet.PUBLISH, func(b []byte) []byte { return append(b, b...) }, "more than one packet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Seed: 1, factory: liarFactory(c.node, c.typ, 1, c.edit)}
			plan, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := Run(cfg, plan)
			if !errors.Is(r.Err, ErrWireMismatch) {
				t.Fatalf("got %v, want ErrWireMismatch", r.Err)
			}
			if !strings.Contains(r.Err.Error(), c.want) || !strings.Contains(r.Err.Error(), c.node) {
				t.Errorf("error %q does not name %q and %s", r.Err, c.want, c.node)
			}
		})
	}
}

// TestWireRecordsTheBytes: the history's Sent PUBLISH is what the wire
// carried (DUP set by the bytes), not the engine's claim.
func TestWireRecordsTheBytes(t *testing.T) {
	cfg := Config{Seed: 1, factory: liarFactory("p1", packet.PUBLISH, 1, func(b []byte) []byte { b[0] |= 0x08; return b })}
	plan, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(cfg, plan)
	for _, e := range r.History().Events {
		if e.Kind == model.Sent && e.Node == "p1" && e.Packet.Type == model.PUBLISH {
			if !e.Packet.Dup {
				t.Fatalf("first Sent PUBLISH of p1 recorded DUP=0; the wire carried DUP=1: %+v", e.Packet)
			}
			return
		}
	}
	t.Fatal("p1 sent no PUBLISH")
}
