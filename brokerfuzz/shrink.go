package brokerfuzz

import (
	"context"
	"time"
)

// shrink removes steps from c, one at a time from the last, while the
// case still trips v's oracle and rule (Violation.Key) against the broker;
// it repeats until no step can go or the budget passes. Each candidate is
// judged by running it: the broker is the only judge of what still fails.
func (f *fuzzer) shrink(ctx context.Context, r *runner, c Case, v Violation) (Case, Violation) {
	deadline := time.Now().Add(f.cfg.ShrinkBudget)
	k := v.Key()
	for changed := true; changed; {
		changed = false
		for i := len(c.Steps) - 1; i >= 0 && len(c.Steps) > 1; i-- {
			if ctx.Err() != nil || time.Now().After(deadline) {
				return c, v
			}
			cand := c.without(i)
			vs, _, err := f.exec(r, cand)
			if err != nil {
				continue
			}
			for _, w := range vs {
				if w.Key() == k {
					c, v, changed = cand, w, true
					break
				}
			}
		}
	}
	return c, v
}
