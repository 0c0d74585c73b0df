package live

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestScheduleDeterministic: the schedule is a function of its spec: the
// same spec draws the same faults, another seed others; every fault lies
// in the phase and targets what its kind can reach.
func TestScheduleDeterministic(t *testing.T) {
	spec := ScheduleSpec{Seed: 42, Kinds: FaultKinds(), Duration: 20 * time.Second, Interval: time.Second,
		Clients: []string{"s1", "s2", "p1"}, Pausable: []string{"s1"}}
	a, b := Schedule(spec), Schedule(spec)
	if len(a) < 10 || !reflect.DeepEqual(a, b) {
		t.Fatalf("two draws of one spec differ (or too few faults: %d)", len(a))
	}
	spec.Seed = 43
	if reflect.DeepEqual(a, Schedule(spec)) {
		t.Fatal("seeds 42 and 43 drew the same schedule")
	}
	for _, f := range a {
		if f.At <= 0 || f.At+f.Length > spec.Duration {
			t.Errorf("%s outside the phase", f)
		}
		switch f.Kind {
		case FaultBrokerKill, FaultBrokerPause:
			if f.Target != "broker" {
				t.Errorf("%s targets %q", f, f.Target)
			}
		case FaultClientPause:
			if f.Target != "s1" {
				t.Errorf("%s pauses a client that is not a process", f)
			}
		}
	}
	if s := Schedule(ScheduleSpec{Seed: 1, Duration: time.Minute, Interval: time.Second}); s != nil {
		t.Errorf("no kinds drew %v", s)
	}
}

func TestParseFaults(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []FaultKind
	}{
		{"none", nil},
		{"cut,broker-kill", []FaultKind{FaultBrokerKill, FaultCut}},
		{"client", []FaultKind{FaultClientKill, FaultClientPause, FaultCut, FaultBlackHole, FaultSlow}},
		{"broker,cut,cut", []FaultKind{FaultBrokerKill, FaultBrokerPause, FaultCut}},
	} {
		got, err := ParseFaults(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseFaults(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := ParseFaults("cut,meteor"); !errors.Is(err, ErrFaults) {
		t.Errorf("unknown kind: %v, want ErrFaults", err)
	}
}
