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
// exhaustive mode; not the plan's own crashes, stops or state losses, nor
// those of its armed crash ops), each with the points of its kind to skip
// (skips: Result.crashSkips) and followed by a restart op at the node's next
// restart when that came before the liveness phase (which restarts every
// node anyway), and connection resets and half-open connections, each with
// the packet whose sending cut it (not those of the plan's own reset and
// half-open ops: planned at their times, armedCuts armed).
func randomFaults(h model.History, skips []uint8, planned map[timedOp]int, armedCrashes, armedCuts []timedOp) (crashes, resets []timedOp) {
	points := 0 // crashes at crash points so far: indexes skips
	for i, e := range h.Events {
		if e.Kind == model.LivenessStart {
			break
		}
		switch {
		case e.Kind == model.Cut && (e.Reason == "reset" || e.Reason == "half-open"):
			if r, ok := randomCut(h.Events, i, planned, armedCuts); ok {
				resets = append(resets, r)
			}
		case e.Kind != model.Crash || e.Point == model.CrashBetweenSteps || e.Point == model.CrashStop:
		default:
			c := timedOp{at: engine.Time(e.Time), op: Op{Kind: OpCrash, Node: e.Node, Point: e.Point}}
			if points < len(skips) {
				c.op.Skip = skips[points]
			}
			points++
			if consumeArmed(armedCrashes, c) {
				continue
			}
			crashes = append(crashes, c)
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
	armedCrashes, armedCuts := armedOps(ops)
	crashes, resets := randomFaults(r.History(), r.crashSkips, plannedResets(ops), armedCrashes, armedCuts)
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

// randomCut returns the cut of events[i] (a Cut event) as a reset or
// half-open op armed for the packet that cut it, unless a plan op made it.
func randomCut(events []model.Event, i int, planned map[timedOp]int, armedCuts []timedOp) (timedOp, bool) {
	e := events[i]
	kind := OpReset
	if e.Reason == "half-open" {
		kind = OpHalfOpen
	}
	r := timedOp{at: engine.Time(e.Time), op: Op{Kind: kind, Node: e.Node}}
	if planned[r] > 0 {
		planned[r]--
		return timedOp{}, false
	}
	r.op.On, r.op.Skip = cutPacket(events[:i], e)
	if kind == OpHalfOpen {
		r.op.Told = toldOf(events[i+1:], e.Node)
	}
	if r.op.On != 0 && consumeArmed(armedCuts, r) {
		return timedOp{}, false
	}
	return r, true
}

// armedOps returns the ops of ops that armed a fault (crash ops armed for
// a crash point, and reset and half-open ops armed for a packet type), at
// their times.
func armedOps(ops []Op) (crashes, cuts []timedOp) {
	var now engine.Time
	for _, op := range ops {
		switch {
		case op.Kind == OpAdvance:
			now += engine.Time(op.D)
		case op.Kind == OpCrash && op.Point != 0:
			crashes = append(crashes, timedOp{at: now, op: op})
		case (op.Kind == OpReset || op.Kind == OpHalfOpen) && op.On != 0:
			cuts = append(cuts, timedOp{at: now, op: Op{Kind: op.Kind, Node: op.Node, On: op.On}})
		}
	}
	return crashes, cuts
}

// consumeArmed reports whether fault f (a crash at its point, a cut on
// its packet type) is the fault of an armed op of armed (the first of its
// kind, node and point or packet type armed at or before it), and marks
// that op fired.
func consumeArmed(armed []timedOp, f timedOp) bool {
	for i := range armed {
		a := &armed[i]
		if a.op.Kind == f.op.Kind && a.op.Node == f.op.Node && a.op.Point == f.op.Point && a.op.On == f.op.On && a.at <= f.at {
			a.op.Kind = 0 // fired
			return true
		}
	}
	return false
}

// toldOf returns the side a half-open connection of client told first
// (Op.Told: 1 the client, 2 the broker), from the events after its cut: the
// first ConnClosed on the client's connection; 1 when there is none.
func toldOf(after []model.Event, client string) uint8 {
	for _, e := range after {
		switch {
		case e.Kind == model.LivenessStart:
			return 1
		case e.Kind == model.ConnClosed && e.Node == client:
			return 1
		case e.Kind == model.ConnClosed && e.Peer == client:
			return 2
		}
	}
	return 1
}

// cutPacket returns the type of the packet whose sending cut a connection
// at event cut (the last event before it, a Sent on the cut client's
// connection at the same time), or 0, and how many packets of that type
// were sent on the connection at that time (or 1ns before) before it: an
// op armed 1ns before the cut skips those.
func cutPacket(before []model.Event, cut model.Event) (typ, skip uint8) {
	on := func(e model.Event) bool {
		return e.Kind == model.Sent && (e.Node == cut.Node || e.Peer == cut.Node)
	}
	if len(before) == 0 || !on(before[len(before)-1]) || before[len(before)-1].Time != cut.Time {
		return 0, 0
	}
	typ = before[len(before)-1].Packet.Type
	for i := len(before) - 2; i >= 0 && before[i].Time >= cut.Time-1; i-- {
		if on(before[i]) && before[i].Packet.Type == typ && skip < 255 {
			skip++
		}
	}
	return typ, skip
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
			if op.On == 0 {
				out[timedOp{at: now, op: Op{Kind: op.Kind, Node: op.Node}}]++
			}
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
		tolds = []uint8{0, 1, 2} // as the run told, then the client or the broker
	}
	cutss := [][]timedOp{armedCuts(s.resets)}
	if timed := timedCuts(s.resets); !slices.Equal(timed, cutss[0]) {
		cutss = append(cutss, timed)
	}
	for _, crashes := range [][]timedOp{armed(s.crashes), between(s.crashes)} {
		for _, cuts := range cutss {
			for _, told := range tolds {
				if s.pinVariants(crashes, withTold(cuts, told)) {
					return
				}
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
		s.tryExact(armed(s.crashes), armedCuts(s.resets))
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

// withTold returns cuts with every half-open op's told side set (told 0:
// as the run told).
func withTold(cuts []timedOp, told uint8) []timedOp {
	out := slices.Clone(cuts)
	for i := range out {
		if out[i].op.Kind == OpHalfOpen && told != 0 {
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

// armedCuts returns cuts as reset and half-open ops armed for the packet
// whose sending cut the connection, 1ns before it was sent (those whose
// packet is not known stay at their time).
func armedCuts(cuts []timedOp) []timedOp {
	out := slices.Clone(cuts)
	for i := range out {
		if out[i].op.On != 0 {
			out[i].at = max(out[i].at-1, 0)
		}
	}
	return out
}

// timedCuts returns cuts as reset and half-open ops that cut the
// connection at their time.
func timedCuts(cuts []timedOp) []timedOp {
	out := slices.Clone(cuts)
	for i := range out {
		out[i].op.On = 0
	}
	return out
}

// between returns crashes as crash ops between steps, with their restarts.
func between(crashes []timedOp) []timedOp {
	out := slices.Clone(crashes)
	for i := range out {
		out[i].op.Point, out[i].op.Skip = 0, 0
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
