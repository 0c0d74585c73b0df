package sim

import (
	"cmp"
	"slices"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// timedOp is a plan op to insert at a virtual time.
type timedOp struct {
	at engine.Time
	op Op
}

// randomCrashes returns the crashes of h at crash points (random or
// exhaustive mode; not the plan's own crashes, stops or state losses) as
// crash ops at their times, each followed by a restart op at the node's next
// restart when that came before the liveness phase (which restarts every
// node anyway). Sorted by time.
func randomCrashes(h model.History) []timedOp {
	var out []timedOp
	for i, e := range h.Events {
		if e.Kind == model.LivenessStart {
			break
		}
		if e.Kind != model.Crash || e.Point == model.CrashBetweenSteps || e.Point == model.CrashStop {
			continue
		}
		out = append(out, timedOp{at: engine.Time(e.Time), op: Op{Kind: OpCrash, Node: e.Node}})
		if at, ok := nextRestart(h.Events[i+1:], e.Node); ok {
			out = append(out, timedOp{at: at, op: Op{Kind: OpRestart, Node: e.Node}})
		}
	}
	slices.SortStableFunc(out, func(a, b timedOp) int { return cmp.Compare(a.at, b.at) })
	return out
}

// nextRestart returns the time of node's first restart in events, if it
// comes before the liveness phase.
func nextRestart(events []model.Event, node string) (engine.Time, bool) {
	for _, e := range events {
		switch {
		case e.Kind == model.LivenessStart:
			return 0, false
		case e.Kind == model.Restart && e.Node == node:
			return engine.Time(e.Time), true
		}
	}
	return 0, false
}

// insertTimed inserts each timed op (sorted by time) into ops at its
// virtual time: after every op applied at an earlier or the same time,
// splitting the advance that spans it. Ops timed after the plan's end go at
// its end.
func insertTimed(ops []Op, ins []timedOp) []Op {
	out := make([]Op, 0, len(ops)+2*len(ins))
	var now engine.Time
	k := 0
	for _, op := range ops {
		if op.Kind != OpAdvance {
			out = append(out, op)
			continue
		}
		end := now + engine.Time(op.D)
		for ; k < len(ins) && ins[k].at <= end; k++ {
			if ins[k].at > now {
				out = append(out, Op{Kind: OpAdvance, D: engine.Duration(ins[k].at - now)})
				now = ins[k].at
			}
			out = append(out, ins[k].op)
		}
		if end > now {
			out = append(out, Op{Kind: OpAdvance, D: engine.Duration(end - now)})
		}
		now = end
	}
	for ; k < len(ins); k++ {
		out = append(out, ins[k].op)
	}
	return out
}

// pinCrashes replaces the random crashes of the best plan's run by plan
// ops: a crash op where each crash point fired (and a restart op where the
// node came back), with crash points off (no crash-point probability, no
// exhaustive crash). All crashes at once first, then each alone. Random
// crash points make a failure fragile: deleting any earlier op shifts the
// draws and the crash lands elsewhere; a crash op stays where it is, and
// the deletions after it remove whatever the failure does not need.
func (s *shrinker) pinCrashes() {
	if len(s.crashes) == 0 {
		return
	}
	cfg := s.cfg
	p := s.resolvedProfile()
	p.CrashPointPPM = 0
	cfg.Custom, cfg.Crash = &p, CrashMode{}
	crashes := s.crashes
	if s.tryReroll(cfg, insertTimed(s.ops, crashes)) || len(crashes) <= 2 {
		return
	}
	for i, c := range crashes {
		if c.op.Kind != OpCrash {
			continue
		}
		one := []timedOp{c}
		if i+1 < len(crashes) && crashes[i+1].op.Kind == OpRestart && crashes[i+1].op.Node == c.op.Node {
			one = append(one, crashes[i+1])
		}
		if s.tryReroll(cfg, insertTimed(s.ops, one)) {
			return
		}
	}
}
