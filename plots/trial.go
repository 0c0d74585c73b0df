package plots

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// ErrSim is wrapped by a trial whose simulated run did not complete.
var ErrSim = errors.New("plots: simulated run failed")

// scenario is the sim scenario every experiment runs: one broker, two
// publishers, two persistent subscribers, 200 messages at mixed QoS.
const scenario = "standard"

// crashStream is the PCG stream that draws a trial's crash point, apart from
// the sim's own streams of the same seed.
const crashStream = 0x5eed_c4a5_0000_0001

// maxCrashPoints bounds the crash-point draw: a first crash later than this
// is no crash (no node of the standard scenario passes that many points).
const maxCrashPoints = 1 << 20

// simTrial returns the trial function of an experiment: one run of the
// standard scenario with the variant's engine preset and the fault at
// probability x, counted as failed when model.Check finds a violation of the
// failure's invariants in its history. Every variant, promised or not, is
// judged by the same invariants: the legacy ones are there to fail. A run
// that does not complete returns an ErrSim error holding its plan file.
func simTrial(fault Fault, failure Failure) TrialFunc {
	return func(v Variant, x float64, seed uint64) (bool, error) {
		only := invariants(failure)
		if only == 0 {
			return false, fmt.Errorf("%w: unknown failure kind %d", ErrBadExperiment, failure)
		}
		cfg, err := trialConfig(fault, v, x, seed)
		if err != nil {
			return false, err
		}
		plan, err := sim.Generate(cfg)
		if err != nil {
			return false, fmt.Errorf("%w: %w", ErrSim, err)
		}
		res := sim.Run(cfg, plan)
		if res.Err != nil {
			return false, fmt.Errorf("%w: %w\nplan (save as FILE and run: simrun replay FILE):\n%s", ErrSim, res.Err, plan)
		}
		return len(model.Check(res.History(), model.Options{Only: only})) > 0, nil
	}
}

// TrialPlan returns the plan file of one simulated trial: experiment exp,
// variant v, fault probability x, trial seed (the seed an error of Measure
// names). Its header carries the trial's custom profile (faults line) and,
// for a variant whose preset engine does not name, its policies (policy
// line), so "simrun replay FILE" runs the trial again, checksum and all.
func TrialPlan(exp Experiment, v Variant, x float64, seed uint64) (sim.Plan, error) {
	cfg, err := trialConfig(exp.Fault, v, x, seed)
	if err != nil {
		return sim.Plan{}, err
	}
	plan, err := sim.Generate(cfg)
	if err != nil {
		return sim.Plan{}, fmt.Errorf("%w: %w", ErrSim, err)
	}
	return plan, nil
}

// simReplay is the ReplayFunc of a registered experiment: the text of
// TrialPlan.
func simReplay(exp Experiment) ReplayFunc {
	return func(v Variant, x float64, seed uint64) (string, error) {
		plan, err := TrialPlan(exp, v, x, seed)
		if err != nil {
			return "", err
		}
		return plan.String(), nil
	}
}

// trialConfig is the sim config of one trial: the calm profile (no fault
// but the experiment's own) and the fault at probability x.
func trialConfig(fault Fault, v Variant, x float64, seed uint64) (sim.Config, error) {
	prof, err := sim.ProfileByName("calm")
	if err != nil {
		return sim.Config{}, fmt.Errorf("%w: %w", ErrSim, err)
	}
	cfg := sim.Config{Seed: seed, Custom: &prof, Preset: v.Preset, Scenario: scenario}
	switch fault {
	case FaultSubscriberStateLoss:
		prof.StateLossPPM = ppm(x)
	case FaultSubscriberCrash, FaultPublisherReboot, FaultBrokerCrash:
		if k := firstCrash(seed, ppm(x)); k > 0 {
			cfg.Crash = sim.CrashMode{Node: crashNode(fault), K: k}
		}
	default:
		return sim.Config{}, fmt.Errorf("%w: unknown fault %d", ErrBadExperiment, fault)
	}
	return cfg, nil
}

// crashNode is the node a crash fault hits.
func crashNode(f Fault) string {
	switch f {
	case FaultPublisherReboot:
		return "p1"
	case FaultBrokerCrash:
		return sim.BrokerName
	}
	return "s1"
}

// firstCrash draws, with probability p per million at each crash point, the
// index (from 1) of the first crash point that fires, or 0 if none does
// within maxCrashPoints. The sim's exhaustive mode then crashes the node
// there and nowhere else: the run has at most one crash.
func firstCrash(seed uint64, p int) int {
	if p <= 0 {
		return 0
	}
	r := rand.New(rand.NewPCG(seed, crashStream))
	for k := 1; k <= maxCrashPoints; k++ {
		if r.IntN(1_000_000) < p {
			return k
		}
	}
	return 0
}

// ppm converts a probability to an integer per million.
func ppm(x float64) int { return int(math.Round(x * 1e6)) }

// invariants is the set of model invariants whose violation is the failure.
func invariants(f Failure) model.Set {
	switch f {
	case FailLoss:
		return model.SetOf(model.NoLoss)
	case FailStuck:
		return model.SetOf(model.NoStuck, model.PubrelAnswered)
	case FailDuplicate:
		return model.SetOf(model.QoS2ExactlyOnce)
	}
	return 0
}
