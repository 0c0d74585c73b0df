package model

import "sort"

// Policies is a promise per node: the broker is judged by the broker
// fields of Broker, and each client by the client fields of its own
// policy (Clients[id], else Client). A run whose subjects are different
// programs (a subscriber library, our publishers, a third-party broker)
// declares what each promises; one program's weaker promise then takes
// away only what its own faults break.
type Policies struct {
	Broker  Policy            // its broker fields judge the broker
	Client  Policy            // its client fields judge every client not in Clients
	Clients map[string]Policy // a client id's own policy (its client fields)
}

// Uniform is one policy for the broker and every client: PromisesPer of
// it is Promises of p.
func Uniform(p Policy) Policies { return Policies{Broker: p, Client: p} }

// For returns the policy that judges node: the broker fields of Broker
// with the client fields of node's own policy (for BrokerNode, Client's).
func (ps Policies) For(node string) Policy {
	c, ok := ps.Clients[node]
	if !ok {
		c = ps.Client
	}
	return withBrokerFields(c, ps.Broker)
}

// uniform reports whether every client has the same client fields.
func (ps Policies) uniform() bool {
	for _, p := range ps.Clients {
		if clientFields(p) != clientFields(ps.Client) {
			return false
		}
	}
	return true
}

// NoDedup returns the clients of names whose policy does not suppress QoS 2
// duplicates (QoS2NoDedup), sorted: Options.NoDedup of a check under ps.
func (ps Policies) NoDedup(names []string) []string {
	var out []string
	for _, n := range names {
		if n != BrokerNode && ps.For(n).QoS2NoDedup {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// withBrokerFields returns c with b's broker fields.
func withBrokerFields(c, b Policy) Policy {
	c.Broker, c.BrokerUnknownAck, c.BrokerAckBeforeStore, c.Limits = b.Broker, b.BrokerUnknownAck, b.BrokerAckBeforeStore, b.Limits
	return c
}

// clientFields is p with its broker fields zeroed.
func clientFields(p Policy) Policy {
	return Policy{Retransmit: p.Retransmit, UnknownAck: p.UnknownAck, AckBeforeCallback: p.AckBeforeCallback, QoS2Durable: p.QoS2Durable, QoS2NoDedup: p.QoS2NoDedup}
}

// ClientFaults returns the faults of each client of h counted as its own:
// its own crashes, restarts, state losses, lost connections and
// partitions, and the broker's crashes and stops (which every client
// suffers). PromisesPer reads them.
func ClientFaults(h History) map[string]Faults {
	x := borrowIndex(&h)
	defer x.release()
	out := map[string]Faults{}
	for id, name := range x.nodes {
		if int32(id) == brokerID || int32(id) == emptyID {
			continue
		}
		own := int32(id)
		out[name] = faultsOfNodes(x, func(n int32) bool { return n == own || n == brokerID })
	}
	return out
}

// PromisesPer returns the invariants ps guarantees under the faults f of a
// history whose clients' own faults are own (ClientFaults): what the
// broker promises under every fault, with the client fields of the
// spec's policy, and for each client what its own policy promises under
// its own faults. A receiver that may fail for good on an unknown PUBREL
// or PUBREC (UnknownAck) can be led there by any fault, so that weakening
// reads f. With one client policy for every client it is Promises of
// ps.For of any client.
func PromisesPer(ps Policies, f Faults, own map[string]Faults) Set {
	if ps.uniform() {
		return Promises(withBrokerFields(ps.Client, ps.Broker), f)
	}
	s := Promises(withBrokerFields(clientFields(FixedPolicy()), ps.Broker), f)
	names := make([]string, 0, len(own))
	for n := range own {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := ps.For(n)
		s &= Promises(p, own[n])
		if unknownAckMayFail(p, f) {
			s &^= failedSet
		}
	}
	return s
}
