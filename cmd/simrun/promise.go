package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
	"github.com/mqttlab/mqttlab/sim"
)

// promiseScope says whose promises a set edits.
type promiseScope uint8

const (
	scopeBroker promiseScope = 1 << iota // the broker fields of model.Policy
	scopeClient                          // the client fields
	scopeBoth   = scopeBroker | scopeClient
)

// promiseSets are the named promise edits -promise applies to a policy.
var promiseSets = []struct {
	name, doc string
	scope     promiseScope
	edit      func(p *model.Policy)
}{
	{"spec", "every promise of the spec (the fixed engine's)", scopeBoth, func(p *model.Policy) { *p = model.FixedPolicy() }},
	{"broker-sync", "the broker persists every change before acting: NoLoss across its crashes", scopeBroker, func(p *model.Policy) { p.Broker = model.PersistEveryChange }},
	{"broker-periodic", "the broker snapshots now and then: nothing across its crashes", scopeBroker, func(p *model.Policy) { p.Broker = model.PersistPeriodic }},
	{"broker-memory", "the broker keeps state in memory only", scopeBroker, func(p *model.Policy) { p.Broker = model.PersistNone }},
	{"client-durable", "clients keep outgoing messages and incoming QoS 2 ids on disk", scopeClient, func(p *model.Policy) {
		p.Retransmit, p.QoS2Durable = model.RetransmitDurable, true
	}},
	{"client-memory", "clients keep their session in memory (lost when killed)", scopeClient, func(p *model.Policy) {
		p.Retransmit, p.QoS2Durable = model.RetransmitMemory, false
	}},
	{"client-ack-first", "subscribers acknowledge before their application has the message", scopeClient, func(p *model.Policy) { p.AckBeforeCallback = true }},
	{"client-no-dedup", "subscribers do not suppress QoS 2 duplicates: each QoS 2 PUBLISH they receive (a resend too) may reach the application once", scopeClient, func(p *model.Policy) { p.QoS2NoDedup = true }},
	{"mosquitto-clients", "libmosquitto's tools: client-memory and client-ack-first", scopeClient, func(p *model.Policy) {
		p.Retransmit, p.QoS2Durable, p.AckBeforeCallback = model.RetransmitMemory, false, true
	}},
	// The library profiles: what each adapter's library promises, read in
	// its own documentation and code (docs/live.md's table cites each
	// claim). Each starts from the spec's client promises.
	{"ours", "this project's engine client (the fixed preset): every promise of the spec", scopeClient, func(p *model.Policy) {
		*p = withClient(*p, model.FixedPolicy())
	}},
	{"paho-go", "Eclipse Paho Go with its file store: outgoing messages on disk before Publish returns, acks after the handler, incoming QoS 2 ids not kept, so a resent QoS 2 PUBLISH reaches the handler again", scopeClient, func(p *model.Policy) {
		*p = withClient(*p, model.FixedPolicy())
		p.QoS2Durable, p.QoS2NoDedup = false, true
	}},
	{"paho-python", "Eclipse Paho Python 1.6: session in memory, PUBREC before on_message, an unknown PUBREC unanswered", scopeClient, func(p *model.Policy) {
		*p = withClient(*p, model.FixedPolicy())
		p.Retransmit, p.QoS2Durable, p.AckBeforeCallback, p.UnknownAck = model.RetransmitMemory, false, true, model.UnknownAckFail
	}},
	{"mqttjs", "MQTT.js 5 with its default stores: session in memory, PUBREC before 'message', an unknown PUBREC unanswered", scopeClient, func(p *model.Policy) {
		*p = withClient(*p, model.FixedPolicy())
		p.Retransmit, p.QoS2Durable, p.AckBeforeCallback, p.UnknownAck = model.RetransmitMemory, false, true, model.UnknownAckFail
	}},
}

// withClient returns p with the client fields of c.
func withClient(p, c model.Policy) model.Policy {
	p.Retransmit, p.UnknownAck, p.AckBeforeCallback, p.QoS2Durable, p.QoS2NoDedup = c.Retransmit, c.UnknownAck, c.AckBeforeCallback, c.QoS2Durable, c.QoS2NoDedup
	return p
}

// hasProfile reports whether name is a promise set (an adapter's profile).
func hasProfile(name string) bool {
	for _, ps := range promiseSets {
		if ps.name == name {
			return true
		}
	}
	return false
}

func promiseNames() []string {
	var s []string
	for _, p := range promiseSets {
		s = append(s, p.name)
	}
	return s
}

// applySets applies comma-separated sets in order to the spec's policy; a
// set whose scope misses want is an error (a client set given to the
// broker promises nothing there).
func applySets(s string, want promiseScope, role string) (model.Policy, error) {
	p := model.FixedPolicy()
	var lim model.BrokerLimits
	given := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if kind, _, ok := strings.Cut(name, ":"); ok {
			if want&scopeBroker == 0 {
				return p, fmt.Errorf("limit %q is a broker limit, not one of %s", name, role)
			}
			if given[kind] {
				return p, fmt.Errorf("limit %q: %s given twice", name, kind)
			}
			given[kind] = true
			if err := parseLimit(name, &lim); err != nil {
				return p, err
			}
			continue
		}
		found := false
		for _, ps := range promiseSets {
			if ps.name != name {
				continue
			}
			if ps.scope&want == 0 {
				return p, fmt.Errorf("set %q edits %s promises, not those of %s", name, scopeName(ps.scope), role)
			}
			ps.edit(&p)
			found = true
		}
		if found {
			continue
		}
		preset, err := engine.PresetByName(name)
		if err != nil {
			return p, fmt.Errorf("unknown promise set %q; known: %s, or a preset name", name, strings.Join(promiseNames(), ", "))
		}
		p = sim.ModelPolicy(preset)
	}
	p.Limits = lim // after the sets: a preset's policy declares none
	return p, nil
}

// limitDoc describes the broker limits -promise takes among its sets.
const limitDoc = "queue:N:drop-oldest|drop-newest (per-session queue bound and which copy goes there), inflight:N (the broker's in-flight window per client), expiry:SECONDS (longest a copy waits unsent)"

// parseLimit reads one broker limit of -promise into lim: queue:N:POLICY,
// inflight:N or expiry:SECONDS.
func parseLimit(item string, lim *model.BrokerLimits) error {
	f := strings.Split(item, ":")
	num := func(s string, hi uint64) (uint64, error) {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil || n < 1 || n > hi {
			return 0, fmt.Errorf("limit %q: %q is not a whole number in 1..%d; limits: %s", item, s, hi, limitDoc)
		}
		return n, nil
	}
	switch strings.TrimSpace(f[0]) {
	case "queue":
		if len(f) != 3 {
			return fmt.Errorf("limit %q: want queue:N:drop-oldest or queue:N:drop-newest", item)
		}
		n, err := num(f[1], 1<<31-1)
		if err != nil {
			return err
		}
		switch strings.TrimSpace(f[2]) {
		case "drop-oldest":
			lim.QueueFull = model.DropOldest
		case "drop-newest":
			lim.QueueFull = model.DropNewest
		default:
			return fmt.Errorf("limit %q: queue policy %q is neither drop-oldest nor drop-newest", item, f[2])
		}
		lim.Queue = int(n)
	case "inflight":
		if len(f) != 2 {
			return fmt.Errorf("limit %q: want inflight:N", item)
		}
		n, err := num(f[1], 65535)
		if err != nil {
			return err
		}
		lim.Inflight = int(n)
	case "expiry":
		if len(f) != 2 {
			return fmt.Errorf("limit %q: want expiry:SECONDS", item)
		}
		n, err := num(f[1], 1<<32-1)
		if err != nil {
			return err
		}
		lim.Expiry = uint32(n)
	default:
		return fmt.Errorf("unknown limit %q; limits: %s", item, limitDoc)
	}
	return nil
}

func scopeName(s promiseScope) string {
	if s == scopeBroker {
		return "broker"
	}
	return "client"
}

// roleOf resolves a role name: broker, clients, subscribers, publishers or
// a client id s1..sN / p1..pN.
func roleOf(name string, subs, pubs int) (ids []string, rank int, err error) {
	each := func(prefix string, n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, prefix+strconv.Itoa(i))
		}
		return out
	}
	switch name {
	case "broker":
		return nil, 0, nil
	case "clients":
		return append(each("s", subs), each("p", pubs)...), 1, nil
	case "subscribers":
		return each("s", subs), 2, nil
	case "publishers":
		return each("p", pubs), 2, nil
	}
	for _, id := range append(each("s", subs), each("p", pubs)...) {
		if id == name {
			return []string{id}, 3, nil
		}
	}
	return nil, 0, fmt.Errorf("unknown role %q: broker, clients, subscribers, publishers, or a client id of this run (s1..s%d, p1..p%d)", name, subs, pubs)
}

// parsePromise reads -promise. The plain form (comma-separated sets) is
// one policy for every role. The per-role form, ROLE=SETS entries joined
// by ';', gives each role its own sets, applied in order to the spec's
// promises; a role left out promises the spec; for a client the most
// specific entry wins (its id, then subscribers or publishers, then
// clients). roles names each role's promise for the summary.
func parsePromise(s string, subs, pubs int) (ps model.Policies, roles []string, err error) {
	if !strings.Contains(s, "=") {
		p, err := applySets(s, scopeBoth, "every role")
		return model.Uniform(p), []string{"every role: " + s}, err
	}
	ps = model.Policies{Broker: model.FixedPolicy(), Client: model.FixedPolicy(), Clients: map[string]model.Policy{}}
	rank := map[string]int{}
	named := map[string]string{}
	brokerSets := "spec"
	for _, entry := range strings.Split(s, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		role, sets, ok := strings.Cut(entry, "=")
		role, sets = strings.TrimSpace(role), strings.TrimSpace(sets)
		if !ok || role == "" || sets == "" {
			return ps, nil, fmt.Errorf("entry %q: want ROLE=SETS (roles: broker, clients, subscribers, publishers, or a client id)", entry)
		}
		if _, dup := named[role]; dup {
			return ps, nil, fmt.Errorf("role %q given twice", role)
		}
		named[role] = sets
		ids, r, err := roleOf(role, subs, pubs)
		if err != nil {
			return ps, nil, err
		}
		scope := scopeClient
		if role == "broker" {
			scope = scopeBroker
		}
		p, err := applySets(sets, scope, role)
		if err != nil {
			return ps, nil, fmt.Errorf("%s: %w", role, err)
		}
		if role == "broker" {
			ps.Broker, brokerSets = p, sets
			continue
		}
		for _, id := range ids {
			if r >= rank[id] {
				ps.Clients[id], rank[id] = p, r
			}
		}
	}
	roles = append(roles, "broker: "+brokerSets)
	for _, role := range []string{"subscribers", "publishers"} {
		sets, ok := named[role]
		if !ok {
			sets, ok = named["clients"]
		}
		if !ok {
			sets = "spec"
		}
		roles = append(roles, role+": "+sets)
	}
	var ids []string
	for role := range named {
		if _, r, _ := roleOf(role, subs, pubs); r == 3 {
			ids = append(ids, role)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		roles = append(roles, id+": "+named[id])
	}
	return ps, roles, nil
}
