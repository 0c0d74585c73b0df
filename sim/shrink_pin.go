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

// randomFaults returns the faults of h that its run drew at random, as plan
// ops at their times, sorted by time: crashes at crash points (random or
// exhaustive mode; not the plan's own crashes, stops or state losses), each
// followed by a restart op at the node's next restart when that came before
// the liveness phase (which restarts every node anyway), and connection
// resets and half-open connections (not those of the plan's own reset and
// half-open ops, planned).
func randomFaults(h model.History, planned map[timedOp]int, armedOps []timedOp) (crashes, resets []timedOp) {
	for i, e := range h.Events {
		if e.Kind == model.LivenessStart {
			break
		}
		switch {
		case e.Kind == model.Cut && (e.Reason == "reset" || e.Reason == "half-open"):
			kind := OpReset
			if e.Reason == "half-open" {
				kind = OpHalfOpen
			}
			r := timedOp{at: engine.Time(e.Time), op: Op{Kind: kind, Node: e.Node}}
			if planned[r] > 0 {
				planned[r]--
				continue
			}
			resets = append(resets, r)
		case e.Kind != model.Crash || e.Point == model.CrashBetweenSteps || e.Point == model.CrashStop:
		case consumeArmed(armedOps, e):
		default:
			crashes = append(crashes, timedOp{at: engine.Time(e.Time), op: Op{Kind: OpCrash, Node: e.Node, Point: e.Point}})
			if at, ok := nextRestart(h.Events[i+1:], e.Node); ok {
				crashes = append(crashes, timedOp{at: at, op: Op{Kind: OpRestart, Node: e.Node}})
			}
		}
	}
	byTime := func(a, b timedOp) int { return cmp.Compare(a.at, b.at) }
	slices.SortStableFunc(crashes, byTime)
	slices.SortStableFunc(resets, byTime)
	return crashes, resets
}

// noteFaults keeps the random faults of the best plan's run r (of ops):
// its crashes at crash points when crash points could fire at random (a
// crash-point probability, or exhaustive mode), its resets when the profile
// resets at random (not those of reset ops). Otherwise every such fault came
// from a plan op, and pinning it again would only add ops.
func (s *shrinker) noteFaults(r Result, ops []Op) {
	p := s.resolvedProfile()
	crashes, resets := randomFaults(r.History(), plannedResets(ops), armedOps(ops))
	s.crashes, s.resets = nil, nil
	if p.CrashPointPPM > 0 || s.cfg.Crash.Exhaustive() {
		s.crashes = crashes
	}
	for _, r := range resets {
		if r.op.Kind == OpReset && p.ResetPPM > 0 || r.op.Kind == OpHalfOpen && p.HalfOpenPPM > 0 {
			s.resets = append(s.resets, r)
		}
	}
}

// armedOps returns the crash ops of ops armed for a crash point, at their
// times.
func armedOps(ops []Op) []timedOp {
	var out []timedOp
	var now engine.Time
	for _, op := range ops {
		switch {
		case op.Kind == OpAdvance:
			now += engine.Time(op.D)
		case op.Kind == OpCrash && op.Point != 0:
			out = append(out, timedOp{at: now, op: op})
		}
	}
	return out
}

// consumeArmed reports whether crash event e is the crash of an armed op
// of armed (the first of its node and point armed at or before it), and
// marks that op fired.
func consumeArmed(armed []timedOp, e model.Event) bool {
	for i := range armed {
		a := &armed[i]
		if a.op.Kind == OpCrash && a.op.Node == e.Node && a.op.Point == e.Point && a.at <= engine.Time(e.Time) {
			a.op.Kind = 0 // fired
			return true
		}
	}
	return false
}

// plannedResets counts the reset and half-open ops of a plan by time, kind
// and node.
func plannedResets(ops []Op) map[timedOp]int {
	out := map[timedOp]int{}
	var now engine.Time
	for _, op := range ops {
		switch op.Kind {
		case OpAdvance:
			now += engine.Time(op.D)
		case OpReset, OpHalfOpen:
			out[timedOp{at: now, op: Op{Kind: op.Kind, Node: op.Node}}]++
		}
	}
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

// maxPinned is how many random faults of each kind pinFaults also tries
// one at a time.
const maxPinned = 6

// pinFaults replaces random faults of the best plan's run by plan ops, with
// that kind of random fault off (crash-point probability zero, no
// exhaustive crash; reset or half-open probability zero): a reset op where
// a connection was reset, a half-open op where one went silent (told the
// client, then told the broker: the history does not say which side the
// network told), and for a crash at a crash point either a crash op armed for
// that kind of point just before its time (the node crashes at its next
// such point and restarts as after a random one) or, failing that, a crash
// op between steps and a restart op where the node came back. It tries
// every fault at once, the crashes alone, the cuts alone, then each of the
// first few alone. Random faults make a failure fragile: deleting any
// earlier op shifts the draws and the fault lands elsewhere; a plan op
// stays where it is, and the deletions after it remove whatever the failure
// does not need.
func (s *shrinker) pinFaults() {
	if len(s.crashes)+len(s.resets) == 0 {
		return
	}
	tolds := []uint8{0}
	if slices.ContainsFunc(s.resets, func(r timedOp) bool { return r.op.Kind == OpHalfOpen }) {
		tolds = []uint8{1, 2} // the network's half-open tells the client or the broker
	}
	for _, crashes := range [][]timedOp{armed(s.crashes), between(s.crashes)} {
		for _, told := range tolds {
			if s.pinVariants(crashes, withTold(s.resets, told)) {
				return
			}
		}
		if len(s.crashes) == 0 {
			break
		}
	}
	if !s.pinnedExact {
		// Once: pin every fault with the random faults left on. The run is
		// the same (an armed crash makes the draw its random one made; a
		// reset or half-open op finds the connection already cut), so it
		// fails the same way; later deletions keep the pinned faults, and the
		// fault profile pass turns the random ones off when they no longer
		// matter.
		s.pinnedExact = true
		s.tryExact(armed(s.crashes), withTold(s.resets, 1))
	}
}

// pinVariants tries crashes and resets pinned: all, each kind alone, then
// each of the first few alone.
func (s *shrinker) pinVariants(crashes, resets []timedOp) bool {
	cands := [][2][]timedOp{{crashes, resets}}
	if len(crashes) > 0 && len(resets) > 0 {
		cands = append(cands, [2][]timedOp{crashes, nil}, [2][]timedOp{nil, resets})
	}
	for _, one := range singles(crashes) {
		cands = append(cands, [2][]timedOp{one, nil})
	}
	for _, one := range singles(resets) {
		cands = append(cands, [2][]timedOp{nil, one})
	}
	for _, c := range cands {
		if s.tryPinned(c[0], c[1]) {
			return true
		}
	}
	return false
}

// withTold returns cuts with every half-open op's told side set.
func withTold(cuts []timedOp, told uint8) []timedOp {
	out := slices.Clone(cuts)
	for i := range out {
		if out[i].op.Kind == OpHalfOpen {
			out[i].op.Told = told
		}
	}
	return out
}

// armed returns crashes as crash ops armed for their crash point 1ns
// before it fired, without restart ops (an armed crash restarts by itself).
func armed(crashes []timedOp) []timedOp {
	var out []timedOp
	for _, c := range crashes {
		if c.op.Kind == OpCrash {
			c.at = max(c.at-1, 0)
			out = append(out, c)
		}
	}
	return out
}

// between returns crashes as crash ops between steps, with their restarts.
func between(crashes []timedOp) []timedOp {
	out := slices.Clone(crashes)
	for i := range out {
		out[i].op.Point = 0
	}
	return out
}

// singles returns the first maxPinned faults of ops one by one (a crash
// with its restart), when there is more than one.
func singles(ops []timedOp) [][]timedOp {
	var out [][]timedOp
	for i, c := range ops {
		if c.op.Kind == OpRestart || len(out) == maxPinned {
			continue
		}
		one := []timedOp{c}
		for _, r := range ops[i+1:] {
			if r.op.Kind == OpRestart && r.op.Node == c.op.Node {
				one = append(one, r)
				break
			}
		}
		out = append(out, one)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// tryExact tries the best plan with crashes and cuts as plan ops and its
// config unchanged.
func (s *shrinker) tryExact(crashes, cuts []timedOp) bool {
	ins := append(slices.Clone(crashes), cuts...)
	slices.SortStableFunc(ins, func(a, b timedOp) int { return cmp.Compare(a.at, b.at) })
	return s.try(s.cfg, insertTimed(s.ops, ins))
}

// tryPinned tries the best plan with the given crashes and resets as plan
// ops, the random faults of each kind pinned turned off.
func (s *shrinker) tryPinned(crashes, resets []timedOp) bool {
	cfg := s.cfg
	p := s.resolvedProfile()
	if len(crashes) > 0 {
		p.CrashPointPPM = 0
		cfg.Crash = CrashMode{}
	}
	for _, r := range resets {
		if r.op.Kind == OpReset {
			p.ResetPPM = 0
		} else {
			p.HalfOpenPPM = 0
		}
	}
	cfg.Custom = &p
	ins := append(slices.Clone(crashes), resets...)
	slices.SortStableFunc(ins, func(a, b timedOp) int { return cmp.Compare(a.at, b.at) })
	return s.tryReroll(cfg, insertTimed(s.ops, ins))
}
