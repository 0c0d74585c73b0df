package findings

import (
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// TestEveryViolationCountedOnce: on a mixed list, per-invariant counts of
// occurrences and consequences add up to the violations given.
func TestEveryViolationCountedOnce(t *testing.T) {
	vs := []model.Violation{resend, dupM1, reuse, dupM2,
		model.NewViolation(model.NoStuck, 17, "", "stuck after the liveness bound", 17)}
	fs := Group(flowHistory(), vs)
	got := map[model.Invariant]int{}
	for i := range fs {
		for _, v := range fs[i].Occurrences {
			got[v.Invariant]++
		}
		for _, c := range fs[i].Explains {
			got[c.Violation.Invariant]++
		}
	}
	want := map[model.Invariant]int{}
	for _, v := range vs {
		want[v.Invariant]++
	}
	for inv, n := range want {
		if got[inv] != n {
			t.Errorf("%s: findings account for %d, want %d", inv, got[inv], n)
		}
	}
}
