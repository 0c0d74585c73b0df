package sim

// Runner runs plans one after another and lends each run the memory of the
// last: the history's records, the trace tape, the string table and the
// scheduler's heap, the run's largest allocations. A campaign worker or a
// benchmark runs thousands of seeds back to back; allocating these afresh
// for each one made the collector run every few seeds, and for most of the
// time. A Result from a Runner is valid until the Runner's next Run: its
// History, Trace and Checksum panic after that (sim.Run's Results never
// expire). Histories and traces already built are the caller's and stay
// valid, unless ReuseHistories is set. The zero Runner is ready to use; a
// Runner is not safe for concurrent use.
type Runner struct {
	// ReuseHistories lends the memory of the model.Events a Result's
	// History builds to the next run as well: a seed's history is some
	// 3,000 events of 208 bytes, the largest allocation left in a judged
	// seed. A caller that sets it must be done with each History (and
	// anything pointing into its Events) before the next Run, as a
	// campaign judging one seed at a time is; strings taken from the
	// events stay valid.
	ReuseHistories bool

	mem runMem
	gen uint64 // runs started, so a Result knows whether its memory is still its own
}

// runMem is the memory a Runner lends from run to run.
type runMem struct {
	recs  []crec
	spill []hrec
	tape  []byte
	nodes []string
	strs  *strTable
	heap  itemHeap
	last  *histLog // the last run's log, whose built events ReuseHistories lends
}

// Run is sim.Run on memory lent by the Runner.
func (rn *Runner) Run(cfg Config, plan Plan) Result {
	rn.gen++
	w, err := newWorld(cfg, &rn.mem)
	if err != nil {
		return Result{Err: err}
	}
	if rn.ReuseHistories && rn.mem.last != nil {
		w.log.built, w.log.dirty = rn.mem.last.built[:0], true
	}
	r := w.run(plan)
	rn.mem.keep(w)
	r.runner, r.gen = rn, rn.gen
	return r
}

// Memory a run grew past these bounds is not lent on: a seed of wrap=long
// (65,600 messages) records about a million events, and a campaign worker
// that kept that room for every later seed stayed at gigabytes. A typical
// seed needs a few thousand of each, an idle-client seed some tens of
// thousands.
const (
	maxLentEvents = 1 << 16  // records, spilled records, built events
	maxLentTape   = 16 << 20 // trace tape bytes
	maxLentStrs   = 1 << 16  // string table entries
)

// lendable returns s emptied, or nil when its room is past max.
func lendable[T any](s []T, max int) []T {
	if cap(s) > max {
		return nil
	}
	return s[:0]
}

// lend hands w the memory of the last run, emptied. What grew past the
// bounds above goes back to the collector: m lets go of it too, so the run
// does not hold the last one's room while it grows its own.
func (m *runMem) lend(w *World) {
	if m.last != nil && (cap(m.last.built) > maxLentEvents || cap(m.recs) > maxLentEvents) {
		m.last = nil // (it points into the last run's World, which a huge run makes huge)
	}
	m.recs, m.spill, m.heap = lendable(m.recs, maxLentEvents), lendable(m.spill, maxLentEvents), lendable(m.heap, maxLentEvents)
	if cap(m.tape) > maxLentTape {
		m.tape = nil
	}
	w.log.recs, w.log.spill = m.recs, m.spill
	w.tr.buf, w.tr.nodes = m.tape, m.nodes
	w.tr.reset()
	w.sched.h = m.heap
	if m.strs == nil || len(m.strs.strs) > maxLentStrs {
		m.strs = newStrTable()
	}
	m.strs.reset()
	w.strs = m.strs
}

// keep takes back w's memory, grown as the run needed.
func (m *runMem) keep(w *World) {
	m.recs, m.spill = w.log.recs, w.log.spill
	m.tape, m.nodes = w.tr.buf, w.tr.nodes
	m.heap = w.sched.h
	m.last = &w.log
}

// reset empties t for a new run, keeping the map's and slice's room.
func (t *strTable) reset() {
	clear(t.ids)
	clear(t.strs)
	t.strs = append(t.strs[:0], "")
	t.recent = [16]uint32{}
	t.reused = true
}

// check panics when r came from a Runner that has run again since.
func (r *Result) check() {
	if r.runner != nil && r.runner.gen != r.gen {
		panic("sim: a Runner's Result used after the Runner's next Run")
	}
}
