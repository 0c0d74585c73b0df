package properties

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/sim"
)

// ErrSpec is wrapped by PlanSpec validation errors.
var ErrSpec = errors.New("properties: bad plan spec")

// PlanSpec bounds the plans GenCase builds. Empty fields take the defaults
// named on them.
type PlanSpec struct {
	// Presets are the engine presets to choose from; default the preset
	// named "fixed".
	Presets []engine.Preset
	// Profiles are the fault profiles to choose from; default calm, lossy,
	// crashy, swarm.
	Profiles []string
	// Versions are the MQTT protocol levels to choose from; default 5, 4.
	Versions []uint8
	// Scenarios name the deployments (their client ids); default small
	// (p1, s1), then standard (p1, p2, s1, s2).
	Scenarios []string
	// MaxSteps bounds the workload and fault steps after the prelude;
	// default 30.
	MaxSteps int
	// CrashAt lets a case crash one node at each of up to MaxSweep of its
	// crash points after the prelude in turn, one run per point (sim's
	// exhaustive mode; a failing point becomes the plan's crash-at line).
	CrashAt bool
	// Source, when set, makes every world decision (not the plan) come from
	// the source it returns; nil draws them from the seed's PCG so the plan
	// file alone replays the run.
	Source func() sim.Source
}

// DefaultProfiles are the fault profiles a PlanSpec uses by default.
var DefaultProfiles = []string{"calm", "lossy", "crashy", "swarm"}

// withDefaults fills the defaults in and validates the spec.
func (s PlanSpec) withDefaults() (PlanSpec, error) {
	if len(s.Presets) == 0 {
		p, err := engine.PresetByName("fixed")
		if err != nil {
			return s, fmt.Errorf("%w: %w", ErrSpec, err)
		}
		s.Presets = []engine.Preset{p}
	}
	if len(s.Profiles) == 0 {
		s.Profiles = DefaultProfiles
	}
	if len(s.Versions) == 0 {
		s.Versions = []uint8{5, 4}
	}
	if len(s.Scenarios) == 0 {
		s.Scenarios = []string{"small", "standard"}
	}
	if s.MaxSteps == 0 {
		s.MaxSteps = 30
	}
	if s.MaxSteps < 0 {
		return s, fmt.Errorf("%w: MaxSteps %d is negative", ErrSpec, s.MaxSteps)
	}
	for _, p := range s.Profiles {
		if _, err := sim.ProfileByName(p); err != nil {
			return s, fmt.Errorf("%w: %w", ErrSpec, err)
		}
	}
	for _, n := range s.Scenarios {
		if _, err := sim.ScenarioByName(n); err != nil {
			return s, fmt.Errorf("%w: %w", ErrSpec, err)
		}
	}
	for _, v := range s.Versions {
		if v != 4 && v != 5 {
			return s, fmt.Errorf("%w: version %d is not 4 or 5", ErrSpec, v)
		}
	}
	for _, p := range s.Presets {
		if p.Name == "" {
			return s, fmt.Errorf("%w: a preset has no name", ErrSpec)
		}
	}
	return s, nil
}

// Case is one generated run: the world's config and the plan to apply.
// With Sweep set, the case stands for one run per crash point of the sweep
// (Judged runs them in turn); Config.Crash then names the point judged.
type Case struct {
	Config sim.Config
	Plan   sim.Plan
	Sweep  *Sweep
}

// Sweep is a range of crash points of one node: K in [From, To].
type Sweep struct {
	Node     string
	From, To int
}

// MaxSweep bounds the crash points one case sweeps.
const MaxSweep = 64

// String returns the plan file text (a preset that is not one of
// engine.Presets, a mutant or a custom mix, is in its policy line, so
// simrun replay runs it), preceded by a comment line when the world draws
// came from a source other than the seed: the one thing a header cannot say.
func (c Case) String() string {
	var b strings.Builder
	if c.Config.Source != nil {
		b.WriteString("# world draws came from a rapid or byte source, not the seed: replay through the test that found it\n")
	}
	b.WriteString(c.Plan.String())
	return b.String()
}

// Durations an advance step chooses from: short ones first, to land between
// the packets of one exchange (one-way latency is 1-5ms), long ones to let
// keep-alive notice a half-open connection (1.5 x 60s).
var advanceSteps = []engine.Duration{
	engine.Millisecond, 2 * engine.Millisecond, 4 * engine.Millisecond, 8 * engine.Millisecond,
	20 * engine.Millisecond, 100 * engine.Millisecond, 500 * engine.Millisecond,
	2 * engine.Second, 10 * engine.Second, 100 * engine.Second,
}

// opWeights are the relative frequencies of the step kinds, in stepKinds order.
var stepKinds = []struct {
	kind   sim.OpKind
	weight int
}{
	{sim.OpPublish, 8}, {sim.OpAdvance, 6}, {sim.OpCrash, 2}, {sim.OpRestart, 1},
	{sim.OpPartition, 2}, {sim.OpHeal, 1}, {sim.OpDisconnect, 1}, {sim.OpConnect, 1},
	{sim.OpLoseQoS2, 1}, {sim.OpSlow, 1}, {sim.OpStop, 1},
}

// planBuilder accumulates the ops of one plan.
type planBuilder struct {
	c     Chooser
	scen  sim.Scenario
	pubs  []string
	subs  []string
	nodes []string
	// clients are the scenario's and those the plan declares (windows).
	clients []string
	seq     map[string]int
	ops     []sim.Op
}

func newPlanBuilder(c Chooser, scen sim.Scenario) *planBuilder {
	b := &planBuilder{c: c, scen: scen, seq: map[string]int{}, nodes: []string{sim.BrokerName},
		clients: append([]string(nil), scen.Clients...)}
	for _, n := range scen.Clients {
		if strings.HasPrefix(n, "s") {
			b.subs = append(b.subs, n)
		} else {
			b.pubs = append(b.pubs, n)
		}
		b.nodes = append(b.nodes, n)
	}
	return b
}

func (b *planBuilder) add(op sim.Op) { b.ops = append(b.ops, op) }

// windowSub is the subscriber windows adds: the scenario's clients are
// declared by the scenario, and only a client of the plan's own can take a
// node op.
const windowSub = "s9"

// windows draws small flow-control windows, so that the broker holds
// messages back and must pump its queues as acks open them: in one case of
// four the broker announces a Receive Maximum (5.0) or keeps an inflight
// window (3.1.1) of 1 to 3, limiting the clients' sends; in one of three an
// extra subscriber s9 announces one of 1 to 3 (5.0), limiting the
// broker's sends to it, or (3.1.1) joins a broker whose window is that
// small. Clients otherwise announce 65535, as the standard scenario's do.
func (b *planBuilder) windows(version uint8) {
	small := func(name string) *sim.NodeConfig {
		n := uint16(1 + b.c.Choose(name, 3))
		if version == 5 {
			return &sim.NodeConfig{ReceiveMax: n}
		}
		return &sim.NodeConfig{Window: n}
	}
	brokerSmall := b.c.Choose("broker-window", 4) == 0
	subSmall := b.c.Choose("window-subscriber", 3) == 0
	switch {
	case brokerSmall:
		b.add(sim.Op{Kind: sim.OpNode, Node: sim.BrokerName, Cfg: small("broker-window-size")})
	case subSmall && version == 4:
		b.add(sim.Op{Kind: sim.OpNode, Node: sim.BrokerName, Cfg: small("sub-window-size")})
	}
	if subSmall {
		cfg := &sim.NodeConfig{}
		if version == 5 {
			cfg = small("sub-window-size")
		}
		b.add(sim.Op{Kind: sim.OpNode, Node: windowSub, Cfg: cfg})
		b.clients = append(b.clients, windowSub)
		b.subs = append(b.subs, windowSub)
		b.nodes = append(b.nodes, windowSub)
	}
}

// prelude connects every client and subscribes every subscriber.
func (b *planBuilder) prelude() {
	for _, n := range b.clients {
		b.add(sim.Op{Kind: sim.OpConnect, Node: n})
	}
	b.add(sim.Op{Kind: sim.OpAdvance, D: 50 * engine.Millisecond})
	for _, s := range b.subs {
		b.subscribe(s)
	}
	b.add(sim.Op{Kind: sim.OpAdvance, D: 100 * engine.Millisecond})
}

func (b *planBuilder) subscribe(node string) {
	filter := pick(b.c, "filter", []string{"t/#", "t/a", "t/+", "#"})
	qos := pick(b.c, "sub-qos", []uint8{2, 1, 0})
	b.add(sim.Op{Kind: sim.OpSubscribe, Node: node, Topic: filter, QoS: qos})
}

func (b *planBuilder) publish() {
	p := pick(b.c, "publisher", b.pubs)
	b.seq[p]++
	b.add(sim.Op{Kind: sim.OpPublish, Node: p,
		Topic: pick(b.c, "topic", []string{"t/a", "t/b"}),
		QoS:   pick(b.c, "qos", []uint8{2, 1, 0}),
		Msg:   p + "-" + strconv.Itoa(b.seq[p])})
}

// step adds one workload or fault step.
func (b *planBuilder) step() {
	weights := make([]int, len(stepKinds))
	for i, k := range stepKinds {
		weights[i] = k.weight
	}
	b.stepOf(stepKinds[weighted(b.c, "step", weights)].kind)
}

// stepOf adds one step of the given kind, its arguments chosen by b.c.
func (b *planBuilder) stepOf(kind sim.OpKind) {
	client := func() string { return pick(b.c, "client", b.clients) }
	switch kind {
	case sim.OpPublish:
		for range 1 + b.c.Choose("burst", 3) {
			b.publish()
		}
	case sim.OpAdvance:
		b.add(sim.Op{Kind: sim.OpAdvance, D: pick(b.c, "advance", advanceSteps)})
	case sim.OpCrash, sim.OpRestart, sim.OpStop:
		b.add(sim.Op{Kind: kind, Node: pick(b.c, "node", b.nodes)})
	case sim.OpLoseQoS2:
		b.add(sim.Op{Kind: kind, Node: pick(b.c, "subscriber", b.subs)})
	case sim.OpSlow:
		b.add(sim.Op{Kind: kind, Node: client(), D: pick(b.c, "slow", []engine.Duration{200 * engine.Millisecond, 0})})
	default: // partition, heal, disconnect, connect
		b.add(sim.Op{Kind: kind, Node: client()})
	}
}

// GenCase builds a bounded run from c's choices: a preset, profile, version
// and scenario from spec, a seed, maybe small flow-control windows
// (windows), a prelude (every client connects, every subscriber
// subscribes), up to MaxSteps steps (publish, advance, crash,
// restart, stop, partition, heal, slow, disconnect, connect, lose-qos2)
// and a final advance; with CrashAt, maybe a sweep of one node's
// crash points. The liveness phase (sim.Run) heals everything afterwards.
func GenCase(c Chooser, spec PlanSpec) (Case, error) {
	spec, err := spec.withDefaults()
	if err != nil {
		return Case{}, err
	}
	cfg := sim.Config{
		Preset:   pick(c, "preset", spec.Presets),
		Profile:  pick(c, "profile", spec.Profiles),
		Version:  pick(c, "version", spec.Versions),
		Scenario: pick(c, "scenario", spec.Scenarios),
		Seed:     uint64(c.Choose("seed", 1<<16)),
	}
	scen, _ := sim.ScenarioByName(cfg.Scenario)
	b := newPlanBuilder(c, scen)
	b.windows(cfg.Version)
	b.prelude()
	preludeOps := len(b.ops)
	steps := c.Choose("steps", spec.MaxSteps+1)
	for range steps {
		b.step()
	}
	b.add(sim.Op{Kind: sim.OpAdvance, D: engine.Second})
	cs := Case{Config: cfg, Plan: sim.Plan{Ops: b.ops}}
	if spec.CrashAt && c.Choose("crash-sweep", 3) > 0 {
		// The crash point is drawn among those after the prelude, where the
		// messages are: zero is the first point of the workload.
		node := pick(c, "crash-node", b.nodes)
		pre := Case{Config: cs.Config, Plan: sim.Plan{Ops: cs.Plan.Ops[:preludeOps]}}
		first, all := crashPoints(pre, node), crashPoints(cs, node)
		if span := all - first; span > 0 {
			from := first + 1
			if span > MaxSweep {
				from += c.Choose("sweep-start", span-MaxSweep+1)
			}
			cs.Sweep = &Sweep{Node: node, From: from, To: min(all, from+MaxSweep-1)}
		}
	}
	if spec.Source != nil {
		cs.Config.Source = spec.Source()
	}
	cs.Plan.Header = sim.HeaderOf(cs.Config)
	return cs, nil
}

// crashPoints counts node's crash points in the safety phase of a case run
// in exhaustive mode at a point it never reaches (so no random crash point
// fires either, as in the crash-at run it prepares).
func crashPoints(cs Case, node string) int {
	cfg := cs.Config
	cfg.Crash = sim.CrashMode{Node: node, K: math.MaxInt32}
	r := sim.Run(cfg, cs.Plan)
	if r.Err != nil {
		return 0
	}
	return r.CrashPoints[node]
}
