package properties

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine"
)

// TestMachineFixed drives a live world of the fixed preset with plan
// operations as rapid state-machine actions, checking its promises after
// every action and, after the heal, that no session is stuck.
func TestMachineFixed(t *testing.T) {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, MachineProperty(p, nil, JudgeOf(p)))
}

// TestMachineCanary proves the state machine's checks bite: a client without
// a retransmit store (legacy-retransmit) breaks the fixed preset's promises
// (NoLoss) once a publisher crashes or loses its connection with a message
// in flight.
func TestMachineCanary(t *testing.T) {
	t.Chdir(t.TempDir())
	p, err := engine.PresetByName("legacy-retransmit")
	if err != nil {
		t.Fatal(err)
	}
	s := FindCounterexample(t.Name(), MachineProperty(p, nil, FixedJudge(0)))
	if !s.Found {
		t.Fatalf("the state machine found no broken promise of %s:\n%s", p.Name, s.Log)
	}
}
