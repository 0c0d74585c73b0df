package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestCutsRecorded: every reset and half-open fault of a run is in its
// history as a model.Cut of the client's connection, named by its kind.
func TestCutsRecorded(t *testing.T) {
	cfg := Config{Seed: 2, Profile: "lossy"}
	plan, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(cfg, plan)
	cuts := map[string]int{}
	for _, e := range r.History().Events {
		if e.Kind == model.Cut {
			if e.Node == model.BrokerNode || e.Peer != model.BrokerNode {
				t.Errorf("cut %+v: want the client's connection to the broker", e)
			}
			cuts[e.Reason]++
		}
	}
	if cuts["reset"] != r.Stats.Faults["reset"] || cuts["half-open"] != r.Stats.Faults["half-open"] || len(cuts) == 0 {
		t.Errorf("history cuts %v, faults counted %v", cuts, r.Stats.Faults)
	}
}

func TestLostWrites(t *testing.T) {
	cases := []struct {
		out  CrashOutcome
		want string
	}{
		{CrashOutcome{Kept: 3}, ""},
		{CrashOutcome{Lost: 2, Kept: 1}, "2 unsynced writes lost"},
		{CrashOutcome{Lost: 1, Torn: true}, "1 unsynced writes lost (the last one torn)"},
	}
	for _, c := range cases {
		if got := lostWrites(c.out); got != c.want {
			t.Errorf("lostWrites(%+v) = %q, want %q", c.out, got, c.want)
		}
	}
}
