package sim

import (
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestHistoryBudget: a run that would record without end ends Stuck once
// its history reaches the budget, with at most a dispatch's records past
// it, and says why. Swarm seed 25 under the alias-above-max canary is
// such a run (its subscriber refuses the broker's aliases on every
// reconnect: over a million retransmits in 220 s of liveness, 22 GB for a
// shrink bench); a run that stays within its budget is unchanged.
func TestHistoryBudget(t *testing.T) {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	fixed := p
	p.Broker.Mutations |= engine.MutAliasAboveMax
	cases := []struct {
		name   string
		preset engine.Preset
		budget int
		over   bool
	}{
		{"livelock cut at a small budget", p, 20_000, true},
		{"livelock cut at a budget hit in the safety phase", p, 500, true},
		{"fixed engine within the default budget", fixed, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Seed: 25, Profile: "swarm", Preset: tc.preset, Scenario: SwarmScenario, historyBudget: tc.budget}
			plan, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var rn Runner
			r := rn.Run(cfg, plan)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			h := r.History()
			if !tc.over {
				if !r.Quiet || len(r.Violations) > 0 {
					t.Fatalf("quiet %v, violations %v", r.Quiet, r.Violations)
				}
				return
			}
			if r.Quiet {
				t.Fatalf("the run went quiet within %d records", tc.budget)
			}
			if n := len(h.Events); n > tc.budget+1000 {
				t.Errorf("history of %d events, budget %d", n, tc.budget)
			}
			last := h.Events[len(h.Events)-1]
			if last.Kind != model.Stuck || !strings.Contains(last.Reason, "history budget of") {
				t.Errorf("last event %v, want Stuck naming the history budget", last)
			}
		})
	}
}
