package model

import "testing"

// policiesHistory: p1 crashes holding an unacknowledged QoS 1 message m1,
// s1 crashes mid-delivery of it.
func policiesHistory() History {
	b := newHB()
	b.connect("s1", false, false).subscribed("s1", "t/a", 1)
	b.connect("p1", false, false).accepted("p1", "m1", 1).xfer("p1", BrokerNode, publish(1, 1, false, "m1"))
	b.crash("p1", CrashBetweenSteps)
	b.xfer(BrokerNode, "s1", publish(1, 1, false, "m1"))
	b.crash("s1", CrashBetweenSteps)
	return b.h
}

func TestPromisesPer(t *testing.T) {
	h := policiesHistory()
	f, own := FaultsOf(h), ClientFaults(h)
	mem := FixedPolicy()
	mem.Retransmit, mem.QoS2Durable = RetransmitMemory, false
	ackFirst := FixedPolicy()
	ackFirst.AckBeforeCallback = true
	fixed := FixedPolicy()
	tests := []struct {
		name      string
		ps        Policies
		noLoss    bool // NoLoss promised
		packetIDs bool // PacketIDUnique promised
	}{
		{"spec everywhere", Uniform(fixed), true, true},
		{"memory everywhere", Uniform(mem), false, false},
		// p1's own crash under its memory store loses m1 and its ids.
		{"memory publisher", Policies{Broker: fixed, Client: fixed, Clients: map[string]Policy{"p1": mem}}, false, false},
		// s1's memory store is not p1's: p1 (durable) kept m1.
		{"memory subscriber", Policies{Broker: fixed, Client: fixed, Clients: map[string]Policy{"s1": mem}}, true, true},
		// s1 acks first and crashed mid-delivery: its loss is excused.
		{"ack-first subscriber", Policies{Broker: fixed, Client: fixed, Clients: map[string]Policy{"s1": ackFirst}}, false, true},
		// p1 acking first is no promise about a delivery p1 never made.
		{"ack-first publisher", Policies{Broker: fixed, Client: fixed, Clients: map[string]Policy{"p1": ackFirst}}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := PromisesPer(tc.ps, f, own)
			if s.Has(NoLoss) != tc.noLoss || s.Has(PacketIDUnique) != tc.packetIDs {
				t.Errorf("NoLoss %v PacketIDUnique %v, want %v %v (promised %s)", s.Has(NoLoss), s.Has(PacketIDUnique), tc.noLoss, tc.packetIDs, s)
			}
		})
	}
}

// TestPromisesPerUniform: one policy for every client is Promises of it,
// whether given as Uniform or as per-client entries that all agree.
func TestPromisesPerUniform(t *testing.T) {
	h := policiesHistory()
	f, own := FaultsOf(h), ClientFaults(h)
	for _, p := range []Policy{FixedPolicy(), LegacyPolicy()} {
		want := Promises(p, f)
		if got := PromisesPer(Uniform(p), f, own); got != want {
			t.Errorf("Uniform: %s, want %s", got, want)
		}
		// Forced through the per-client path: every client named.
		per := Policies{Broker: p, Client: FixedPolicy(), Clients: map[string]Policy{"p1": p, "s1": p}}
		if got := PromisesPer(per, f, own); got != want {
			t.Errorf("per client: %s, want %s", got, want)
		}
	}
}

// TestPromisesPerBroker: the broker's weaker persistence takes away what a
// broker crash breaks whatever the clients promise.
func TestPromisesPerBroker(t *testing.T) {
	b := newHB()
	b.connect("s1", false, false).subscribed("s1", "t/a", 1)
	b.crash(BrokerNode, CrashBetweenSteps)
	h := b.h
	periodic := FixedPolicy()
	periodic.Broker = PersistPeriodic
	mem := FixedPolicy()
	mem.Retransmit = RetransmitMemory
	ps := Policies{Broker: periodic, Client: FixedPolicy(), Clients: map[string]Policy{"s1": mem}}
	if s := PromisesPer(ps, FaultsOf(h), ClientFaults(h)); s.Has(NoLoss) || s.Has(Retransmit) {
		t.Errorf("a periodic broker's crash still promises NoLoss or Retransmit: %s", s)
	}
	ps.Broker = FixedPolicy()
	if s := PromisesPer(ps, FaultsOf(h), ClientFaults(h)); !s.Has(NoLoss) {
		t.Errorf("a syncing broker's crash takes NoLoss away: %s", s)
	}
}
