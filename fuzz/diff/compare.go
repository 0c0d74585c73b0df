package diff

import (
	"errors"
	"fmt"

	paho "github.com/eclipse/paho.golang/packets"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Disagreement is a difference between the two codecs that no known finding
// explains: the fuzz target fails on it.
type Disagreement struct {
	Input []byte
	What  string // which comparison failed
	Ours  string // engine/packet's reading (or its error)
	Peer  string // the peer's reading (or its error)
}

// Error formats the disagreement with both readings.
func (d *Disagreement) Error() string {
	return fmt.Sprintf("%s\n input % x\n ours: %s\n peer: %s", d.What, d.Input, d.Ours, d.Peer)
}

// Compare runs every comparison on one input and returns the first
// disagreement no known finding explains, or nil.
func Compare(b []byte) *Disagreement {
	oc, n, op, oerr := Ours(b)
	if oerr != nil {
		var pe *packet.Error
		if !errors.Is(oerr, packet.ErrIncomplete) && !errors.As(oerr, &pe) {
			return &Disagreement{Input: b, What: "engine/packet refused without a rule", Ours: oerr.Error()}
		}
		// The peer may accept: engine/packet names the rule the bytes break.
		return nil
	}
	if c, ok := op.(*packet.Connect); ok && c.Version != packet.V5 {
		return nil // the peer is an MQTT 5.0 codec: a 3.1.1 CONNECT is out of its scope
	}
	pc, cp, perr := Peer(b[:n])
	if perr != nil {
		if errors.Is(perr, ErrPeerPanic) || KnownPeerRefusal(op, b[:n]) == "" {
			return &Disagreement{Input: b, What: "engine/packet accepts, the peer refuses", Ours: oc, Peer: perr.Error()}
		}
		return nil
	}
	if !SameReading(oc, pc) {
		return &Disagreement{Input: b, What: "both accept, different packets", Ours: oc, Peer: pc}
	}
	if d := crossOursToPeer(b, op, oc); d != nil {
		return d
	}
	return crossPeerToOurs(b, cp, oc)
}

// crossOursToPeer re-encodes engine/packet's packet and has the peer read it.
func crossOursToPeer(in []byte, op packet.Packet, oc string) *Disagreement {
	enc, err := packet.Append(nil, packet.V5, op)
	if err != nil {
		return &Disagreement{Input: in, What: "engine/packet cannot re-encode what it decoded", Ours: err.Error()}
	}
	pc, _, perr := Peer(enc)
	if perr != nil && !errors.Is(perr, ErrPeerPanic) && KnownPeerRefusal(op, enc) != "" {
		return nil
	}
	if perr != nil {
		return &Disagreement{Input: in, What: "the peer refuses engine/packet's encoding", Ours: fmt.Sprintf("% x", enc), Peer: perr.Error()}
	}
	if !SameReading(oc, pc) {
		return &Disagreement{Input: in, What: "the peer reads engine/packet's encoding differently", Ours: oc, Peer: pc}
	}
	return nil
}

// crossPeerToOurs re-encodes the peer's packet and has engine/packet read it.
func crossPeerToOurs(in []byte, cp *paho.ControlPacket, oc string) *Disagreement {
	enc, err := PeerEncode(cp)
	if err != nil {
		return &Disagreement{Input: in, What: "the peer cannot re-encode what it decoded", Peer: err.Error()}
	}
	c2, _, _, err := Ours(enc)
	if err != nil {
		if f := KnownPeerEncoding(enc, err); f != "" {
			return nil
		}
		return &Disagreement{Input: in, What: "engine/packet refuses the peer's encoding", Ours: err.Error(), Peer: fmt.Sprintf("% x", enc)}
	}
	if !SameReencoded(oc, c2) {
		return &Disagreement{Input: in, What: "the peer's re-encoding changes the packet", Ours: oc, Peer: c2}
	}
	return nil
}
