package model

import "fmt"

// CheckNoStuck checks invariant 11 (liveness, SPEC-NOTES "no permanent error
// loop", coreMQTT #271): a Stuck event anywhere, or a Failed event after
// LivenessStart, is a violation; and once LivenessStart happened, a Quiescent
// event must follow it before the history ends.
func CheckNoStuck(h *History) []Violation { return checkNoStuck(newIndex(h)) }

func checkNoStuck(x *index) []Violation {
	h := x.h
	var out []Violation
	start := -1
	quiet, stuck := false, false
	for i, k := range x.kinds {
		switch k.kind {
		case LivenessStart, Quiescent, Stuck, Failed, Cutoff:
		default:
			continue
		}
		e := &h.Events[i]
		switch e.Kind {
		case LivenessStart:
			if start < 0 {
				start = i
			}
		case Quiescent, Cutoff:
			// A Cutoff ends a phase that was still making progress:
			// unfinished, not stuck.
			if start >= 0 {
				quiet = true
			}
		case Stuck:
			stuck = true
			out = append(out, NewViolation(NoStuck, i, e.Node,
				"stuck after the liveness bound: "+e.Reason, start))
		case Failed:
			if start >= 0 {
				out = append(out, NewViolation(NoStuck, i, e.Node,
					"permanent failure after faults stopped: "+e.Reason, start))
			}
		}
	}
	if start >= 0 && !quiet && !stuck {
		out = append(out, NewViolation(NoStuck, lastStep(h), "",
			fmt.Sprintf("no Quiescent event after LivenessStart (step %d)", start), start))
	}
	return out
}
