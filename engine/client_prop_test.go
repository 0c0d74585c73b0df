package engine

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
	"pgregory.net/rapid"
)

// drawBrokerBytes draws what a (possibly hostile) broker sends: a valid
// packet with ids in a small range, so they hit the client's flows, or
// random bytes.
func drawBrokerBytes(t *rapid.T, v packet.Version) []byte {
	id := uint16(rapid.IntRange(1, 4).Draw(t, "id"))
	rc := packet.ReasonCode(rapid.SampledFrom([]byte{0, 0, 0x10, 0x80, 0x97}).Draw(t, "rc")) // valid in PUBACK/PUBREC
	relRC := packet.ReasonCode(rapid.SampledFrom([]byte{0, 0x92}).Draw(t, "relrc"))          // valid in PUBREL/PUBCOMP
	if v == packet.V311 {
		rc, relRC = 0, 0
	}
	var p packet.Packet
	switch rapid.IntRange(0, 10).Draw(t, "kind") {
	case 0:
		return rapid.SliceOfN(rapid.Byte(), 1, 12).Draw(t, "raw")
	case 1:
		p = &packet.Connack{SessionPresent: rapid.Bool().Draw(t, "sp") && rc == 0, Reason: rc &^ 0x10}
	case 2:
		q := packet.QoS(rapid.IntRange(0, 2).Draw(t, "q"))
		pid := id
		if q == 0 {
			pid = 0
		}
		p = &packet.Publish{QoS: q, PacketID: pid, Dup: q > 0 && rapid.Bool().Draw(t, "dup"), Topic: []byte("a"), Payload: []byte("x")}
	case 3:
		p = &packet.Puback{PacketID: id, Reason: rc}
	case 4:
		p = &packet.Pubrec{PacketID: id, Reason: rc}
	case 5:
		p = &packet.Pubrel{PacketID: id, Reason: relRC}
	case 6:
		p = &packet.Pubcomp{PacketID: id, Reason: relRC}
	case 7:
		p = &packet.Suback{PacketID: id, Reasons: []packet.ReasonCode{1}}
	case 8:
		p = &packet.Pingresp{}
	case 9:
		if v == packet.V5 {
			p = &packet.Disconnect{Reason: packet.ServerShuttingDown}
		} else {
			p = &packet.Pingresp{}
		}
	default:
		p = &packet.Unsuback{PacketID: id}
		if v == packet.V5 {
			p = &packet.Unsuback{PacketID: id, Reasons: []packet.ReasonCode{0}}
		}
	}
	b, err := packet.Append(nil, v, p)
	if err != nil {
		t.Fatalf("encoding %s: %v", p.Type(), err)
	}
	if rapid.IntRange(0, 9).Draw(t, "split") == 0 && len(b) > 1 {
		return b[:len(b)-1] // a partial packet: the rest never comes
	}
	return b
}

// drawPeerPacket draws a well-behaved broker packet for the client's state:
// an ack for an id in flight, or a PUBLISH.
func drawPeerPacket(t *rapid.T, v packet.Version, c *Client) []byte {
	var p packet.Packet = &packet.Publish{QoS: 2, PacketID: uint16(rapid.IntRange(1, 3).Draw(t, "pid")), Topic: []byte("a")}
	if len(c.out.order) > 0 && rapid.Bool().Draw(t, "ack") {
		m := rapid.SampledFrom(c.out.order).Draw(t, "msg")
		switch {
		case m.state == coReleased:
			p = &packet.Pubcomp{PacketID: m.id}
		case m.pkt.QoS == 2:
			p = &packet.Pubrec{PacketID: m.id}
		default:
			p = &packet.Puback{PacketID: m.id}
		}
	} else if ids := c.in.sortedRelIDs(); len(ids) > 0 && rapid.Bool().Draw(t, "rel") {
		p = &packet.Pubrel{PacketID: rapid.SampledFrom(ids).Draw(t, "relid")}
	}
	b, err := packet.Append(nil, v, p)
	if err != nil {
		t.Fatalf("encoding %s: %v", p.Type(), err)
	}
	return b
}

// TestClientProperties drives random event sequences under every preset and
// both versions and checks the client never panics and keeps its
// invariants: every Send decodes, is on the current connection and leaves
// only while connected (CONNECT while connecting); in-flight ids are unique
// and claimed; the send quota is never exceeded by PUBLISHes; a stuck
// client sends nothing.
func TestClientProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		preset := rapid.SampledFrom(Presets()).Draw(t, "preset")
		cfg := DefaultClientConfig("c1", preset.Client)
		cfg.KeepAlive = 5
		if rapid.Bool().Draw(t, "v311") {
			cfg.Version, cfg.SessionExpiry = packet.V311, 0
			cfg.InflightWindow = uint16(rapid.IntRange(1, 3).Draw(t, "window"))
		}
		h := newHarness(t, cfg)
		var nextConn ConnID
		var cmd CmdID
		var maxDelivery DeliveryID
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			h.now += Time(rapid.IntRange(0, 3).Draw(t, "dt")) * Time(Second)
			cmd++
			var ev Event
			switch rapid.IntRange(-1, 11).Draw(t, "event") {
			case -1: // a whole connection setup in one go
				clean := rapid.IntRange(0, 4).Draw(t, "clean") == 0
				h.step(Connect{Cmd: cmd, CleanStart: clean})
				nextConn++
				h.conn = nextConn
				h.step(ConnOpened{Conn: h.conn})
				ack, _ := packet.Append(nil, cfg.Version, &packet.Connack{SessionPresent: !clean && rapid.Bool().Draw(t, "sp")})
				ev = BytesReceived{Conn: h.conn, Data: ack}
			case 0:
				ev = Connect{Cmd: cmd, CleanStart: rapid.IntRange(0, 4).Draw(t, "clean") == 0}
			case 1:
				nextConn++
				h.conn = nextConn
				ev = ConnOpened{Conn: h.conn}
			case 2:
				ev = ConnClosed{Conn: h.conn}
			case 3, 4, 5:
				ev = BytesReceived{Conn: h.conn, Data: drawBrokerBytes(t, cfg.Version)}
				if c := h.c; c.stuck == nil && c.state == csConnected && rapid.IntRange(0, 3).Draw(t, "valid") > 0 {
					ev = BytesReceived{Conn: h.conn, Data: drawPeerPacket(t, cfg.Version, c)}
				}
			case 6:
				ev = TimerFired{Timer: TimerID(rapid.IntRange(1, 3).Draw(t, "timer"))}
			case 7, 8:
				ev = Publish{Cmd: cmd, Topic: "t", Payload: []byte{byte(i)}, QoS: packet.QoS(rapid.IntRange(0, 2).Draw(t, "pq"))}
			case 9:
				ev = Subscribe{Cmd: cmd, Subs: []packet.Subscription{{Filter: "a/#", QoS: 1}}}
			case 10:
				ev = Ack{Delivery: DeliveryID(rapid.IntRange(0, int(maxDelivery)+1).Draw(t, "did"))}
			default:
				if rapid.Bool().Draw(t, "reboot") {
					h.reboot()
					continue
				}
				ev = Disconnect{Cmd: cmd}
			}
			wasStuck := h.c.Stuck() != nil
			stateBefore := h.c.state
			acts := h.step(ev)
			for _, a := range acts {
				switch a := a.(type) {
				case Send:
					p, n, err := packet.Decode(cfg.Version, a.Data, 0)
					if err != nil || n != len(a.Data) {
						t.Fatalf("step %d: Send does not decode: %v", i, err)
					}
					if wasStuck {
						t.Fatalf("step %d: a stuck client sent %s", i, p.Type())
					}
					if a.Conn != h.c.conn && a.Conn != h.conn {
						t.Fatalf("step %d: Send on connection %d, current %d", i, a.Conn, h.c.conn)
					}
					if p.Type() == packet.CONNECT && stateBefore != csDialing {
						t.Fatalf("step %d: CONNECT in state %d", i, stateBefore)
					}
				case Deliver:
					maxDelivery = max(maxDelivery, a.Delivery)
				}
			}
			checkClientInvariants(t, h.c)
		}
	})
}

func checkClientInvariants(t *rapid.T, c *Client) {
	o := &c.out
	seen := map[uint16]bool{}
	published := 0
	for i, m := range o.order {
		if seen[m.id] {
			t.Fatalf("packet id %d owned twice", m.id)
		}
		seen[m.id] = true
		if !o.ids.InUse(m.id) || o.byID.get(m.id) != m {
			t.Fatalf("message id %d not claimed or not indexed", m.id)
		}
		if i > 0 && o.order[i-1].seq >= m.seq {
			t.Fatalf("messages out of sequence order")
		}
		if m.counted && m.state == coPublished {
			published++
		}
	}
	if o.byID.len() != len(o.order) {
		t.Fatalf("%d indexed, %d owned", o.byID.len(), len(o.order))
	}
	if c.state == csConnected && published > o.quotaMax {
		t.Fatalf("%d PUBLISHes in flight over a quota of %d", published, o.quotaMax)
	}
	if o.quota > o.quotaMax {
		t.Fatalf("quota %d above its maximum %d", o.quota, o.quotaMax)
	}
}
