package sim

import (
	"slices"
	"strconv"
)

// The swarm workload's later dimensions, shared subscriptions and
// Subscription Identifiers, draw from their own stream (planGen.feat): a
// seed that draws them off generates the plan it generated before they
// existed, op for op.

// drawLater draws the later dimensions and a shared subscription's
// members: 2-3 persistent v5 sessions g1..gN, in group $share/g/F and
// maybe in a second one, $share/h/u/a, which no message of the first
// matches.
func (s *swarmGen) drawLater() {
	f := s.feat
	s.shared = s.wl.on(dimShared, f, 1, 4)
	s.subIDs = s.wl.on(dimSubIDs, f, 1, 4)
	if p := s.wl.pins[dimVersion]; p.set && p.val == 4 {
		s.shared = false // $share/ is a v5 filter: no members among 3.1.1 clients
	}
	if !s.shared {
		return
	}
	groups := []string{sharePrefixG + Pick(f, swarmGroupFilters)}
	if f.Chance(1, 2) {
		groups = append(groups, sharePrefixH+"u/a")
	}
	n := 2 + f.IntN(2)
	for i := range n {
		c := &swarmClient{name: "g" + strconv.Itoa(i+1), version: 5, cfg: &NodeConfig{Version: 5}}
		if s.windows {
			c.cfg.ReceiveMax = uint16(1 + f.IntN(4))
		}
		for j, g := range groups {
			if j == 0 || f.Chance(2, 3) {
				c.groups = append(c.groups, Op{Kind: OpSubscribe, Node: c.name, Topic: g, QoS: uint8(1 + f.IntN(2))})
			}
		}
		s.members = append(s.members, c)
		s.clients = append(s.clients, c.name)
		s.planGen.subs = append(s.planGen.subs, c.name)
	}
}

// The ShareNames of the swarm's groups.
const (
	sharePrefixG = "$share/g/"
	sharePrefixH = "$share/h/"
)

// withSubID gives a v5 client's subscription a fresh Subscription
// Identifier when the subids dimension is on: each filter its own, and a
// resubscribe a new one.
func (s *swarmGen) withSubID(c *swarmClient, op *Op) {
	if s.subIDs && c.version == 5 {
		c.lastID++
		op.SubID = c.lastID
	}
}

// idFilter adds, under the subids dimension, an extra filter that overlaps
// a v5 subscriber's others to half of them: one copy then carries several
// identifiers.
func (s *swarmGen) idFilter(c *swarmClient, filters []string) []string {
	if !s.subIDs || c.version != 5 || !s.feat.Chance(1, 2) {
		return filters
	}
	if f := Pick(s.feat, swarmIDFilters); !slices.Contains(filters, f) {
		filters = append(filters, f)
	}
	return filters
}

// joinGroups subscribes each member to its groups.
func (s *swarmGen) joinGroups() {
	for _, c := range s.members {
		for _, op := range c.groups {
			s.withSubID(c, &op)
			s.subAt(0, op)
		}
	}
}

// memberLeaves, at message step step, may take a member away (normally
// or abnormally) for a few steps; one in three returns with a clean start,
// which ends its session: the broker hands its messages on to the other
// members [MQTT-4.8.2-5], and it joins its groups again.
func (s *swarmGen) memberLeaves(step int) {
	f := s.feat
	if !s.shared || !f.Chance(1, 20) {
		return
	}
	c := Pick(f, s.members)
	if c.away || s.down[c.name] {
		return
	}
	c.away = true
	op := Op{Kind: OpDisconnect, Node: c.name}
	if f.Chance(1, 2) {
		op.Flags = FlagAbnormal
	}
	s.add(op)
	s.away = append(s.away, swarmAway{c: c, step: step + 1 + f.IntN(15), clean: f.Chance(1, 3)})
}

// rejoin subscribes a member that came back with a clean start to its
// groups again, once its CONNACK had time to arrive.
func (s *swarmGen) rejoin(c *swarmClient) {
	s.advance(100 * ms)
	for _, op := range c.groups {
		s.withSubID(c, &op)
		s.add(op)
	}
}
