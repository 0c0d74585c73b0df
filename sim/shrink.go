package sim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/mqttlab/mqttlab/model"
)

// ErrNotFailing is returned by Shrink when the run of the plan to shrink
// does not violate the target invariant (or nothing at all).
var ErrNotFailing = errors.New("sim: the run does not fail")

// ShrinkOptions configures Shrink. The zero value shrinks towards the
// first violation model.CheckPromised reports, with no bound.
type ShrinkOptions struct {
	// Judge returns the violations a run is held to, sorted by step. Nil
	// uses Result.Violations (model.CheckPromised), which needs a Config
	// without SkipCheck. A Judge must be done with the Result (its History)
	// when it returns: the candidates run on one Runner.
	Judge func(Result) []model.Violation
	// Target is the invariant every accepted candidate must still violate
	// (at any step). Zero: the invariant of the original run's first
	// violation.
	Target model.Invariant
	// MaxRuns bounds the candidate runs (0: no bound). A bound in runs keeps
	// the result deterministic.
	MaxRuns int
	// Stop is asked before each candidate run; true ends the shrink with
	// the smallest failing plan found so far (a deadline, a Ctrl-C). The
	// result is then as deterministic as the moment Stop said so.
	Stop func() bool
	// Progress, if set, is called after each candidate run.
	Progress func(ShrinkProgress)

	// acceptAny is a deliberate bug for the canary test: accept a
	// candidate that fails with any invariant, not only the target.
	acceptAny bool
}

// ShrinkProgress is the state of a shrink after a candidate run.
type ShrinkProgress struct {
	Ops      int    // ops of the smallest failing plan so far
	Runs     int    // candidates run so far
	Accepted int    // candidates that still failed (each became the plan)
	Pass     string // the pass running: "delete", "simplify", ...
}

// Shrunk is the outcome of Shrink: the smallest failing plan found and the
// config it replays under (its header: a simplified fault profile is a
// faults line).
type Shrunk struct {
	Config Config
	Plan   Plan
	// Target is the invariant the plan violates; Violation is its first
	// violation in the shrunk plan's run.
	Target    model.Invariant
	Violation model.Violation
	FromOps   int // ops of the plan given
	Runs      int // candidate runs (the original's run not counted)
	Accepted  int // candidates that still failed
	Invalid   int // candidates refused by ValidatePlan without a run
	// Stopped is true when Stop or MaxRuns ended the shrink before a round
	// in which no single change kept the failure.
	Stopped bool
}

// Shrink reduces plan while its run under cfg still violates the same
// invariant (by name; the step may move). It deletes ops (halving chunks,
// then smaller ones down to single ops, every op of a node or of a kind,
// a fault with its repair), merges adjacent advances, simplifies op
// arguments towards the benign zero (lower QoS, no retain, no clean start,
// shorter and rounder durations, short message ids) and the fault profile
// (probabilities to zero, ranges to their minimum), in rounds, until a
// whole round changes nothing: then no single change of those kinds keeps
// the failure. Every candidate is a real run; a candidate that ValidatePlan
// refuses, or whose run errs, is not accepted. Shrink is deterministic: the
// same config, plan and options (without a Stop that fires) give the same
// Shrunk. It returns ErrNotFailing when the plan's own run does not fail.
func Shrink(cfg Config, plan Plan, opts ShrinkOptions) (Shrunk, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Shrunk{}, err
	}
	if err := ValidatePlan(cfg, plan); err != nil {
		return Shrunk{}, err
	}
	s := &shrinker{opts: opts, scen: mustScenario(cfg.Scenario), seen: map[uint64]bool{}}
	s.rn.ReuseHistories = true
	if s.opts.Judge == nil {
		s.opts.Judge = func(r Result) []model.Violation { return r.Violations }
	}
	if err := s.start(cfg, plan); err != nil {
		return Shrunk{}, err
	}
	for !s.stopped {
		before := s.accepted
		s.round()
		if s.accepted == before {
			if s.stage == len(reseedTries)-1 {
				break
			}
			s.stage++ // the next stage: deletions reroll the run's draws with more seeds
		}
	}
	return s.result(), nil
}

// mustScenario returns a validated config's scenario.
func mustScenario(name string) Scenario {
	scen, _ := ScenarioByName(name)
	return scen
}

// shrinker is the state of one Shrink: the smallest failing plan so far
// and the counters.
type shrinker struct {
	opts     ShrinkOptions
	scen     Scenario
	rn       Runner
	target   model.Invariant
	cfg      Config // the config of the best plan
	ops      []Op   // the best plan's ops
	viol     model.Violation
	from     int
	runs     int
	accepted int
	invalid  int
	stopped  bool
	pass     string
	// stage indexes reseedTries: from the second stage on, a deletion that
	// no longer fails with the plan's seed is tried with that many other
	// seeds too.
	stage int
	// crashes are the best plan's crashes at random crash points, with
	// their restarts, and resets its random connection resets and
	// half-opens, as plan ops at their virtual times.
	crashes, resets []timedOp
	// pinnedExact is set once pinFaults has pinned faults with the random
	// ones left on (it does so once).
	pinnedExact bool
	seen        map[uint64]bool // candidates already run (by the hash of their text)
}

// start runs the original plan and fixes the target.
func (s *shrinker) start(cfg Config, plan Plan) error {
	s.cfg, s.ops, s.from = cfg, slices.Clone(plan.Ops), len(plan.Ops)
	r := s.rn.Run(cfg, Plan{Header: HeaderOf(cfg), Ops: plan.Ops})
	if r.Err != nil {
		return r.Err
	}
	vs := s.opts.Judge(r)
	s.target = s.opts.Target
	if s.target == 0 && len(vs) > 0 {
		s.target = vs[0].Invariant
	}
	v, ok := s.find(vs)
	if !ok {
		if s.target == 0 {
			return fmt.Errorf("%w: no violation", ErrNotFailing)
		}
		return fmt.Errorf("%w: no %s violation", ErrNotFailing, s.target)
	}
	s.viol = v
	s.noteFaults(r, plan.Ops)
	s.seen[s.key(cfg, plan.Ops)] = true
	return nil
}

// find returns the first violation of the target in vs.
func (s *shrinker) find(vs []model.Violation) (model.Violation, bool) {
	for _, v := range vs {
		if v.Invariant == s.target || (s.opts.acceptAny && len(vs) > 0) {
			return v, true
		}
	}
	return model.Violation{}, false
}

// key identifies a candidate: the FNV-64a of its plan text.
func (s *shrinker) key(cfg Config, ops []Op) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(Plan{Header: HeaderOf(cfg), Ops: ops}.String()))
	return h.Sum64()
}

// try runs a candidate and makes it the best plan if it still fails with
// the target. ops must not alias s.ops.
func (s *shrinker) try(cfg Config, ops []Op) bool {
	if s.stopped {
		return false
	}
	if (s.opts.MaxRuns > 0 && s.runs >= s.opts.MaxRuns) || (s.opts.Stop != nil && s.opts.Stop()) {
		s.stopped = true
		return false
	}
	if ValidatePlan(cfg, Plan{Ops: ops}) != nil {
		s.invalid++
		return false
	}
	k := s.key(cfg, ops)
	if s.seen[k] {
		return false
	}
	s.seen[k] = true
	s.runs++
	r := s.rn.Run(cfg, Plan{Header: HeaderOf(cfg), Ops: ops})
	ok := false
	if r.Err == nil {
		var v model.Violation
		if v, ok = s.find(s.opts.Judge(r)); ok {
			s.cfg, s.ops, s.viol = cfg, ops, v
			s.noteFaults(r, ops)
			s.accepted++
		}
	}
	if s.opts.Progress != nil {
		s.opts.Progress(ShrinkProgress{Ops: len(s.ops), Runs: s.runs, Accepted: s.accepted, Pass: s.pass})
	}
	return ok
}

// tryOps is try with the best plan's config.
func (s *shrinker) tryOps(ops []Op) bool { return s.try(s.cfg, ops) }

// result is the Shrunk of the best plan.
func (s *shrinker) result() Shrunk {
	return Shrunk{Config: s.cfg, Plan: Plan{Header: HeaderOf(s.cfg), Ops: s.ops}, Target: s.target, Violation: s.viol,
		FromOps: s.from, Runs: s.runs, Accepted: s.accepted, Invalid: s.invalid, Stopped: s.stopped}
}

// ValidatePlan checks that every op of plan can run in cfg's scenario: a
// known node (a client of the scenario or one a node op declared before;
// the broker only for crash, restart, stop and node, and a node op for the
// broker before any connect), no client declared twice, the arguments its
// kind needs, QoS at most 2, no negative duration, and each published
// message id used once. Errors wrap ErrPlan and name the op.
func ValidatePlan(cfg Config, plan Plan) error {
	scen, err := ScenarioByName(cfg.Scenario)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	v := planCheck{scen: scen, msgs: map[string]bool{}, declared: map[string]bool{}}
	for _, c := range scen.Clients {
		v.declared[c] = true
	}
	for i, op := range plan.Ops {
		if err := v.op(op); err != nil {
			return fmt.Errorf("%w: op %d (%s): %v", ErrPlan, i+1, op, err)
		}
	}
	return nil
}

// planCheck is ValidatePlan's state: the message ids published and the
// clients known so far, and whether a client connected yet.
type planCheck struct {
	scen      Scenario
	msgs      map[string]bool
	declared  map[string]bool
	connected bool
}

// op checks one op and notes what it declares or publishes.
func (v *planCheck) op(op Op) error {
	if op.Kind < OpConnect || op.Kind > lastOpKind {
		return errors.New("unknown op kind")
	}
	if op.D < 0 {
		return errors.New("negative duration")
	}
	switch {
	case op.Kind == OpAdvance:
		if op.Node != "" {
			return errors.New("advance names no node")
		}
		return nil
	case op.Kind == OpNode:
		return v.node(op)
	case op.Node == BrokerName:
		if clientOnly(op.Kind) {
			return errors.New("acts on a client, not the broker")
		}
	case !v.declared[op.Node]:
		return fmt.Errorf("no node %q in scenario %s or declared before", op.Node, v.scen.Name)
	}
	if op.QoS > 2 {
		return fmt.Errorf("qos %d is not 0, 1 or 2", op.QoS)
	}
	if err := op.validate(); err != nil {
		return err
	}
	v.connected = v.connected || op.Kind == OpConnect
	if op.Kind == OpPublish {
		if v.msgs[op.Msg] {
			return fmt.Errorf("message id %q published twice", op.Msg)
		}
		v.msgs[op.Msg] = true
	}
	return nil
}

// node checks a node op: the broker's before any connect, a client's
// once.
func (v *planCheck) node(op Op) error {
	if op.Cfg == nil {
		return errors.New("node op without its configuration")
	}
	if err := op.validate(); err != nil {
		return err
	}
	if op.Node == BrokerName {
		if v.connected {
			return errors.New("node broker must come before any connect")
		}
		return nil
	}
	if v.declared[op.Node] {
		return fmt.Errorf("node %s declared twice (or a client of scenario %s)", op.Node, v.scen.Name)
	}
	v.declared[op.Node] = true
	return nil
}

// Commented returns the plan file text (String) headed by comment lines,
// each written as "# " and the line: a shrunk plan's file says where it
// came from. The end line's checksum covers the comments too, so the file
// still proves it is whole.
func (p Plan) Commented(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("# " + strings.ReplaceAll(l, "\n", " ") + "\n")
	}
	text := p.String()
	if p.Header.Format < PlanFormat {
		return b.String() + text
	}
	body, _, _ := strings.Cut(text, "\nend ops=")
	b.WriteString(body + "\n")
	appendEndLine(&b, len(p.Ops), linesCRC(b.String()))
	return b.String()
}
