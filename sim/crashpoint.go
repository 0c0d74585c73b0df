package sim

import (
	"fmt"
	"strings"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// crashPointNames are the text names of the crash points a crash op can
// be armed for (point=NAME).
var crashPointNames = [...]string{
	model.CrashBeforeAction:   "before-action",
	model.CrashAfterAction:    "after-action",
	model.CrashInCallbackPre:  "callback-pre",
	model.CrashInCallbackPost: "callback-post",
}

// crashPointName returns the text name of an armable crash point.
func crashPointName(p model.CrashPoint) string {
	if int(p) < len(crashPointNames) && crashPointNames[p] != "" {
		return crashPointNames[p]
	}
	return fmt.Sprintf("point(%d)", uint8(p))
}

// parseCrashPoint reads the name of an armable crash point.
func parseCrashPoint(s string) (model.CrashPoint, error) {
	for p, name := range crashPointNames {
		if name != "" && name == s {
			return model.CrashPoint(p), nil
		}
	}
	return 0, fmt.Errorf("crash point %q is not one of before-action, after-action, callback-pre, callback-post", s)
}

// arm makes n crash at its next crash point of kind p in the safety phase.
func (w *World) arm(n *node, p model.CrashPoint, skip uint8) {
	n.armed, n.armedSkip = p, skip
	w.tr.begin(w.sched.now, n.name, "armed")
	w.tr.str(" point=", crashPointName(p))
	w.tr.end()
}

// toldNames are the text names of a half-open op's told side (Op.Told).
var toldNames = [...]string{1: "client", 2: "broker"}

// parseTold reads a half-open op's told side.
func parseTold(s string) (uint8, error) {
	for i, name := range toldNames {
		if name != "" && name == s {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("told %q is not client or broker", s)
}

// toldSide returns the connection side an Op.Told names (2: neither).
func toldSide(told uint8) uint8 {
	switch told {
	case 1:
		return sideClient
	case 2:
		return sideBroker
	}
	return 2
}

// halfOpenClient makes client n's connection silent, if it has one still
// open, as the network's half-open fault does; told (Op.Told) says which
// side is told it closed.
func (w *World) halfOpenClient(n *node, told uint8) {
	if c := w.getConn(n.app.conn); c != nil && !c.reset && !c.blackhole {
		w.halfOpen(c, toldSide(told))
	}
}

// packetTypeName is the text name of an MQTT control packet type a reset or
// half-open op can be armed for (on=pubcomp): the standard's name in lower
// case.
func packetTypeName(t uint8) string { return strings.ToLower(packet.Type(t).String()) }

// parsePacketType reads the name of a packet type, CONNECT to AUTH.
func parsePacketType(s string) (uint8, error) {
	for t := packet.CONNECT; t <= packet.AUTH; t++ {
		if packetTypeName(uint8(t)) == s {
			return uint8(t), nil
		}
	}
	return 0, fmt.Errorf("packet type %q is not one of connect, connack, publish, puback, pubrec, pubrel, pubcomp, subscribe, suback, unsubscribe, unsuback, pingreq, pingresp, disconnect, auth", s)
}

// armCut arms client n's link to cut as op (a reset or half-open with
// On) says: at the next packet of type op.On sent on its connection after
// op.Skip others.
func (w *World) armCut(n *node, op Op) {
	n.cut = armedCut{kind: op.Kind, told: op.Told, on: op.On, skip: op.Skip}
	w.tr.begin(w.sched.now, n.name, "armed")
	w.tr.str(" on=", packetTypeName(op.On))
	w.tr.end()
}

// armedCut is a reset or half-open armed for a packet type (Op.On).
type armedCut struct {
	kind OpKind // OpReset or OpHalfOpen; 0: none armed
	told uint8  // a half-open's Op.Told
	on   uint8  // the packet type
	skip uint8  // packets of the type still to let pass
}

// cutArmed cuts c, and reports so, when its client's link is armed for a
// packet of type typ: it makes the draws the network's faults make on a
// packet that cuts it (so an armed cut where a random one fired replays
// that run exactly), then resets or half-opens c.
func (w *World) cutArmed(c *conn, typ uint8) bool {
	n := w.nodes[c.client]
	a := n.cut
	if a.kind == 0 || a.on != typ {
		return false
	}
	if a.skip > 0 {
		n.cut.skip--
		return false
	}
	n.cut = armedCut{}
	w.rnd.PPM(w.prof.ResetPPM)
	if a.kind == OpReset {
		w.reset(c)
		return true
	}
	w.rnd.PPM(w.prof.HalfOpenPPM)
	w.rnd.IntN(2)
	w.halfOpen(c, toldSide(a.told))
	return true
}
