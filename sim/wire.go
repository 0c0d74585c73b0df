package sim

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// ErrWireMismatch is wrapped by Result.Err when an engine's Send wrote bytes
// that do not decode to the packet it claimed to send (or do not decode at
// all, or hold more or less than one packet). The history records what the
// bytes say; the claim is only this cross-check.
var ErrWireMismatch = errors.New("sim: sent bytes differ from the engine's packet")

// wirePacket decodes the bytes a Send puts on the wire: the history records
// them, not the engine's claim. A PUBLISH or an acknowledgement decodes into
// the world's reused Decoder values without allocating. The CONNECT a
// client writes sets the connection's version. A Send whose bytes do not
// decode, hold more than one packet or disagree with a.Packet records the
// first such mismatch in w.wireErr; the run goes on with what the wire says.
func (w *World) wirePacket(n *node, c *conn, a *engine.Send) packet.Packet {
	d := &w.wire
	d.SetVersion(c.ver)
	d.Feed(a.Data)
	p, err := d.Next()
	if err == nil && p == nil {
		err = packet.ErrIncomplete
	}
	if err == nil {
		if rest, _ := d.Next(); rest != nil {
			err = fmt.Errorf("more than one packet in %d bytes", len(a.Data))
		}
	}
	if err != nil {
		d.Reset(0, 0)
		w.wireMismatch(n, fmt.Sprintf("%d bytes that do not decode as one packet (%v); the engine claimed %s", len(a.Data), err, claimName(a.Packet)))
		return a.Packet // nothing else to record; the run is already failed
	}
	if cp, ok := p.(*packet.Connect); ok {
		c.ver = cp.Version
	}
	if !w.sameClaim(c.ver, p, a) {
		w.wireMismatch(n, fmt.Sprintf("wrote %s where the engine claimed %s", describe(p), describe(a.Packet)))
	}
	return p
}

// wireMismatch records the first wire mismatch of the run.
func (w *World) wireMismatch(n *node, what string) {
	if w.wireErr == nil {
		w.wireErr = fmt.Errorf("%w: %s at %d: %s", ErrWireMismatch, n.name, w.sched.now, what)
	}
}

// sameClaim reports whether the decoded wire packet p is the engine's
// claimed packet a.Packet. PUBLISH and the acknowledgements, nearly every
// send, are compared field by field (their properties by presence); the
// rest by encoding the claim again (into the world's reused buffer) and
// comparing the bytes.
func (w *World) sameClaim(v packet.Version, p packet.Packet, a *engine.Send) bool {
	q := a.Packet
	switch p := p.(type) {
	case *packet.Publish:
		q, ok := q.(*packet.Publish)
		return ok && p.Dup == q.Dup && p.QoS == q.QoS && p.Retain == q.Retain && p.PacketID == q.PacketID &&
			bytes.Equal(p.Topic, q.Topic) && bytes.Equal(p.Payload, q.Payload) && p.Props.Present == q.Props.Present
	case *packet.Puback:
		q, ok := q.(*packet.Puback)
		return ok && sameAck(p, q)
	case *packet.Pubrec:
		q, ok := q.(*packet.Pubrec)
		return ok && sameAck((*packet.Puback)(p), (*packet.Puback)(q))
	case *packet.Pubrel:
		q, ok := q.(*packet.Pubrel)
		return ok && sameAck((*packet.Puback)(p), (*packet.Puback)(q))
	case *packet.Pubcomp:
		q, ok := q.(*packet.Pubcomp)
		return ok && sameAck((*packet.Puback)(p), (*packet.Puback)(q))
	}
	if q == nil {
		return false
	}
	var err error
	w.wireBuf, err = packet.Append(w.wireBuf[:0], v, q)
	return err == nil && bytes.Equal(w.wireBuf, a.Data)
}

// sameAck compares two acknowledgements of one type.
func sameAck(p, q *packet.Puback) bool {
	return q != nil && p.PacketID == q.PacketID && p.Reason == q.Reason && p.Props.Present == q.Props.Present
}

// claimName names the claimed packet's type.
func claimName(p packet.Packet) string {
	if p == nil {
		return "no packet"
	}
	return p.Type().String()
}

// describe prints a packet for a mismatch report.
func describe(p packet.Packet) string {
	if p == nil {
		return "no packet"
	}
	switch p := p.(type) {
	case *packet.Publish:
		return fmt.Sprintf("PUBLISH{id %d qos %d dup %t retain %t topic %q payload %q}", p.PacketID, p.QoS, p.Dup, p.Retain, p.Topic, p.Payload)
	case *packet.Puback:
		return fmt.Sprintf("PUBACK{id %d reason %#x}", p.PacketID, byte(p.Reason))
	case *packet.Pubrec:
		return fmt.Sprintf("PUBREC{id %d reason %#x}", p.PacketID, byte(p.Reason))
	case *packet.Pubrel:
		return fmt.Sprintf("PUBREL{id %d reason %#x}", p.PacketID, byte(p.Reason))
	case *packet.Pubcomp:
		return fmt.Sprintf("PUBCOMP{id %d reason %#x}", p.PacketID, byte(p.Reason))
	}
	return fmt.Sprintf("%s%+v", p.Type(), p)
}
