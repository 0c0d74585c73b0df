package sim

import (
	"fmt"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// node is the broker or one client: an engine, its disk, its timers and, for
// a client, its publisher and subscriber applications.
type node struct {
	// armed is the crash point kind a crash op armed the node to crash at
	// next (0: none).
	armed model.CrashPoint
	// armedSkip is how many crash points of that kind the armed crash lets
	// pass first (Op.Skip).
	armedSkip uint8
	// ptTime and ptCount count the crash points of each kind the node
	// passed at virtual time ptTime: a crash at a crash point records how
	// many of its kind came before it at its time (World.crashSkips).
	ptTime  engine.Time
	ptCount [model.CrashInCallbackPost + 1]uint8
	// cut is the reset or half-open an op armed a client's link for (its
	// kind 0: none).
	cut    armedCut
	name   string
	nameID uint32 // name in the run's string table
	idx    int32
	broker bool
	eng    Engine
	up     bool
	inc    uint64 // incarnation: bumped by every crash or stop
	disk   *Disk  // the engine's records
	// appLog is the subscriber application's durable log: the message ids
	// (string ids of the run) it took, in order. Every append is synced, so
	// a crash keeps all of it and draws nothing.
	appLog []uint32

	timers   timerSet // live timers and their generation
	timerGen uint64
	acks     []engine.DeliveryID // deliveries the app owns, to Ack after the step
	points   int                 // crash points passed (safety phase)
	failed   bool                // the engine reported a permanent error (this incarnation)

	// cfg is what the plan's node op declared (nil: the defaults); version
	// is the node's protocol level (a client's own, else the run's).
	cfg     *NodeConfig
	version uint8
	wills   int // Connects that carried a will: names each will message

	// client only
	app         clientApp
	partitioned bool
	slow        engine.Duration
}

// newNode returns a node whose disk copies values into arena (shared by the
// world's disks).
func newNode(name string, idx int32, broker bool, arena *byteArena) *node {
	room := clientDiskRoom
	if broker {
		room = brokerDiskRoom
	}
	return &node{
		name: name, idx: idx, broker: broker,
		disk: newDiskIn(arena, room),
		app:  newClientApp(),
	}
}

// The records a node's disk has room for before its map grows: the
// broker of a standard swarm seed holds 30 to 250 keys at its peak, a
// client up to 70, most fewer than 20.
const (
	brokerDiskRoom = 64
	clientDiskRoom = 16
)

// timerSet is a node's live timers and their generations. A node has a few
// at a time (a client two or three, the broker about one per connection),
// so a scan of a slice beats a map; past timerScan timers (a broker of a
// swarm world's thousands of clients) a map indexes them, or the scans
// would grow as the square of the clients.
type timerSet struct {
	list []liveTimer
	idx  map[engine.TimerID]int // index in list, once it is long
}

type liveTimer struct {
	id  engine.TimerID
	gen uint64
}

// timerScan is how many timers a set scans before it indexes them.
const timerScan = 32

// find returns the index of timer id in list, or -1.
func (s *timerSet) find(id engine.TimerID) int {
	if s.idx != nil {
		if i, ok := s.idx[id]; ok {
			return i
		}
		return -1
	}
	for i := range s.list {
		if s.list[i].id == id {
			return i
		}
	}
	return -1
}

// set sets timer id to generation gen.
func (s *timerSet) set(id engine.TimerID, gen uint64) {
	if i := s.find(id); i >= 0 {
		s.list[i].gen = gen
		return
	}
	s.list = append(s.list, liveTimer{id: id, gen: gen})
	switch {
	case s.idx != nil:
		s.idx[id] = len(s.list) - 1
	case len(s.list) > timerScan:
		s.idx = make(map[engine.TimerID]int, 2*len(s.list))
		for i, t := range s.list {
			s.idx[t.id] = i
		}
	}
}

// gen returns the generation of timer id, 0 if it is not set (generations
// start at 1).
func (s *timerSet) gen(id engine.TimerID) uint64 {
	if i := s.find(id); i >= 0 {
		return s.list[i].gen
	}
	return 0
}

// del forgets timer id.
func (s *timerSet) del(id engine.TimerID) {
	i := s.find(id)
	if i < 0 {
		return
	}
	last := len(s.list) - 1
	s.list[i] = s.list[last]
	s.list = s.list[:last]
	if s.idx != nil {
		delete(s.idx, id)
		if i < last {
			s.idx[s.list[i].id] = i
		}
	}
}

// reset forgets every timer.
func (s *timerSet) reset() {
	s.list = s.list[:0]
	clear(s.idx)
}

// step feeds one event to a node's engine and carries out its actions in
// order, with a crash point before and after each; then it feeds the Acks of
// the deliveries its application took during the step.
func (w *World) step(n *node, ev engine.Event) {
	if !n.up {
		return
	}
	w.stats.Events++
	w.traceEvent(n, ev)
	inc := n.inc
	acts := n.eng.Step(w.sched.now, ev)
	for i := range acts {
		if w.crashPoint(n, model.CrashBeforeAction) {
			return
		}
		w.do(n, acts[i])
		if n.inc != inc {
			return
		}
		if w.crashPoint(n, model.CrashAfterAction) {
			return
		}
	}
	for len(n.acks) > 0 && n.inc == inc {
		d := n.acks[0]
		n.acks = append(n.acks[:0], n.acks[1:]...)
		w.step(n, w.evs.ack.box(engine.Ack{Delivery: d}))
	}
	w.checkFailed(n)
}

// stuckReporter is implemented by an engine that can fail for good (the
// client under the legacy unknown-ack policy).
type stuckReporter interface{ Stuck() error }

// checkFailed records model Failed the first time n's engine reports a
// permanent error.
func (w *World) checkFailed(n *node) {
	if n.failed || !n.up {
		return
	}
	if s, ok := n.eng.(stuckReporter); ok {
		if err := s.Stuck(); err != nil {
			n.failed = true
			w.log.add(hrec{kind: model.Failed, time: int64(w.sched.now), node: n.nameID, reason: w.strs.id(err.Error())})
			w.tr.begin(w.sched.now, n.name, "failed")
			w.tr.str(" err=", err.Error())
			w.tr.end()
		}
	}
}

// do carries out one action of node n.
func (w *World) do(n *node, a engine.Action) {
	w.traceAction(n, a)
	switch a := a.(type) {
	case engine.Dial:
		w.handleDial(n)
	case engine.Send:
		w.handleSend(n, a)
	case engine.CloseConn:
		w.handleCloseConn(n, a)
	case engine.Persist:
		n.disk.Persist(a)
	case engine.SetTimer:
		n.timerGen++
		n.timers.set(a.Timer, n.timerGen)
		w.sched.push(item{at: a.At, kind: evTimer, node: n.idx, gen: n.timerGen, id: uint64(a.Timer), conn: n.inc})
	case engine.CancelTimer:
		n.timers.del(a.Timer)
	case engine.Deliver:
		w.handleDeliverApp(n, a)
	case engine.Complete:
		w.handleComplete(n, a)
	}
}

// handleTimer fires a timer that is still set, in the same incarnation.
func (w *World) handleTimer(it item) {
	n := w.nodes[it.node]
	id := engine.TimerID(it.id)
	if !n.up || n.inc != it.conn || n.timers.gen(id) != it.gen {
		return
	}
	n.timers.del(id)
	w.step(n, engine.TimerFired{Timer: id})
}

// crashPoint passes one crash point of n and reports whether n crashed there.
func (w *World) crashPoint(n *node, p model.CrashPoint) bool {
	if w.phase != phaseSafety {
		return false
	}
	n.points++
	skip := n.countPoint(w.sched.now, p)
	var hit, armedHit bool
	if n.armed != 0 && n.armed == p {
		if n.armedSkip > 0 {
			n.armedSkip-- // a point the armed crash lets pass: drawn as ever
		} else {
			n.armed, armedHit = 0, true
		}
	}
	switch {
	case armedHit:
		hit = true
		if !w.cfg.Crash.Exhaustive() {
			// The draw a random crash point makes here: an armed crash
			// where a random one fired replays that run exactly.
			w.rnd.PPM(w.prof.CrashPointPPM)
		}
	case w.cfg.Crash.Exhaustive():
		hit = n.idx == w.crashK && n.points == w.cfg.Crash.K
	default:
		hit = !w.inBurst && w.rnd.PPM(w.prof.CrashPointPPM)
	}
	if !hit {
		return false
	}
	w.crashSkips = append(w.crashSkips, skip)
	w.crash(n, p)
	w.scheduleRestart(n)
	return true
}

// countPoint counts a crash point of kind p passed at now and returns how
// many of its kind n passed at now before it.
func (n *node) countPoint(now engine.Time, p model.CrashPoint) uint8 {
	if now != n.ptTime {
		n.ptTime, n.ptCount = now, [len(n.ptCount)]uint8{}
	}
	if int(p) >= len(n.ptCount) {
		return 0
	}
	c := n.ptCount[p]
	if c < 255 {
		n.ptCount[p]++
	}
	return c
}

// scheduleRestart brings a crashed node back after the profile's delay.
func (w *World) scheduleRestart(n *node) {
	d := w.rnd.Between(w.prof.RestartMin, w.prof.RestartMax)
	w.sched.push(item{at: w.sched.now + engine.Time(d), kind: evRestart, node: n.idx, gen: n.inc})
}

// handleAutoRestart restarts a node crashed at a crash point, unless it was
// restarted (or crashed again) meanwhile.
func (w *World) handleAutoRestart(it item) {
	n := w.nodes[it.node]
	if n.up || n.inc != it.gen {
		return
	}
	w.restart(n)
}

// crash kills n: memory, timers and unsynced writes are gone; its connection
// endpoints vanish without a word to the peers (a power loss).
func (w *World) crash(n *node, p model.CrashPoint) {
	if !n.up {
		return
	}
	w.stats.Crashes++
	out := n.disk.Crash(w.rnd, w.prof.LoseUnsyncedPPM, w.prof.TornPPM)
	w.log.add(hrec{kind: model.Crash, time: int64(w.sched.now), node: n.nameID, point: p, reason: w.strs.id(lostWrites(out))})
	w.tr.begin(w.sched.now, n.name, "crash")
	w.tr.int(" point=", int64(p))
	w.tr.int(" kept=", int64(out.Kept))
	w.tr.int(" lost=", int64(out.Lost))
	w.tr.int(" torn=", boolInt(out.Torn))
	w.tr.end()
	if out.Lost > 0 {
		w.stats.Faults["lost-write"] += out.Lost
	}
	if out.Torn {
		w.stats.Faults["torn-write"]++
	}
	w.down(n, true)
}

// down takes n out of the world; crashed says whether its connection
// endpoints vanish (crash) or close cleanly (stop).
func (w *World) down(n *node, crashed bool) {
	for _, c := range w.conns {
		side, ok := c.sideOf(n)
		if !ok || !c.alive[side] {
			continue
		}
		if crashed {
			c.alive[side] = false
			c.gone[side] = true
		} else {
			w.closeSide(c, side, 0)
		}
	}
	if n.broker {
		w.obs.brokerDown(int64(w.sched.now)) // every connection it held ended
	}
	n.up = false
	n.failed = false
	n.eng = nil
	n.inc++
	n.timers.reset()
	n.acks = n.acks[:0]
	n.app.reset()
}

// restart rebuilds n's engine from the records that survived.
func (w *World) restart(n *node) {
	if n.up {
		return
	}
	if err := w.boot(n); err != nil {
		w.log.add(hrec{kind: model.Failed, time: int64(w.sched.now), node: n.nameID, reason: w.strs.id(err.Error())})
		w.tr.begin(w.sched.now, n.name, "restart-failed")
		w.tr.str(" err=", err.Error())
		w.tr.end()
		return
	}
	w.log.add(hrec{kind: model.Restart, time: int64(w.sched.now), node: n.nameID})
	w.tr.begin(w.sched.now, n.name, "restart")
	w.tr.int(" records=", int64(len(n.disk.synced)))
	w.tr.end()
	if n.broker {
		w.unpark()
	} else if n.app.wantConn {
		w.connect(n, false)
	}
}

// stop shuts n down cleanly: the engine is told Shutdown and its actions
// (a broker's last snapshot, DISCONNECTs) take effect, every write is
// synced, the remaining connections close. Its memory is lost as in a
// crash: the history records a Crash at model.CrashStop. A crash point
// passed during the shutdown can make it a crash instead.
func (w *World) stop(n *node) {
	if !n.up {
		return
	}
	inc := n.inc
	w.step(n, engine.Shutdown{})
	if !n.up || n.inc != inc {
		return
	}
	n.disk.Sync()
	w.log.add(hrec{kind: model.Crash, time: int64(w.sched.now), node: n.nameID, point: model.CrashStop})
	w.tr.begin(w.sched.now, n.name, "stop")
	w.tr.end()
	w.down(n, false)
}

// lostWrites says what a crash lost of a node's disk, or "" if nothing.
func lostWrites(out CrashOutcome) string {
	switch {
	case out.Lost == 0:
		return ""
	case !out.Torn:
		return fmt.Sprintf("%d unsynced writes lost", out.Lost)
	}
	return fmt.Sprintf("%d unsynced writes lost (the last one torn)", out.Lost)
}
