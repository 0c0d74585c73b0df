package plots

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
)

// ErrUnknownExperiment is returned by ByName for a name not in the registry.
var ErrUnknownExperiment = errors.New("plots: unknown experiment")

// ErrBadExperiment is returned for an experiment definition that cannot run.
var ErrBadExperiment = errors.New("plots: bad experiment")

// Variant is one policy an experiment measures: a short Name (the CSV's
// variant column), a legend Label, and the engine policies it runs with.
type Variant struct {
	Name   string
	Label  string
	Preset engine.Preset
}

// TrialFunc runs one simulated run of variant at fault probability x with
// the given seed and reports whether it failed in the experiment's sense. It
// must be a pure function of its arguments, safe to call concurrently.
type TrialFunc func(v Variant, x float64, seed uint64) (failed bool, err error)

// ReplayFunc returns the plan file text of the run TrialFunc makes of
// variant at x with seed, so a failing trial can be replayed.
type ReplayFunc func(v Variant, x float64, seed uint64) (string, error)

// Experiment is a named failure-rate sweep: for every x in Xs and every
// variant, Trials runs of Trial.
type Experiment struct {
	Name     string
	Doc      string
	Title    string
	XLabel   string // the swept fault probability, without unit
	YLabel   string // the failure counted, without unit
	Xs       []float64
	Variants []Variant
	Fault    Fault      // what x is the probability of
	Failure  Failure    // what counts a run as failed
	Trial    TrialFunc  // one run
	Replay   ReplayFunc // optional: the plan file of one run, for Sweep.Replays
}

// Validate reports the first problem that keeps the experiment from running.
func (e Experiment) Validate() error {
	if e.Name == "" {
		return fmt.Errorf("%w: no name", ErrBadExperiment)
	}
	if len(e.Xs) == 0 {
		return fmt.Errorf("%w: %s has no x values", ErrBadExperiment, e.Name)
	}
	for _, x := range e.Xs {
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("%w: %s: x %v is not a probability in [0, 1]", ErrBadExperiment, e.Name, x)
		}
	}
	if len(e.Variants) == 0 {
		return fmt.Errorf("%w: %s has no variants", ErrBadExperiment, e.Name)
	}
	seen := map[string]bool{}
	for _, v := range e.Variants {
		if v.Name == "" || seen[v.Name] {
			return fmt.Errorf("%w: %s: variant name %q is empty or repeated", ErrBadExperiment, e.Name, v.Name)
		}
		seen[v.Name] = true
		if v.Preset.Name == "" {
			return fmt.Errorf("%w: %s: variant %s has no engine preset", ErrBadExperiment, e.Name, v.Name)
		}
	}
	if e.Trial == nil {
		return fmt.Errorf("%w: %s has no trial function", ErrBadExperiment, e.Name)
	}
	return nil
}

// labels maps each variant name to its legend label.
func (e Experiment) labels() map[string]string {
	m := make(map[string]string, len(e.Variants))
	for _, v := range e.Variants {
		m[v.Name] = v.Label
	}
	return m
}

// Experiments returns the registered experiments, in a fixed order.
func Experiments() []Experiment {
	exps := []Experiment{
		ackOrder(),
		retransmit(),
		unknownPubrel(),
		qos2State(),
		brokerPersistence(),
	}
	for i := range exps {
		exps[i].Trial = simTrial(exps[i].Fault, exps[i].Failure)
		exps[i].Replay = simReplay(exps[i])
	}
	return exps
}

// Names returns the names of the registered experiments, in registry order.
func Names() []string {
	var names []string
	for _, e := range Experiments() {
		names = append(names, e.Name)
	}
	return names
}

// ByName returns the registered experiment called name.
func ByName(name string) (Experiment, error) {
	for _, e := range Experiments() {
		if e.Name == name {
			return e, nil
		}
	}
	return Experiment{}, fmt.Errorf("%w %q: valid names are %s", ErrUnknownExperiment, name, strings.Join(Names(), ", "))
}
