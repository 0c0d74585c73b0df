package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
)

// ErrUnknownScenario is wrapped by lookups of a scenario that does not exist.
var ErrUnknownScenario = errors.New("sim: unknown scenario")

// Scenario is a named deployment and workload. With a seed and a profile it
// generates a Plan.
type Scenario struct {
	Name      string
	Doc       string
	Clients   []string        // client ids, besides the broker
	KeepAlive engine.Duration // the clients' keep-alive
	gen       func(g *planGen)
	opsHint   int // room for the ops of a generated plan: most fit
}

// Scenarios lists the scenarios.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "standard", Doc: "1 broker, 2 publishers, 2 persistent subscribers, 100 messages each at mixed QoS over 3 topics, keep-alive 60s",
			Clients: []string{"p1", "p2", "s1", "s2"}, KeepAlive: 60 * engine.Second, gen: genStandard, opsHint: 512},
		{Name: "small", Doc: "1 publisher, 1 subscriber, one QoS1 and one QoS2 message, no plan-level faults (for exhaustive crash points)",
			Clients: []string{"p1", "s1"}, KeepAlive: 60 * engine.Second, gen: genSmall, opsHint: 8},
		{Name: SwarmScenario, Doc: "the workload drawn from the seed (clients, versions, sessions, subscriptions, retained, wills, expiry, windows, keep-alive, payloads; see -workload), keep-alive 60s unless drawn",
			KeepAlive: 60 * engine.Second, gen: genSwarm, opsHint: 512},
	}
}

// ScenarioByName returns the named scenario.
func ScenarioByName(name string) (Scenario, error) {
	var names []string
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scenario{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownScenario, name, strings.Join(names, ", "))
}

// Generate draws the plan of cfg's scenario from its seed (the plan stream)
// and its profile's plan-level fault probabilities.
func Generate(cfg Config) (Plan, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Plan{}, err
	}
	pr, plan, _ := cfg.streams()
	scen, _ := ScenarioByName(cfg.Scenario)
	g := &planGen{r: plan, feat: cfg.featureStream(plan), wrapR: cfg.wrapStream(plan), more: cfg.moreStream(plan), maxR: cfg.brokerMaxStream(plan), opts: cfg.optionsStream(plan), accR: cfg.accessStream(plan), prof: cfg.profile().resolve(pr), scen: scen, wl: cfg.Workload, down: map[string]bool{}, cut: map[string]bool{},
		clients: scen.Clients, subs: scen.subscribers()}
	g.ops = make([]Op, 0, scen.opsHint)
	scen.gen(g)
	g.flushAll()
	return Plan{Header: HeaderOf(cfg), Ops: g.ops}, nil
}

// HeaderOf returns the plan header that replays cfg: with a faults line
// when cfg has a custom profile, and a policy line when its preset's
// policies are not those of the engine preset of its name.
func HeaderOf(cfg Config) Header {
	return Header{Format: PlanFormat, Seed: cfg.Seed, Profile: cfg.Profile, Preset: cfg.Preset.Name,
		Scenario: cfg.Scenario, Version: cfg.Version, CrashNode: cfg.Crash.Node, CrashK: cfg.Crash.K,
		Faults: headerFaults(cfg), Policy: headerPolicy(cfg), Workload: cfg.Workload}
}

// ConfigOf returns the config a plan header asks for: the preset from the
// policy line under the header's preset name, or looked up by name; the
// custom profile from the faults line. Errors wrap ErrConfig.
func ConfigOf(h Header) (Config, error) {
	cfg := Config{Seed: h.Seed, Profile: h.Profile, Scenario: h.Scenario, Version: h.Version,
		Crash: CrashMode{Node: h.CrashNode, K: h.CrashK}, Workload: h.Workload}
	if h.Faults != nil {
		p := *h.Faults
		cfg.Custom = &p
	}
	if h.Preset != "" || h.Policy != nil {
		p, err := presetOf(h)
		if err != nil {
			return Config{}, err
		}
		cfg.Preset = p
	}
	return cfg.withDefaults()
}

// planGen builds a plan: workload ops, with plan-level faults drawn between
// workload steps and their repairs scheduled a few steps later.
type planGen struct {
	r    *Rand
	feat *Rand // the swarm's later dimensions (Config.featureStream)
	// wrapR draws the swarm's wrap dimension (Config.wrapStream).
	wrapR *Rand
	// more draws the swarm's newest dimensions (Config.moreStream).
	more *Rand
	// maxR draws the swarm's brokermax dimension (Config.brokerMaxStream).
	maxR *Rand
	// opts draws the swarm's broker options (Config.optionsStream).
	opts *Rand
	// accR draws the swarm's access dimension (Config.accessStream).
	accR *Rand
	prof Profile
	scen Scenario
	wl   Workload
	ops  []Op
	// clients are the clients plan-level faults pick from, subs those
	// that may lose their incoming QoS2 state.
	clients, subs []string
	step          int
	later         []laterOp
	down          map[string]bool // crashed, restart pending
	cut           map[string]bool // partitioned or slow, repair pending
}

type laterOp struct {
	step int
	op   Op
}

func (g *planGen) add(op Op) { g.ops = append(g.ops, op) }

func (g *planGen) advance(d engine.Duration) { g.add(Op{Kind: OpAdvance, D: d}) }

// tick ends a workload step: due repairs first, then new faults.
func (g *planGen) tick() {
	g.step++
	keep := g.later[:0]
	for _, l := range g.later {
		if l.step <= g.step {
			g.repair(l.op)
		} else {
			keep = append(keep, l)
		}
	}
	g.later = keep
	g.faults()
}

func (g *planGen) repair(op Op) {
	switch op.Kind {
	case OpRestart:
		delete(g.down, op.Node)
	case OpHeal, OpSlow:
		delete(g.cut, op.Node)
	}
	g.add(op)
}

// flushAll emits every pending repair.
func (g *planGen) flushAll() {
	for _, l := range g.later {
		g.repair(l.op)
	}
	g.later = nil
}

// faults draws the plan-level faults of one step.
func (g *planGen) faults() {
	p := g.prof
	if g.r.PPM(p.CrashPPM) {
		nodes := append([]string{BrokerName}, g.clients...)
		if n := Pick(g.r, nodes); !g.down[n] {
			g.down[n] = true
			g.add(Op{Kind: OpCrash, Node: n})
			g.later = append(g.later, laterOp{g.step + 1 + g.r.IntN(10), Op{Kind: OpRestart, Node: n}})
		}
	}
	if g.r.PPM(p.PartitionPPM) {
		if n := Pick(g.r, g.clients); !g.cut[n] {
			g.cut[n] = true
			g.add(Op{Kind: OpPartition, Node: n})
			g.later = append(g.later, laterOp{g.step + 1 + g.r.IntN(20), Op{Kind: OpHeal, Node: n}})
		}
	}
	if g.r.PPM(p.SlowPPM) {
		if n := Pick(g.r, g.clients); !g.cut[n] {
			g.cut[n] = true
			g.add(Op{Kind: OpSlow, Node: n, D: p.SlowExtra})
			g.later = append(g.later, laterOp{g.step + 1 + g.r.IntN(20), Op{Kind: OpSlow, Node: n}})
		}
	}
	if g.r.PPM(p.StateLossPPM) {
		if n := Pick(g.r, g.subs); !g.down[n] {
			g.add(Op{Kind: OpLoseQoS2, Node: n})
		}
	}
}

// subscribers returns the clients whose id starts with "s".
func (s Scenario) subscribers() []string {
	var out []string
	for _, c := range s.Clients {
		if strings.HasPrefix(c, "s") {
			out = append(out, c)
		}
	}
	return out
}

// genStandard: connect all, subscribe, 100 messages from each publisher
// interleaved, mixed QoS over three topics, a short pause between each.
func genStandard(g *planGen) {
	for _, c := range g.scen.Clients {
		g.add(Op{Kind: OpConnect, Node: c})
	}
	g.advance(100 * ms)
	g.add(Op{Kind: OpSubscribe, Node: "s1", Topic: "t/#", QoS: 2})
	g.add(Op{Kind: OpSubscribe, Node: "s2", Topic: "t/a", QoS: 1})
	g.add(Op{Kind: OpSubscribe, Node: "s2", Topic: "t/b", QoS: 2})
	g.advance(200 * ms)
	topics := []string{"t/a", "t/b", "t/c"}
	qos := []uint8{1, 2, 0}
	pubs := standardPubs
	msgs := standardIDs
	for i := 0; i < standardCount; i++ {
		p, msg := pubs[i%2], msgs[i]
		g.add(Op{Kind: OpPublish, Node: p, Topic: Pick(g.r, topics), QoS: Pick(g.r, qos), Msg: msg})
		g.advance(engine.Duration(g.r.Between(int64(ms), int64(50*ms))))
		g.tick()
	}
	g.advance(2 * engine.Second)
}

// The standard scenario's publishers and message ids: the same for every
// seed, so built once (strings are immutable; nothing writes these).
var (
	standardPubs = [2]string{"p1", "p2"}
	standardIDs  = standardMsgs(standardPubs, standardCount)
)

// standardCount is how many messages the standard scenario publishes.
const standardCount = 200

// standardMsgs returns the message ids of genStandard's n publishes, which
// alternate between the two publishers: "p1-1", "p2-1", "p1-2", ... All
// share one string (one allocation, not one or two per message).
func standardMsgs(pubs [2]string, n int) []string {
	var buf []byte
	ends := make([]int, n)
	for i := range n {
		buf = append(buf, pubs[i%2]...)
		buf = append(buf, '-')
		buf = strconv.AppendInt(buf, int64(1+i/2), 10)
		ends[i] = len(buf)
	}
	all := string(buf)
	msgs := make([]string, n)
	start := 0
	for i, end := range ends {
		msgs[i], start = all[start:end], end
	}
	return msgs
}

// genSmall: one QoS1 and one QoS2 message from p1 to s1, no faults.
func genSmall(g *planGen) {
	g.add(Op{Kind: OpConnect, Node: "p1"})
	g.add(Op{Kind: OpConnect, Node: "s1"})
	g.advance(100 * ms)
	g.add(Op{Kind: OpSubscribe, Node: "s1", Topic: "t/#", QoS: 2})
	g.advance(200 * ms)
	g.add(Op{Kind: OpPublish, Node: "p1", Topic: "t/a", QoS: 1, Msg: "p1-1"})
	g.add(Op{Kind: OpPublish, Node: "p1", Topic: "t/a", QoS: 2, Msg: "p1-2"})
	g.advance(1 * engine.Second)
}
