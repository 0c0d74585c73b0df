package sim

import "github.com/mqttlab/mqttlab/model"

// The re-aiming deletions. An armed fault (a crash op with point=, a reset
// or half-open op with on=) fires at the skip+1-th crash point or packet of
// its kind after it is armed. Deleting any op that makes crash points or
// packets (a connect, a publish, a whole idle client, the other crash)
// shifts which one that is, so in a plan already shrunk to a few dozen ops
// every single deletion, with any of the other seeds too, loses the failure:
// the fault now fires one action or packet early or late. deleteReaim tries
// each deletion again with one armed fault re-aimed: every other skip up to
// reaimSkips and, for a crash, the other side of an action (before-action
// and after-action). half-delete seed 22 stopped at 31 ops with no single
// deletion (nor pair of deletions) failing under 65 seeds; 10 of its single
// deletions fail again with its second crash re-aimed.

// reaimLimit is the plan size up to which deleteReaim runs: it costs up to
// 2*reaimSkips runs per deletion and armed fault, so it runs once the
// other passes have left a small plan.
const reaimLimit = 64

// reaimSkips bounds the skips deleteReaim tries (0..reaimSkips-1).
const reaimSkips = 32

// deleteReaim deletes, from the end of the plan to its start, every op of
// one declared client, then each single op, each time trying every re-aim
// of each armed fault left (the last first) until a candidate fails. It
// runs only in the last stage (the plain deletions and their other seeds
// found nothing more) and on plans of at most reaimLimit ops. The
// candidates run with the plan's seed only.
func (s *shrinker) deleteReaim() {
	if s.stage != len(reseedTries)-1 || len(s.ops) > reaimLimit {
		return
	}
	names := s.clientNames()
	for k := len(names) - 1; k >= 0 && !s.stopped; k-- {
		name := names[k]
		if ops, dropped := filtered(s.ops, func(o Op) bool { return o.Node != name }); dropped {
			s.tryReaimed(ops)
		}
	}
	for i := len(s.ops) - 1; i >= 0 && !s.stopped; i-- {
		if i < len(s.ops) {
			s.tryReaimed(without(s.ops, i, i+1))
		}
	}
}

// tryReaimed tries ops with each re-aim of each of its armed faults, the
// last fault first, and reports whether one was accepted. ops itself (not
// re-aimed) was tried by the plain deletions.
func (s *shrinker) tryReaimed(ops []Op) bool {
	if ValidatePlan(s.cfg, Plan{Ops: ops}) != nil {
		s.invalid++
		return false
	}
	for a := len(ops) - 1; a >= 0; a-- {
		for _, v := range reaims(ops[a]) {
			if s.stopped {
				return false
			}
			if s.tryOps(replaced(ops, a, v)) {
				return true
			}
		}
	}
	return false
}

// reaims returns the re-aimed variants of an armed fault (none for another
// op): each skip below reaimSkips other than its own, the nearest first,
// and for a crash the same skips at the other side of an action.
func reaims(op Op) []Op {
	var points []model.CrashPoint
	switch {
	case op.Kind == OpCrash && op.Point != 0:
		points = append(points, op.Point)
		switch op.Point {
		case model.CrashBeforeAction:
			points = append(points, model.CrashAfterAction)
		case model.CrashAfterAction:
			points = append(points, model.CrashBeforeAction)
		}
	case (op.Kind == OpReset || op.Kind == OpHalfOpen) && op.On != 0:
		points = append(points, 0)
	default:
		return nil
	}
	var out []Op
	for _, p := range points {
		for _, skip := range nearestFirst(int(op.Skip), reaimSkips) {
			v := op
			v.Skip = uint8(skip)
			if op.Point != 0 {
				v.Point = p
			}
			if v != op {
				out = append(out, v)
			}
		}
	}
	return out
}

// nearestFirst returns 0..n-1 ordered by distance from x, the lower one
// first at equal distance.
func nearestFirst(x, n int) []int {
	out := make([]int, 0, n)
	for d := 0; len(out) < n; d++ {
		if lo := x - d; lo >= 0 && lo < n {
			out = append(out, lo)
		}
		if hi := x + d; d > 0 && hi < n {
			out = append(out, hi)
		}
		if x-d < 0 && x+d >= n {
			break
		}
	}
	return out
}
