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
// to answer); they are reported at the step the PUBREL was received. A
// history cut while still progressing (Cutoff) owes only the PUBRELs
// received before a later one the node answered: those after its last
// answer were still in flight at the cut.
func CheckPubrelAnswered(h *History) []Violation { return checkPubrelAnswered(newIndex(h)) }

// pubrelEvents are the events checkPubrelAnswered reads.
var pubrelEvents = eventSet{
	kinds:    kindBits(ConnClosed, ConnOpened, Crash),
	sent:     typeBits(PUBCOMP, CONNECT, CONNACK),
	received: typeBits(PUBREL),
}.codes()

func checkPubrelAnswered(x *index) []Violation {
	// pending, per receiver->sender direction: id -> step received.
	pending := newDirTab[idSteps](x)
	// answered, per direction on a cut history: the receipt step of the
	// latest PUBREL answered (Cutoff).
	answered := map[[2]int32]int{}
	for i, k := range x.kinds {
		if !pubrelEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		switch e.Kind {
		case Received:
			if e.Packet.Type == PUBREL {
				ids := pending.at(d.node, d.peer)
				ids.reserve(int(x.maxID[d.peer]) + 1) // PUBREL ids are the peer's PUBLISH ids
				if _, ok := ids.get(e.Packet.ID); !ok {
					ids.set(e.Packet.ID, i)
				}
			}
		case Sent:
			switch e.Packet.Type {
			case PUBCOMP:
				ids := pending.at(d.node, d.peer)
				if r, ok := ids.get(e.Packet.ID); ok && x.cutoff {
					k := [2]int32{d.node, d.peer}
					answered[k] = max(answered[k], r)
				}
				ids.del(e.Packet.ID)
			case CONNECT, CONNACK: // a new connection: the old one ended
				pending.at(d.node, d.peer).reset()
			}
		case ConnClosed, ConnOpened:
			pending.at(d.node, x.peerOf(i)).reset()
		case Crash:
			pending.row(d.node, func(_ int32, ids *idSteps) { ids.reset() })
		}
	}
	if x.liveness < 0 {
		return nil
	}
	var out []Violation
	pending.each(func(from, to int32, ids *idSteps) {
		ids.each(func(id uint16, step int) {
			if a, ok := answered[[2]int32{from, to}]; x.cutoff && (!ok || step > a) {
				return // still in flight when the history was cut: unfinished (Cutoff)
			}
			out = append(out, NewViolation(PubrelAnswered, step, x.nodes[from],
				fmt.Sprintf("PUBREL id %d from %s never answered with PUBCOMP while the connection stayed open [MQTT-4.3.3-11]", id, x.nodes[to]),
				x.liveness))
		})
	})
	// Each PUBREL received left at most one pending id: steps are distinct.
	sort.Slice(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out
}
