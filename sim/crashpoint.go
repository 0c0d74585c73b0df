package sim

import (
	"fmt"

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
func (w *World) arm(n *node, p model.CrashPoint) {
	n.armed = p
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

// halfOpenClient makes client n's connection silent, if it has one still
// open, as the network's half-open fault does; told (Op.Told) says which
// side is told it closed.
func (w *World) halfOpenClient(n *node, told uint8) {
	side := uint8(2) // neither
	switch told {
	case 1:
		side = sideClient
	case 2:
		side = sideBroker
	}
	if c := w.getConn(n.app.conn); c != nil && !c.reset && !c.blackhole {
		w.halfOpen(c, side)
	}
}
