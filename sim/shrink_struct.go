package sim

import "slices"

// The structural deletions a swarm plan needs before the blind ones: a
// swarm seed declares up to hundreds of clients with node ops and spreads
// each client's subscriptions and messages over hundreds of ops, so halving
// chunks of the plan mostly cuts a client's node op from its other ops (an
// invalid plan) or a subscription from its publications. deleteStructure
// deletes whole units instead, largest first: groups of clients (halves,
// quarters, ... then one at a time), each subscription filter with its
// unsubscribes, runs of messages (halves of the publishes, then quarters,
// ...), and the bursts of the exhaust dimension made single messages.

// deleteStructure is the structural pass: clients, then filters, then
// message runs, then bursts. It works on plans that declare their clients
// (the swarm's): a plan of a scenario's fixed clients (standard, small)
// shrinks as before, op for op (its blind deletions find its few clients
// and messages; deleting message runs first sent legacy-pubrel seed 320 to
// a 50-op plan instead of one of at most 20).
func (s *shrinker) deleteStructure() {
	if len(s.clientNames()) == 0 {
		return
	}
	s.deleteClientGroups()
	s.deleteFilters()
	s.deleteMessageRuns()
	s.unburst()
}

// clientNames returns the clients the best plan declares with node ops,
// in plan order.
func (s *shrinker) clientNames() []string {
	var names []string
	for _, op := range s.ops {
		if op.Kind == OpNode && op.Node != BrokerName && !slices.Contains(names, op.Node) {
			names = append(names, op.Node)
		}
	}
	return names
}

// deleteClientGroups deletes every op of a group of declared clients:
// groups of half the clients, then a quarter, down to one, each size from
// the last client to the first.
func (s *shrinker) deleteClientGroups() {
	names := s.clientNames()
	for k := max(len(names)/2, 1); k >= 1 && !s.stopped; k /= 2 {
		for hi := len(names); hi > 0 && !s.stopped; hi -= k {
			lo := max(hi-k, 0)
			drop := names[lo:hi]
			if ops, dropped := filtered(s.ops, func(o Op) bool { return !slices.Contains(drop, o.Node) }); dropped {
				s.tryDelete(ops)
			}
		}
		names = s.clientNames()
	}
}

// deleteFilters deletes, for each filter in turn, every subscribe and
// unsubscribe of it (all clients'), then each client's own.
func (s *shrinker) deleteFilters() {
	isSub := func(o Op) bool { return o.Kind == OpSubscribe || o.Kind == OpUnsubscribe }
	var filters []string
	var pairs [][2]string
	for _, op := range s.ops {
		if !isSub(op) {
			continue
		}
		if !slices.Contains(filters, op.Topic) {
			filters = append(filters, op.Topic)
		}
		if p := [2]string{op.Node, op.Topic}; !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
	}
	for _, f := range filters {
		if s.stopped {
			return
		}
		if ops, dropped := filtered(s.ops, func(o Op) bool { return !isSub(o) || o.Topic != f }); dropped {
			s.tryDelete(ops)
		}
	}
	for _, p := range pairs {
		if s.stopped {
			return
		}
		if ops, dropped := filtered(s.ops, func(o Op) bool { return !isSub(o) || o.Node != p[0] || o.Topic != p[1] }); dropped {
			s.tryDelete(ops)
		}
	}
}

// deleteMessageRuns deletes runs of consecutive publishes (counting only
// publish ops: the advances and other ops between them stay): halves of
// them, then quarters, down to runs of 2, each size from the last run to
// the first.
func (s *shrinker) deleteMessageRuns() {
	for k := max(s.publishes()/2, 2); k >= 2 && !s.stopped; k /= 2 {
		for hi := s.publishes(); hi > 0 && !s.stopped; hi -= k {
			hi = min(hi, s.publishes())
			lo := max(hi-k, 0)
			n := 0
			ops, _ := filtered(s.ops, func(o Op) bool {
				if o.Kind != OpPublish {
					return true
				}
				n++
				return n <= lo || n > hi
			})
			if len(ops) < len(s.ops) {
				s.tryDelete(ops)
			}
		}
	}
}

// publishes counts the best plan's publish ops.
func (s *shrinker) publishes() int {
	n := 0
	for _, op := range s.ops {
		if op.Kind == OpPublish {
			n++
		}
	}
	return n
}

// unburst makes each burst (a publish with count=) one message, then
// halves the ones that must stay bursts.
func (s *shrinker) unburst() {
	for i := 0; i < len(s.ops) && !s.stopped; i++ {
		if s.ops[i].Count == 0 {
			continue
		}
		op := s.ops[i]
		op.Count = 0
		if !s.tryOps(replaced(s.ops, i, op)) {
			op.Count = s.ops[i].Count / 2
			s.tryOps(replaced(s.ops, i, op))
		}
	}
}
