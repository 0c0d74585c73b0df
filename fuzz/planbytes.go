package fuzz

import (
	"errors"
	"fmt"

	fuzzheaders "github.com/AdaLogics/go-fuzz-headers"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/properties"
	"github.com/mqttlab/mqttlab/sim"
)

// ErrNoInput is returned by PlanFromBytes for an empty input.
var ErrNoInput = errors.New("fuzz: empty input")

// consumerChooser makes a plan's choices from go-fuzz-headers' consumer,
// one byte a choice (two for more than 256 candidates); a used-up input
// chooses 0, the simplest candidate.
type consumerChooser struct {
	c    *fuzzheaders.ConsumeFuzzer
	used int
}

func (k *consumerChooser) byte() int {
	b, err := k.c.GetByte()
	if err != nil {
		return 0
	}
	k.used++
	return int(b)
}

// Choose implements properties.Chooser.
func (k *consumerChooser) Choose(_ string, n int) int {
	if n <= 1 {
		return 0
	}
	x := k.byte()
	if n > 256 {
		x = x<<8 | k.byte()
	}
	return x % n
}

// fuzzPresets are the engine configurations the simulated-plan fuzz target chooses from: the
// presets that keep every fix (no legacy knob, no mutation).
func fuzzPresets() ([]engine.Preset, error) {
	var out []engine.Preset
	for _, name := range []string{"fixed", "broker-periodic"} {
		p, err := engine.PresetByName(name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// choosePreset picks a non-legacy preset, or the fixed preset with random
// fix-compatible settings: a memory or durable retransmit store, and
// every-change or periodic broker persistence with a snapshot interval.
func choosePreset(k properties.Chooser) (engine.Preset, error) {
	named, err := fuzzPresets()
	if err != nil {
		return engine.Preset{}, err
	}
	i := k.Choose("preset", len(named)+1)
	if i < len(named) {
		return named[i], nil
	}
	p := named[0]
	p.Client.Retransmit = []engine.RetransmitStore{engine.RetransmitDurable, engine.RetransmitMemory}[k.Choose("retransmit", 2)]
	p.Name = "fixed+retransmit-memory"
	if p.Client.Retransmit == engine.RetransmitDurable {
		p.Name = "fixed"
	}
	if k.Choose("persistence", 2) == 1 {
		p.Broker.Persistence, p.Broker.SnapshotEvery = engine.PersistPeriodic, 1+k.Choose("snapshot", 32)
		p.Name += fmt.Sprintf("+snapshot-%d", p.Broker.SnapshotEvery)
	}
	return p, nil
}

// PlanFromBytes decodes a fuzz input: go-fuzz-headers' consumer chooses the
// preset and builds a bounded plan (properties.GenCase, up to 20 steps, any
// fault profile); the bytes it leaves drive the world's choices through
// sim's byte source. A crasher decoded this way prints (Case.String) as a
// readable plan; its world draws come from the bytes, so it replays exactly
// only through the simulated-plan fuzz target itself.
func PlanFromBytes(data []byte) (properties.Case, error) {
	if len(data) == 0 {
		return properties.Case{}, ErrNoInput
	}
	k := &consumerChooser{c: fuzzheaders.NewConsumer(data)}
	p, err := choosePreset(k)
	if err != nil {
		return properties.Case{}, err
	}
	spec := properties.PlanSpec{
		Presets:  []engine.Preset{p},
		MaxSteps: 20,
		Source:   func() sim.Source { return sim.NewByteSource(data[k.used:]) },
	}
	return properties.GenCase(k, spec)
}
