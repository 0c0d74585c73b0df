package model

import (
	"fmt"
	"sort"
)

// CheckPubrelAnswered checks invariant 4: every PUBREL a node receives is
// answered by a PUBCOMP with the same id, sent by that node to the same peer
// while the connection stays open [MQTT-4.3.3-11] (v3.1.1 [MQTT-4.3.3-2]).
// The end of the connection (ConnClosed, ConnOpened, a crash of the node, or
// the node sending CONNECT/CONNACK for a new connection) excuses a pending answer: the sender resends the PUBREL after reconnecting
// and that one must be answered. Unanswered PUBRELs left at the end of the
// history are violations only if the liveness phase ran (the world had time
// to answer); they are reported at the step the PUBREL was received.
func CheckPubrelAnswered(h *History) []Violation {
	pending := map[dir]map[uint16]int{} // receiver->sender -> id -> step received
	for i := range h.Events {
		e := &h.Events[i]
		switch e.Kind {
		case Received:
			if e.Packet.Type == PUBREL {
				d := dir{e.Node, e.Peer}
				if pending[d] == nil {
					pending[d] = map[uint16]int{}
				}
				if _, ok := pending[d][e.Packet.ID]; !ok {
					pending[d][e.Packet.ID] = i
				}
			}
		case Sent:
			switch e.Packet.Type {
			case PUBCOMP:
				delete(pending[dir{e.Node, e.Peer}], e.Packet.ID)
			case CONNECT, CONNACK: // a new connection: the old one ended
				delete(pending, dir{e.Node, e.Peer})
			}
		case ConnClosed, ConnOpened:
			delete(pending, dir{e.Node, peerOf(e)})
		case Crash:
			for d := range pending {
				if d.from == e.Node {
					delete(pending, d)
				}
			}
		}
	}
	if livenessStart(h) < 0 {
		return nil
	}
	var out []Violation
	for d, ids := range pending {
		for id, step := range ids {
			out = append(out, Violation{Step: step, Invariant: PubrelAnswered, Node: d.from,
				Reason: fmt.Sprintf("PUBREL id %d from %s never answered with PUBCOMP while the connection stayed open [MQTT-4.3.3-11]", id, d.to)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out
}
