package model

import (
	"reflect"
	"testing"
)

// TestFaultsOfStop: a clean stop (Crash at CrashStop) of a client counts as
// a crash of that client (its memory is gone); the broker's counts apart, in
// BrokerStops, never in BrokerCrashes.
func TestFaultsOfStop(t *testing.T) {
	pubStop := base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1")).
		sent("p1", BrokerNode, pkt(DISCONNECT, 0)).crash("p1", CrashStop)
	brokerStop := base().crash(BrokerNode, CrashStop)
	cases := []struct {
		name string
		h    *hb
		want Faults
	}{
		{"publisher stop with an unacked message", pubStop, Faults{
			Crashes:          []CrashFault{{Step: len(pubStop.h.Events) - 1, Node: "p1", Role: RolePublisher, Point: CrashStop}},
			PublisherCrashes: 1, PublisherCrashesUnacked: 1}},
		{"broker stop", brokerStop, Faults{
			Crashes:     []CrashFault{{Step: len(brokerStop.h.Events) - 1, Node: BrokerNode, Role: RoleBroker, Point: CrashStop}},
			BrokerStops: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FaultsOf(c.h.h); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("FaultsOf:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestPromisesBrokerStop: a stopping broker writes all it persists at all,
// so its clean stop gives up promises only when it keeps nothing durable.
func TestPromisesBrokerStop(t *testing.T) {
	stop := Faults{Crashes: make([]CrashFault, 1), BrokerStops: 1}
	lost := SetOf(NoLoss, NoStuck, QoS2ExactlyOnce, Retransmit, PacketIDUnique, Order, SharedDelivery, SessionPresent, SessionExpiry) | routingSet
	cases := []struct {
		broker BrokerPersistence
		broken Set
	}{
		{PersistNone, lost},
		{PersistPeriodic, 0},
		{PersistEveryChange, 0},
		{0, lost}, // unset counts as the weakest
	}
	for _, c := range cases {
		p := FixedPolicy()
		p.Broker = c.broker
		if got, want := Promises(p, stop), All()&^c.broken; got != want {
			t.Errorf("broker persistence %d, clean stop: Promises = %v, want %v", c.broker, got, want)
		}
	}
}
