package model

import (
	"fmt"
	"slices"
)

// Violations that follow from another point at their first cause. A broker
// that answers Session Present=0 for a kept session makes its client drop
// what it held; a broker that closes a busy connection cuts deliveries
// short; the messages then lost or duplicated show up as NoLoss, NoStuck,
// Order or QoS2ExactlyOnce violations, often at an earlier step (NoLoss
// points at the Accepted that started the obligation). Check reports the
// cause first and each violation it explains right after it, with
// ExplainedBy naming the cause.
//
// A violation of a consequence invariant (consequences) is explained by
// the first violation of a cause invariant (any other, and NoLoss for
// NoStuck), and a violation of any invariant by the first of SessionPresent
// or BrokerKeepAlive (sessionCauses), that concerns one of its clients and
// shows before its breach:
// before its step, or anywhere for the end-of-history invariants, whose
// breach is the end of the run. A violation concerns the clients named by
// its node and by the nodes and peers of the events it cites.

// consequences are the invariants whose violations other violations may
// explain.
var consequences = SetOf(NoLoss, NoStuck, Order, QoS2ExactlyOnce, FlowResume)

// endOfHistory are the invariants judged at the end of the run.
var endOfHistory = SetOf(NoLoss, NoStuck, FlowResume)

// sessionCauses are the invariants whose violations mislead every later
// judgement of the client: a broker that denies a session it kept, or cuts
// a connection that was alive, makes the routing, retransmission and loss
// checks see the wrong session.
var sessionCauses = SetOf(SessionPresent, BrokerKeepAlive)

// canExplain reports whether a violation of a can explain one of b.
func canExplain(a, b Invariant) bool {
	switch {
	case a == b:
		return false
	case sessionCauses.Has(a):
		return true
	case !consequences.Has(b):
		return false
	}
	return !consequences.Has(a) || (a == NoLoss && b == NoStuck)
}

// explain links each violation of vs (sorted by step) to its first cause
// and reorders vs: every root (a violation nothing explains) in step
// order, each followed by the violations it explains.
func explain(h *History, vs []Violation) []Violation {
	if len(vs) < 2 {
		return vs
	}
	clients := make([][]string, len(vs))
	for i := range vs {
		clients[i] = violationClients(h, &vs[i])
	}
	// parent is the first violation that explains each (itself if none);
	// the relation is acyclic (a cause is never a consequence, and only
	// NoLoss explains NoStuck), so parents lead to roots within two hops.
	root := make([]int, len(vs))
	for i := range vs {
		root[i] = i
		for j := range vs {
			if j != i && explains(&vs[j], &vs[i], clients[j], clients[i]) {
				root[i] = j
				break
			}
		}
	}
	for i := range root {
		for root[root[i]] != root[i] {
			root[i] = root[root[i]]
		}
	}
	order := make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { // each root first in its group
		if root[a] != root[b] {
			return root[a] - root[b]
		}
		return boolInt(a != root[a]) - boolInt(b != root[b])
	})
	out := make([]Violation, 0, len(vs))
	for _, i := range order {
		v := vs[i]
		if r := root[i]; r != i {
			v.ExplainedBy = fmt.Sprintf("%s at step %d", vs[r].Invariant, vs[r].Step)
		}
		out = append(out, v)
	}
	return out
}

// explains reports whether cause c explains violation v.
func explains(c, v *Violation, cc, vc []string) bool {
	if !canExplain(c.Invariant, v.Invariant) {
		return false
	}
	if !endOfHistory.Has(v.Invariant) && c.Step >= v.Step {
		return false
	}
	if len(cc) == 0 || len(vc) == 0 {
		return true
	}
	for _, a := range cc {
		if slices.Contains(vc, a) {
			return true
		}
	}
	return false
}

// violationClients lists the clients a violation concerns: its node and
// the nodes and peers of the events it cites, the broker left out.
func violationClients(h *History, v *Violation) []string {
	var out []string
	add := func(n string) {
		if n != "" && n != BrokerNode && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	add(v.Node)
	for _, i := range v.Events {
		if i >= 0 && i < len(h.Events) {
			add(h.Events[i].Node)
			add(h.Events[i].Peer)
		}
	}
	return out
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
