package sim

import (
	"fmt"
	"slices"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// Stats counts what happened in a run.
type Stats struct {
	Events      int64          // engine events stepped
	Published   int            // publish ops applied
	Accepted    int            // publishes the engine accepted
	Delivered   int            // deliveries the subscriber apps took
	Duplicates  int            // deliveries of a message the subscriber already had
	Retransmits int            // PUBLISH packets sent with DUP set
	Crashes     int            // node crashes (plan and crash points)
	Faults      map[string]int // faults by kind
}

// FaultKinds returns the kinds in Faults, sorted.
func (s Stats) FaultKinds() []string {
	kinds := make([]string, 0, len(s.Faults))
	for k := range s.Faults {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Result is the outcome of Run.
type Result struct {
	log    *histLog // the history, compact; History builds it
	tr     *trace   // the trace, as a tape; Trace and Checksum render it
	runner *Runner  // the Runner whose memory log and tr are, if any
	gen    uint64   // the runner's run this Result is of
	Stats  Stats
	// Quiet is true when the liveness phase reached quiescence in the bound.
	Quiet bool
	// End is the virtual time the run ended.
	End engine.Time
	// CrashPoints is the number of crash points each node passed in the
	// safety phase, by node name: exhaustive mode enumerates K in 1..that.
	CrashPoints map[string]int
	// Policy is what the model may assume of the engine preset, with the
	// limits the plan's broker declares (Limits: its queue bound).
	Policy model.Policy
	// crashSkips are World.crashSkips: one per crash at a crash point.
	crashSkips []uint8
	// Violations are the model's violations of what Policy promises under
	// the faults the history shows (model.CheckPromised).
	Violations []model.Violation
	// Err is a plan or configuration error (the run did not complete), or
	// an engine's bytes that disagreed with its packet (ErrWireMismatch).
	Err error
}

// Checksum returns the FNV-64a checksum of the run's trace text. The trace
// is recorded as a tape and rendered on the first call (not during the run,
// which is why it is a method); later calls return the same sum. A Result
// without a trace (the world could not be built, or the zero Result) has
// checksum 0.
func (r Result) Checksum() uint64 {
	r.check()
	if r.tr == nil {
		return 0
	}
	return r.tr.checksum()
}

// Trace returns the run's trace text, rendered from its tape on each call.
func (r Result) Trace() string {
	r.check()
	if r.tr == nil {
		return ""
	}
	return r.tr.text()
}

// Run builds a world, applies every op of the plan (the safety phase), then
// runs the liveness phase, and reports.
func Run(cfg Config, plan Plan) Result {
	w, err := New(cfg)
	if err != nil {
		return Result{Err: err}
	}
	return w.run(plan)
}

// run applies the plan, runs the liveness phase, and reports.
func (w *World) run(plan Plan) Result {
	w.reserve(plan)
	for _, op := range plan.Ops {
		if w.overBudget() {
			break // RunUntilQuiet records the Stuck
		}
		if err := w.Apply(op); err != nil {
			return w.result(err)
		}
	}
	w.RunUntilQuiet()
	return w.result(nil)
}

// reserve sizes the run's history, trace tape and string table for plan:
// about seven or eight history events and 200 to 260 tape bytes per op
// (liveness included), and a string per published message besides the few
// names, topics and filters; a burst's messages (publish count=) count
// as ops each.
func (w *World) reserve(plan Plan) {
	ops := len(plan.Ops)
	for i := range plan.Ops {
		ops += int(plan.Ops[i].Count)
	}
	w.recBudget = historyBudget(ops)
	if w.cfg.historyBudget > 0 {
		w.recBudget = w.cfg.historyBudget
	}
	w.log.recs = slices.Grow(w.log.recs, 8*ops+64)
	w.tr.reserve(288*ops + 1024)
	if w.strs.reused {
		return // the map and slice have the room of earlier runs
	}
	n := len(w.strs.strs) + 16
	for i := range plan.Ops {
		if plan.Ops[i].Kind == OpPublish {
			n += max(1, int(plan.Ops[i].Count))
		}
	}
	ids := make(map[string]uint32, n)
	for id, s := range w.strs.strs[1:] {
		ids[s] = uint32(id + 1)
	}
	w.strs.ids = ids
	w.strs.strs = slices.Grow(w.strs.strs, n)
}

// History returns the run's history in the model's vocabulary. It is built
// from the run's compact record on the first call (not during the run, which
// is why it is a method); later calls return the same events, which callers
// must not modify. The zero Result has an empty history.
func (r Result) History() model.History {
	r.check()
	if r.log == nil {
		return model.History{}
	}
	return r.log.history()
}

// result gathers the Result of the world.
func (w *World) result(err error) Result {
	if err == nil {
		err = w.wireErr // an engine wrote other bytes than it claimed
	}
	r := Result{
		log: &w.log, tr: &w.tr, Stats: w.stats, End: w.sched.now,
		Quiet: w.quietAt >= 0, Err: err,
		CrashPoints: make(map[string]int, len(w.nodes)),
		Policy:      ModelPolicy(w.cfg.Preset),
		crashSkips:  w.crashSkips,
	}
	r.Policy.Limits = w.brokerLimits()
	for _, n := range w.nodes {
		r.CrashPoints[n.name] = n.points
	}
	if err == nil && !w.cfg.SkipCheck {
		r.Violations = model.CheckPromised(w.log.history(), r.Policy)
	}
	return r
}

// Stats returns the counters so far.
func (w *World) Stats() Stats { return w.stats }

// CrashPoints reports the crash points node name passed so far.
func (w *World) CrashPoints(name string) int {
	n, err := w.node(name)
	if err != nil {
		return 0
	}
	return n.points
}

// StartLiveness ends the safety phase: every fault is off from here, every
// partition healed, every slow link restored, every node restarted and every
// client asked to reconnect. RunUntilQuiet calls it if needed.
func (w *World) StartLiveness() {
	if w.phase == phaseLiveness {
		return
	}
	w.phase = phaseLiveness
	w.log.add(hrec{kind: model.LivenessStart, time: int64(w.sched.now)})
	w.tr.begin(w.sched.now, "world", "liveness")
	w.tr.end()
	for _, n := range w.nodes {
		w.heal(n)
		n.slow = 0
		if !n.up {
			w.restart(n)
		}
	}
	for _, n := range w.nodes[1:] {
		n.app.wantConn = true
		if n.up && n.app.conn == 0 {
			w.connect(n, false)
		}
	}
}

// RunUntilQuiet runs the liveness phase until the world is quiet or the
// liveness bound passes, and reports whether it went quiet. It records
// Quiescent, or Stuck with the pending work as the reason. A run whose
// history reaches its budget (historyBudget) ends Stuck at once, the reason
// saying so.
func (w *World) RunUntilQuiet() bool {
	w.StartLiveness()
	if w.quietAt >= 0 {
		return true
	}
	deadline := w.sched.now + engine.Time(w.cfg.LivenessBound)
	for !w.quiet() {
		at, ok := w.sched.peek()
		if over := w.overBudget(); over || !ok || at > deadline {
			reason := fmt.Sprintf("history budget of %d records spent: ", w.recBudget)
			if !over {
				w.sched.advanceTo(deadline)
				reason = ""
			}
			reason += w.pendingReport()
			w.log.add(hrec{kind: model.Stuck, time: int64(w.sched.now), reason: w.strs.id(reason)})
			w.tr.begin(w.sched.now, "world", "stuck")
			w.tr.word(reason)
			w.tr.end()
			return false
		}
		w.dispatch(w.sched.pop())
	}
	w.quietAt = w.sched.now
	w.log.add(hrec{kind: model.Quiescent, time: int64(w.sched.now)})
	w.tr.begin(w.sched.now, "world", "quiescent")
	w.tr.end()
	return true
}

// quiet reports whether nothing is pending: no packet id in flight on any
// side, every owed delivery made, every node up, every client connected, no
// packet but a keep-alive one in flight (stream.busy), and every engine
// that can say so idle.
func (w *World) quiet() bool {
	if w.obs.pending > 0 || w.obs.expected > 0 {
		return false
	}
	for _, n := range w.nodes {
		if !n.up {
			return false
		}
		if !n.broker && (!n.app.connected || n.app.conn == 0) {
			return false
		}
		if !engineQuiet(n.eng) {
			return false
		}
	}
	for _, c := range w.conns {
		if c.reset || c.blackhole {
			continue
		}
		if (c.alive[0] || c.alive[1]) && (c.dir[0].busy() || c.dir[1].busy()) {
			return false
		}
	}
	return true
}

// quietReporter is implemented by an engine that can tell whether it has
// work pending (inflight messages, queued messages, an unanswered PUBREL).
type quietReporter interface{ Quiet() bool }

// brokerStats is the broker's view of its own pending work.
type brokerStats interface{ Stats() engine.BrokerStats }

// engineQuiet asks an engine whether it is idle, as far as it can say.
func engineQuiet(e Engine) bool {
	switch q := e.(type) {
	case quietReporter:
		return q.Quiet()
	case brokerStats:
		s := q.Stats()
		return s.Inflight == 0 && s.Queued == 0
	}
	return true
}

// pendingReport lists what keeps the world from being quiet.
func (w *World) pendingReport() string {
	var parts []string
	for _, n := range w.nodes {
		switch {
		case !n.up:
			parts = append(parts, n.name+" down")
		case !n.broker && (!n.app.connected || n.app.conn == 0):
			parts = append(parts, n.name+" not connected")
		}
		if n.up {
			if !engineQuiet(n.eng) {
				parts = append(parts, n.name+" engine busy")
			}
		}
	}
	if s := w.obs.pendingReport(w); s != "" {
		parts = append(parts, s)
	}
	for _, c := range w.conns {
		if !c.reset && !c.blackhole && (c.alive[0] || c.alive[1]) && (c.dir[0].busy() || c.dir[1].busy()) {
			parts = append(parts, w.nodes[c.client].name+" bytes in flight")
		}
	}
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

// A run's history budget: a run that keeps its nodes busy without end (a
// client that refuses what the broker resends on every reconnect, as under
// the alias-above-max canary, where swarm seed 25 retransmitted over a
// million PUBLISHes in 220 s of its liveness phase and a 2,000-seed shrink
// bench grew to 22 GB) would record tens of millions of events before its
// liveness bound passed. A run records about eight per op (reserve), a
// wrap=long seed about fifteen per message; past budgetBase plus
// budgetPerOp per op (a burst's messages counted as ops) the run ends as
// Stuck, so one run's memory is bounded by its plan's size.
const (
	budgetBase  = 1 << 20
	budgetPerOp = 64
)

// historyBudget is the most history records a run of ops ops (a burst's
// messages counted) may make.
func historyBudget(ops int) int { return budgetBase + budgetPerOp*ops }

// overBudget reports whether the run's history reached its budget. A World
// made without a plan (New, then Apply) has none until reserve sets it.
func (w *World) overBudget() bool {
	return w.recBudget > 0 && len(w.log.recs) >= w.recBudget
}
