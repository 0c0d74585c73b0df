package model

import (
	"cmp"
	"slices"
	"strings"
)

// Options selects what Check runs.
type Options struct {
	// Only restricts the run to these invariants; zero means all of them.
	Only Set
	// Slack is the recorder's timing uncertainty in nanoseconds: the
	// keep-alive checks (ClientKeepAlive, BrokerKeepAlive) allow an
	// interval this much longer or shorter than the spec's before they
	// call it a violation. The simulator's clock is exact (0); the live
	// tester passes its proxy's measured timing uncertainty.
	Slack int64
	// Limits are the limits the broker declares (its -promise): NoLoss and
	// FlowResume excuse exactly the drops they allow (droplimits.go). Zero:
	// none declared, every drop of an owed copy is a loss.
	Limits BrokerLimits
	// NoDedup names the clients whose receiver does not suppress QoS 2
	// duplicates (Policy.QoS2NoDedup, see Policies.NoDedup): each QoS 2
	// PUBLISH of a message such a client receives may reach its
	// application once, so QoS2ExactlyOnce counts a delivery of it as a
	// duplicate only beyond the PUBLISH packets of it the client received
	// (a resend the broker made is then delivered again; one PUBLISH
	// delivered twice is still a violation).
	NoDedup []string
}

// checkFunc is one invariant's checker: a pure pass over the indexed
// history.
type checkFunc func(x *index) []Violation

// checks maps each plain invariant to its checker, in declaration order.
var checks = [...]struct {
	inv Invariant
	fn  checkFunc
}{
	{NoLoss, checkNoLoss},
	{QoS2ExactlyOnce, checkQoS2ExactlyOnce},
	{PubrelAnswered, checkPubrelAnswered},
	{SendQuota, checkSendQuota},
	{Order, checkOrder},
	{NoStuck, checkNoStuck},
	{ClientKeepAlive, checkClientKeepAlive},
	{SessionExpiry, checkSessionExpiry},
	{SharedDelivery, checkShared},
	{SessionPresent, checkSessionKept},
	{BrokerKeepAlive, checkBrokerKeepAlive},
	{TopicAlias, checkTopicAlias},
	{MaxPacketSize, checkMaxPacketSize},
	{Access, checkAccess},
}

// tracked maps the tracker-based invariants to a fresh check state; Check
// runs them in one shared tracker pass.
var tracked = [...]struct {
	inv Invariant
	new func(x *index) trackedCheck
}{
	{Retransmit, func(*index) trackedCheck { return &retransmitCheck{} }},
	{PacketIDUnique, func(*index) trackedCheck { return &packetIDCheck{} }},
	{SessionPresent, func(x *index) trackedCheck { return newSessionPresentCheck(x) }},
}

// Check runs every selected invariant check over h and returns the
// violations sorted by step (then invariant, node, reason),
// deterministically, except that a violation another explains follows its
// cause (Violation.ExplainedBy, explain.go).
func Check(h History, opts Options) []Violation {
	x := borrowIndex(&h)
	vs := check(x, opts)
	x.release()
	return vs
}

// check is Check on an indexed history.
func check(x *index, opts Options) []Violation {
	want := opts.Only
	x.slack = max(opts.Slack, 0)
	x.limits, x.drops = opts.Limits, nil
	x.noDedup = x.noDedup[:0]
	for _, n := range opts.NoDedup {
		for id, name := range x.nodes {
			if name == n && int32(id) != brokerID {
				x.noDedup = append(x.noDedup, int32(id))
			}
		}
	}
	if want == 0 {
		want = All()
	}
	var out []Violation
	for _, c := range checks {
		if want.Has(c.inv) {
			out = append(out, c.fn(x)...)
		}
	}
	if want&routingSet != 0 {
		for _, v := range checkRouting(x) {
			if want.Has(v.Invariant) {
				out = append(out, v)
			}
		}
	}
	var tcs []trackedCheck
	for _, c := range tracked {
		if want.Has(c.inv) {
			tcs = append(tcs, c.new(x))
		}
	}
	if len(tcs) > 0 {
		out = append(out, runTracked(x, tcs...)...)
	}
	sortViolations(out)
	return explain(x.h, out)
}

// CheckPromised returns only the violations of invariants that p promises
// under the faults h shows.
func CheckPromised(h History, p Policy) []Violation {
	_, vs := CheckUnder(h, func(f Faults) Options { return Options{Only: Promises(p, f), Limits: p.Limits} })
	return vs
}

// CheckUnder is FaultsOf and Check in one call that indexes h once: it
// derives h's faults, asks choose which checks to run under them, and
// returns the faults and Check's violations. A judge that reads the faults
// (Promises under one policy or several) and then checks is
//
//	faults, vs := model.CheckUnder(h, func(f model.Faults) model.Options {
//		return model.Options{Only: model.Promises(p, f)}
//	})
func CheckUnder(h History, choose func(Faults) Options) (Faults, []Violation) {
	x := borrowIndex(&h)
	f := faultsOf(x)
	vs := check(x, choose(f))
	x.release()
	return f, vs
}

// sortViolations orders violations by step, invariant, node and reason.
func sortViolations(vs []Violation) {
	slices.SortStableFunc(vs, func(a, b Violation) int {
		if c := cmp.Compare(a.Step, b.Step); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Invariant, b.Invariant); c != 0 {
			return c
		}
		if c := strings.Compare(a.Node, b.Node); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
}

// lastStep is the index of the last event (end-of-history violations use it).
func lastStep(h *History) int {
	if len(h.Events) == 0 {
		return 0
	}
	return len(h.Events) - 1
}
