package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("sim: bad config")

// BrokerName is the broker's node name.
const BrokerName = "broker"

// CrashMode selects how crash points fire. The zero value is random mode: each
// crash point fires with the profile's CrashPointPPM. Exhaustive mode (K >= 1)
// crashes node Node at its K-th crash point of the safety phase and nowhere
// else; Result.CrashPoints tells a driver how many points each node had, so it
// can enumerate every K.
type CrashMode struct {
	Node string
	K    int
}

// Exhaustive reports whether the mode is exhaustive.
func (m CrashMode) Exhaustive() bool { return m.K > 0 }

// Config configures a world. The zero value of an optional field takes the
// default named on it.
type Config struct {
	Seed    uint64
	Source  Source // optional: overrides the PCG of Seed for every draw
	Profile string // fault profile; default "calm"
	// Custom, when set, replaces the named profile's probabilities and
	// timings (swarm's are still drawn when Custom.Name is "swarm").
	Custom   *Profile
	Preset   engine.Preset // engine policies; default the preset named "fixed"
	Version  uint8         // MQTT protocol level, 4 or 5; default 5
	Scenario string        // default "standard"
	// Workload pins dimensions of the swarm scenario's workload (only
	// swarm takes pins).
	Workload Workload
	Crash    CrashMode
	// LivenessBound is how long, in virtual time, the liveness phase may take
	// to reach quiescence; default 10 minutes.
	LivenessBound engine.Duration
	// SkipCheck leaves Result.Violations empty: the model check is not run
	// (for raw-speed benchmarks and for drivers that check themselves).
	SkipCheck bool

	factory engineFactory // tests plug a fake engine in here
	// historyBudget, when positive, replaces the run's history budget
	// (historyBudget): tests reach it in a few thousand records.
	historyBudget int
}

// DefaultLivenessBound is the default liveness bound.
const DefaultLivenessBound = 10 * 60 * engine.Second

// Engine is the part of engine.Client and engine.Broker the world drives.
type Engine interface {
	Step(now engine.Time, ev engine.Event) []engine.Action
}

// NodeSpec is what the world knows of a node when it builds its engine.
type NodeSpec struct {
	Name      string
	Broker    bool
	Version   uint8
	KeepAlive engine.Duration
	Preset    engine.Preset
	Config    *NodeConfig // the plan's node op, nil for the defaults
	// onDrop, for the broker, is told of each message copy it discards
	// undelivered (engine.BrokerConfig.OnDrop); nil: nobody is.
	onDrop func(engine.Drop)
}

// engineFactory builds a node's engine from its surviving records.
type engineFactory func(spec NodeSpec, restored []engine.Record) (Engine, error)

// withDefaults fills the defaults in and validates the config.
func (c Config) withDefaults() (Config, error) {
	if c.Profile == "" {
		c.Profile = "calm"
	}
	if c.Scenario == "" {
		c.Scenario = "standard"
	}
	if c.Version == 0 {
		c.Version = 5
	}
	if c.LivenessBound == 0 {
		c.LivenessBound = DefaultLivenessBound
	}
	if c.Version != 4 && c.Version != 5 {
		return c, fmt.Errorf("%w: Version %d is not 4 (3.1.1) or 5", ErrConfig, c.Version)
	}
	if c.LivenessBound < 0 {
		return c, fmt.Errorf("%w: LivenessBound %d is negative", ErrConfig, c.LivenessBound)
	}
	if c.Crash.K < 0 {
		return c, fmt.Errorf("%w: Crash.K %d is negative", ErrConfig, c.Crash.K)
	}
	if _, err := ProfileByName(c.Profile); err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.Custom != nil {
		if err := c.Custom.Validate(); err != nil {
			return c, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	if _, err := ScenarioByName(c.Scenario); err != nil {
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if !c.Workload.IsZero() && c.Scenario != SwarmScenario {
		return c, fmt.Errorf("%w: workload %s pins the %s scenario's dimensions; scenario %s has none", ErrConfig, c.Workload, SwarmScenario, c.Scenario)
	}
	if c.Preset.Name == "" {
		p, err := defaultPreset()
		if err != nil {
			return c, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c.Preset = p
	}
	if c.factory == nil {
		c.factory = defaultFactory
	}
	return c, nil
}

// profile returns the unresolved profile of a validated config.
func (c Config) profile() Profile {
	if c.Custom != nil {
		return *c.Custom
	}
	p, _ := ProfileByName(c.Profile)
	return p
}

// featureStream returns the draw stream of the swarm workload's later
// dimensions (streamFeatures); with a Source override, the Source.
func (c Config) featureStream(plan *Rand) *Rand {
	if c.Source != nil {
		return plan
	}
	return newPCG(c.Seed, streamFeatures)
}

// moreStream returns the draw stream of the swarm's newest dimensions
// (streamMore); with a Source override, the Source.
func (c Config) moreStream(plan *Rand) *Rand {
	if c.Source != nil {
		return plan
	}
	return newPCG(c.Seed, streamMore)
}

// brokerMaxStream returns the draw stream of the swarm's brokermax
// dimension (streamBrokerMax); with a Source override, the Source.
func (c Config) brokerMaxStream(plan *Rand) *Rand {
	if c.Source != nil {
		return plan
	}
	return newPCG(c.Seed, streamBrokerMax)
}

// optionsStream returns the draw stream of the swarm's broker options
// (streamOptions); with a Source override, the Source.
func (c Config) optionsStream(plan *Rand) *Rand {
	if c.Source != nil {
		return plan
	}
	return newPCG(c.Seed, streamOptions)
}

// accessStream returns the draw stream of the swarm's access dimension
// (streamAccess); with a Source override, the Source.
func (c Config) accessStream(plan *Rand) *Rand {
	if c.Source != nil {
		return plan
	}
	return newPCG(c.Seed, streamAccess)
}

// wrapStream returns the draw stream of the swarm's wrap dimension
// (streamWrap); with a Source override, the Source.
func (c Config) wrapStream(plan *Rand) *Rand {
	if c.Source != nil {
		return plan
	}
	return newPCG(c.Seed, streamWrap)
}

// streams returns the three draw streams of a config: profile, plan and run.
// With a Source override the three share it, in that order.
func (c Config) streams() (profile, plan, run *Rand) {
	if c.Source != nil {
		r := NewRand(c.Source)
		return r, r, r
	}
	return newPCG(c.Seed, streamProfile), newPCG(c.Seed, streamPlan), newPCG(c.Seed, streamRun)
}

// phase is the phase of a run.
type phase uint8

const (
	phaseSafety phase = iota + 1
	phaseLiveness
)

// World is one simulated deployment: a broker and clients, each an engine,
// joined by a virtual network, on a virtual clock, with crashable disks.
type World struct {
	// crashSkips are, for each crash at a crash point in order, how many
	// points of its kind its node passed at its time before it: an armed
	// crash op replaying it skips that many (Op.Skip).
	crashSkips []uint8
	// inBurst: a publish count= op is handing its messages to the client;
	// random crash points draw nothing meanwhile (armed and exhaustive
	// crashes still fire), or a burst of 65,536 would almost never
	// reach its end.
	inBurst bool
	// recBudget is the most history records the run may make (see
	// historyBudget); past it the run ends Stuck.
	recBudget int
	// access is the broker's ACL (swarm_access.go), nil without one.
	access *engine.Access
	cfg    Config
	prof   Profile
	scen   Scenario
	rnd    *Rand
	sched  Scheduler
	nodes  []*node
	byName map[string]int32
	conns  []*conn         // conns[id-1]
	parked []engine.ConnID // dials waiting for a partition to heal or the broker to restart
	phase  phase
	log    histLog
	tr     trace
	stats  Stats
	obs    observer
	crashK int32          // exhaustive-mode node index, -1 if none
	strs   *strTable      // interned names, topics, payloads, filters
	evs    worldEvents    // slots boxing the frequent events
	bytes  byteArena      // copies handed to the engines
	carve  connCarvers    // conns and the first room of their streams
	wire   packet.Decoder // decodes what each Send writes (wire.go)
	// wireBuf holds a claimed packet encoded again (wire.go).
	wireBuf []byte
	// wireErr is the first Send whose bytes disagreed with its packet.
	wireErr error
	// quietAt is when the liveness phase went quiet, -1 until then.
	quietAt engine.Time
}

// New builds the world of cfg: nodes up, nothing connected, time zero.
func New(cfg Config) (*World, error) { return newWorld(cfg, nil) }

// newWorld is New on memory lent by a Runner (fresh memory if mem is nil).
func newWorld(cfg Config, mem *runMem) (*World, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	pr, _, run := cfg.streams()
	prof := cfg.profile()
	scen, _ := ScenarioByName(cfg.Scenario)
	w := &World{
		cfg: cfg, prof: prof.resolve(pr), scen: scen, rnd: run,
		byName: make(map[string]int32), phase: phaseSafety,
		crashK: -1, quietAt: -1,
	}
	w.stats.Faults = make(map[string]int)
	if mem != nil {
		mem.lend(w)
	} else {
		w.strs = newStrTable()
	}
	w.log.strs = w.strs
	w.traceHeader()
	names := append([]string{BrokerName}, scen.Clients...)
	for _, name := range names {
		if _, err := w.addNode(name, nil); err != nil {
			return nil, err
		}
	}
	if cfg.Crash.Exhaustive() {
		i, ok := w.byName[cfg.Crash.Node]
		switch {
		case ok:
			w.crashK = i
		case len(scen.Clients) > 0:
			return nil, fmt.Errorf("%w: Crash.Node %q is not a node of scenario %s", ErrConfig, cfg.Crash.Node, scen.Name)
		}
		// Otherwise the plan's node ops declare the clients (addNode).
	}
	return w, nil
}

// addNode adds and boots node name (the broker first) with config cfg.
func (w *World) addNode(name string, cfg *NodeConfig) (*node, error) {
	i := int32(len(w.nodes))
	n := newNode(name, i, i == 0, &w.bytes)
	n.nameID = w.strs.id(name)
	n.cfg, n.version = cfg, w.cfg.Version
	if cfg != nil && cfg.Version != 0 {
		n.version = cfg.Version
	}
	w.nodes = append(w.nodes, n)
	w.byName[name] = i
	w.obs.addNode()
	w.declareAccess(n)
	if w.cfg.Crash.Exhaustive() && w.cfg.Crash.Node == name {
		w.crashK = i
	}
	return n, w.boot(n)
}

// traceHeader writes the run's identity first: seed, profile, preset.
func (w *World) traceHeader() {
	c := w.cfg
	w.tr.raw("# seed " + strconv.FormatUint(c.Seed, 10) + " profile " + c.Profile + " preset " + c.Preset.Name +
		" scenario " + c.Scenario + " version " + strconv.Itoa(int(c.Version)))
	p := w.prof
	w.tr.raw("# faults chunk=" + strconv.Itoa(p.ChunkPPM) + " reset=" + strconv.Itoa(p.ResetPPM) +
		" halfopen=" + strconv.Itoa(p.HalfOpenPPM) + " partition=" + strconv.Itoa(p.PartitionPPM) +
		" slow=" + strconv.Itoa(p.SlowPPM) + " crash=" + strconv.Itoa(p.CrashPPM) +
		" stateloss=" + strconv.Itoa(p.StateLossPPM) + " crashpoint=" + strconv.Itoa(p.CrashPointPPM) +
		" lose=" + strconv.Itoa(p.LoseUnsyncedPPM) + " torn=" + strconv.Itoa(p.TornPPM) + " (ppm)")
}

// boot builds a node's engine from its disk.
func (w *World) boot(n *node) error {
	spec := NodeSpec{Name: n.name, Broker: n.broker, Version: n.version, KeepAlive: w.scen.KeepAlive, Preset: w.cfg.Preset, Config: n.cfg}
	if n.broker {
		spec.onDrop = w.brokerDropped
	}
	recs := n.disk.Records()
	eng, err := w.cfg.factory(spec, recs)
	if err != nil {
		return fmt.Errorf("sim: building engine of %s: %w", n.name, err)
	}
	n.app.hasSession = false
	for _, r := range recs {
		// Stored outgoing or incoming QoS2 messages are session state too
		// (§4.1), with or without the marker: the engine counts them.
		if r.Key == clientSessionKey || strings.HasPrefix(r.Key, "out/") || isIncomingQoS2Key(r.Key) {
			n.app.hasSession = true
		}
	}
	n.eng = eng
	n.up = true
	return nil
}

// brokerDropped hears the broker discard a copy undelivered and records it
// as a Dropped event, in the words of the broker's drop log (live's
// DropLineFormat): the model excuses a queue-full drop as far as the
// broker's declared queue bound allows (nodeLimits, model/droplimits.go).
// A resend too large for its client's Maximum Packet Size is discarded as
// if its delivery completed [MQTT-3.1.2-25], so the observer stops waiting
// for its ack, and, for a QoS 2 copy the client may hold awaiting PUBREL,
// for that PUBREL: a broker that reads "completed" as the end of the flow
// sends none, and the client keeps the id for good, as it must
// [MQTT-4.3.3-10] (the fixed engine releases it: Broker.sendPublish). Nor
// does the observer wait for a copy dropped at a full queue.
func (w *World) brokerDropped(d engine.Drop) {
	reason := d.Reason.String()
	if d.Reason == engine.DropQueueFull {
		reason += " bound=" + strconv.Itoa(d.Bound) + " policy=" + d.Policy.String()
	}
	msg := w.internID(msgOfPayload(d.Payload))
	w.log.add(hrec{kind: model.Dropped, time: int64(w.sched.now), node: w.nodes[0].nameID, peer: w.strs.id(d.Client),
		msg: msg, topic: w.strs.id(d.Topic), reason: w.strs.id(reason)})
	c, ok := w.byName[d.Client]
	switch {
	case !ok:
	case d.Reason == engine.DropQueueFull:
		w.obs.dropped(c, msg)
	case d.Reason == engine.DropTooLarge && d.PacketID != 0:
		w.obs.del(c, outBroker, d.PacketID)
		w.obs.del(c, inClient, d.PacketID) // [MQTT-3.1.2-25] no PUBREL owed for the discarded message
	}
}

// brokerLimits are the limits the plan's broker declares to the model: its
// queue bound and queue-full policy when its node op sets one ("node broker
// queue=N queuefull=P"); none otherwise (the default bound is never met by
// a scenario's traffic, and a drop at it is a loss).
func (w *World) brokerLimits() model.BrokerLimits {
	var lim model.BrokerLimits
	for _, n := range w.nodes {
		if !n.broker || n.cfg == nil || n.cfg.Queue == 0 {
			continue
		}
		lim.Queue, lim.QueueFull = int(n.cfg.Queue), model.DropOldest
		if n.cfg.QueueFull == engine.DropNewest {
			lim.QueueFull = model.DropNewest
		}
	}
	return lim
}

// Now reports the virtual time.
func (w *World) Now() engine.Time { return w.sched.now }

// History returns the history so far.
func (w *World) History() model.History { return w.log.history() }

// Trace returns the trace text so far, rendered from the run's tape.
func (w *World) Trace() string { return w.tr.text() }

// Checksum returns the FNV-64a checksum of the trace text so far.
func (w *World) Checksum() uint64 { return w.tr.checksum() }

// Profile returns the resolved fault profile (swarm's drawn probabilities).
func (w *World) Profile() Profile { return w.prof }

// node returns the node named name.
func (w *World) node(name string) (*node, error) {
	i, ok := w.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: no node %q", ErrPlan, name)
	}
	return w.nodes[i], nil
}

// RunFor runs every event due within d of virtual time, then moves the clock
// to the end of that span.
func (w *World) RunFor(d engine.Duration) {
	end := w.sched.now + engine.Time(d)
	for !w.overBudget() {
		at, ok := w.sched.peek()
		if !ok || at > end {
			break
		}
		w.dispatch(w.sched.pop())
	}
	w.sched.advanceTo(end)
}

// dispatch carries out one scheduled item.
func (w *World) dispatch(it item) {
	switch it.kind {
	case evDeliver:
		w.handleDeliver(it)
	case evCloseSeen:
		w.handleCloseSeen(it)
	case evOpen:
		w.handleOpen(it)
	case evTimer:
		w.handleTimer(it)
	case evRestart:
		w.handleAutoRestart(it)
	case evReconnect:
		w.handleReconnect(it)
	}
}
