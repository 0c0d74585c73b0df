package model

import "sort"

// Options selects what Check runs.
type Options struct {
	// Only restricts the run to these invariants; zero means all of them.
	Only Set
}

// checkFunc is one invariant's checker: a pure pass over the history.
type checkFunc func(h *History) []Violation

// checks maps each plain invariant to its checker, in declaration order.
var checks = [...]struct {
	inv Invariant
	fn  checkFunc
}{
	{NoLoss, CheckNoLoss},
	{QoS2ExactlyOnce, CheckQoS2ExactlyOnce},
	{PubrelAnswered, CheckPubrelAnswered},
	{SendQuota, CheckSendQuota},
	{Order, CheckOrder},
	{NoStuck, CheckNoStuck},
}

// tracked maps the tracker-based invariants to a fresh check state; Check
// runs them in one shared tracker pass.
var tracked = [...]struct {
	inv Invariant
	new func() trackedCheck
}{
	{Retransmit, func() trackedCheck { return &retransmitCheck{} }},
	{PacketIDUnique, func() trackedCheck { return &packetIDCheck{} }},
	{SessionPresent, func() trackedCheck { return &sessionPresentCheck{mustClose: map[string]int{}} }},
}

// Check runs every selected invariant check over h and returns the
// violations sorted by step (then invariant, node, reason), deterministically.
func Check(h History, opts Options) []Violation {
	want := opts.Only
	if want == 0 {
		want = All()
	}
	var out []Violation
	for _, c := range checks {
		if want.Has(c.inv) {
			out = append(out, c.fn(&h)...)
		}
	}
	var tcs []trackedCheck
	for _, c := range tracked {
		if want.Has(c.inv) {
			tcs = append(tcs, c.new())
		}
	}
	if len(tcs) > 0 {
		out = append(out, runTracked(&h, tcs...)...)
	}
	sortViolations(out)
	return out
}

// CheckPromised returns only the violations of invariants that p promises
// under the faults h shows.
func CheckPromised(h History, p Policy) []Violation {
	return Check(h, Options{Only: Promises(p, FaultsOf(h))})
}

// sortViolations orders violations by step, invariant, node and reason.
func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Invariant != b.Invariant {
			return a.Invariant < b.Invariant
		}
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		return a.Reason < b.Reason
	})
}

// lastStep is the index of the last event (end-of-history violations use it).
func lastStep(h *History) int {
	if len(h.Events) == 0 {
		return 0
	}
	return len(h.Events) - 1
}

// livenessStart returns the index of the LivenessStart event, or -1.
func livenessStart(h *History) int {
	for i := range h.Events {
		if h.Events[i].Kind == LivenessStart {
			return i
		}
	}
	return -1
}
