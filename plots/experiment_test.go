package plots

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
)

// TestRegistry checks the five experiments, their order and ByName.
func TestRegistry(t *testing.T) {
	want := []string{"ack-order", "retransmit", "unknown-pubrel", "qos2-state", "broker-persistence"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, name := range want {
		e, err := ByName(name)
		if err != nil || e.Name != name {
			t.Errorf("ByName(%q) = %q, %v", name, e.Name, err)
		}
	}
	_, err := ByName("ack-ordr")
	if !errors.Is(err, ErrUnknownExperiment) || !containsAll(err.Error(), append([]string{`"ack-ordr"`}, want...)...) {
		t.Errorf("ByName(unknown) error %v, want ErrUnknownExperiment listing every valid name", err)
	}
}

// TestExperimentDefinitions checks every registered experiment apart from
// its trial function: titles, probabilities, at least a legacy and a fixed
// variant, and a fault and failure kind.
func TestExperimentDefinitions(t *testing.T) {
	for _, e := range Experiments() {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		if e.Doc == "" || e.Title == "" || e.XLabel == "" || e.YLabel == "" {
			t.Errorf("%s: missing doc or titles", e.Name)
		}
		if e.Fault == 0 || e.Failure == 0 {
			t.Errorf("%s: no fault or failure kind", e.Name)
		}
		if e.Xs[0] != 0 {
			t.Errorf("%s: the sweep should start at x=0 (no faults), starts at %v", e.Name, e.Xs[0])
		}
		first, last := e.Variants[0], e.Variants[len(e.Variants)-1]
		if !strings.Contains(first.Label, "legacy") || !strings.Contains(last.Label, "fixed") {
			t.Errorf("%s: variants should run from legacy to fixed, got %q .. %q", e.Name, first.Label, last.Label)
		}
	}
}

// TestVariantsDifferInOneKnob checks that each variant is the engine's fixed
// preset with only its experiment's knob changed, and that the last variant
// is the fixed preset itself.
func TestVariantsDifferInOneKnob(t *testing.T) {
	fixed, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	knobs := map[string]func(engine.Preset) any{
		"ack-order":          func(p engine.Preset) any { return p.Client.AckOrder },
		"retransmit":         func(p engine.Preset) any { return p.Client.Retransmit },
		"unknown-pubrel":     func(p engine.Preset) any { return p.Client.UnknownPubrel },
		"qos2-state":         func(p engine.Preset) any { return p.Client.IncomingQoS2 },
		"broker-persistence": func(p engine.Preset) any { return p.Broker.Persistence },
	}
	for _, e := range Experiments() {
		knob := knobs[e.Name]
		seen := map[any]bool{}
		for _, v := range e.Variants {
			if seen[knob(v.Preset)] {
				t.Errorf("%s: variant %s repeats knob value %v", e.Name, v.Name, knob(v.Preset))
			}
			seen[knob(v.Preset)] = true
			// Put the knob back to fixed: what remains must equal fixed.
			restored := restoreKnob(e.Name, v.Preset, fixed)
			if !reflect.DeepEqual(restored.Client, fixed.Client) || !reflect.DeepEqual(restored.Broker, fixed.Broker) {
				t.Errorf("%s: variant %s changes more than its knob: %+v", e.Name, v.Name, v.Preset)
			}
		}
		if last := e.Variants[len(e.Variants)-1].Preset; !reflect.DeepEqual(last.Client, fixed.Client) || !reflect.DeepEqual(last.Broker, fixed.Broker) {
			t.Errorf("%s: last variant is not the fixed policy", e.Name)
		}
	}
}

// restoreKnob returns p with the knob of experiment name set as in fixed.
func restoreKnob(name string, p, fixed engine.Preset) engine.Preset {
	switch name {
	case "ack-order":
		p.Client.AckOrder = fixed.Client.AckOrder
	case "retransmit":
		p.Client.Retransmit = fixed.Client.Retransmit
	case "unknown-pubrel":
		p.Client.UnknownPubrel = fixed.Client.UnknownPubrel
		p.Client.UnknownPubrec = fixed.Client.UnknownPubrec
	case "qos2-state":
		p.Client.IncomingQoS2 = fixed.Client.IncomingQoS2
	case "broker-persistence":
		p.Broker.Persistence = fixed.Broker.Persistence
		p.Broker.SnapshotEvery = fixed.Broker.SnapshotEvery
	}
	return p
}
