package model

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFaultsOf(t *testing.T) {
	// p1 holds an unacked m1 when its connection drops and when it crashes.
	pubLoss := base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1")).closed("p1").
		crash("p1", CrashBeforeAction).ev(Event{Kind: Restart, Node: "p1"})
	// s1 received m1 and crashes in the callback before its durable write.
	midDelivery := base().accepted("p1", "m1", 1).xfer(BrokerNode, "s1", publish(2, 1, false, "m1")).
		crash("s1", CrashInCallbackPre)
	// s1 delivered a QoS2 message and crashes before its PUBREC.
	window := base().accepted("p1", "m1", 2).xfer(BrokerNode, "s1", publish(2, 2, false, "m1")).
		delivered("s1", "m1", 2).crash("s1", CrashInCallbackPost)
	// s1 sent its PUBREC before delivering (ack before callback): no window.
	noWindow := base().accepted("p1", "m1", 2).xfer(BrokerNode, "s1", publish(2, 2, false, "m1")).
		sent("s1", BrokerNode, pkt(PUBREC, 2)).delivered("s1", "m1", 2).crash("s1", CrashAfterAction)
	misc := base().ev(Event{Kind: StateLost, Node: "s1"}).ev(Event{Kind: Partition, Node: "p1"}).
		crash(BrokerNode, CrashAfterAction).kind(LivenessStart)
	// The sim records no ConnClosed: a second CONNECT shows the lost connection.
	reconnect := newHB().sent("p1", BrokerNode, pkt(CONNECT, 0)).accepted("p1", "m1", 1).
		sent("p1", BrokerNode, publish(1, 1, false, "m1")).sent("p1", BrokerNode, pkt(CONNECT, 0))
	// A DISCONNECT ends the connection on purpose.
	polite := newHB().sent("p1", BrokerNode, pkt(CONNECT, 0)).sent("p1", BrokerNode, pkt(DISCONNECT, 0)).
		ev(Event{Kind: ConnClosed, Node: "p1", Peer: BrokerNode}).sent("p1", BrokerNode, pkt(CONNECT, 0))
	// s2's SUBACK was lost, but the broker installed its subscription and
	// sent it a QoS2 PUBLISH: losing its QoS2 state is a subscriber's loss.
	unacked := base().connect("s2", false, false).xfer("s2", BrokerNode, pkt(SUBSCRIBE, 1)).
		accepted("p1", "m1", 2).xfer(BrokerNode, "s2", publish(3, 2, false, "m1")).
		ev(Event{Kind: StateLost, Node: "s2"})
	cases := []struct {
		name string
		h    *hb
		want Faults
	}{
		{name: "state loss of a subscriber whose SUBACK was lost", h: unacked, want: Faults{SubscriberStateLosses: 1, StateLosses: 1}},
		{name: "reconnect without ConnClosed", h: reconnect, want: Faults{PublisherConnLosses: 1, ConnLosses: 1}},
		{name: "disconnect is no loss", h: polite, want: Faults{}},
		{name: "calm", h: base().qos1("m1", 1, 1).liveness(), want: Faults{LivenessRan: true}},
		{name: "publisher loses connection and crashes with unacked", h: pubLoss, want: Faults{
			Crashes:          []CrashFault{{Step: len(pubLoss.h.Events) - 2, Node: "p1", Role: RolePublisher, Point: CrashBeforeAction}},
			PublisherCrashes: 1, PublisherCrashesUnacked: 1, PublisherConnLosses: 1, PublisherRestarts: 1, ConnLosses: 1}},
		{name: "subscriber crash mid delivery", h: midDelivery, want: Faults{
			Crashes:           []CrashFault{{Step: len(midDelivery.h.Events) - 1, Node: "s1", Role: RoleSubscriber, Point: CrashInCallbackPre}},
			SubscriberCrashes: 1, SubscriberMidDelivery: 1, CallbackPreCrashes: 1}},
		{name: "subscriber crash in the QoS2 window", h: window, want: Faults{
			Crashes:           []CrashFault{{Step: len(window.h.Events) - 1, Node: "s1", Role: RoleSubscriber, Point: CrashInCallbackPost}},
			SubscriberCrashes: 1, CallbackPostCrashes: 1, QoS2WindowCrashes: 1}},
		{name: "subscriber crash after PUBREC", h: noWindow, want: Faults{
			Crashes:           []CrashFault{{Step: len(noWindow.h.Events) - 1, Node: "s1", Role: RoleSubscriber, Point: CrashAfterAction}},
			SubscriberCrashes: 1}},
		{name: "state loss, partition, broker crash", h: misc, want: Faults{
			Crashes:       []CrashFault{{Step: len(misc.h.Events) - 2, Node: BrokerNode, Role: RoleBroker, Point: CrashAfterAction}},
			BrokerCrashes: 1, SubscriberStateLosses: 1, StateLosses: 1, Partitions: 1, LivenessRan: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FaultsOf(c.h.h)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("FaultsOf:\n got %+v\nwant %+v", got, c.want)
			}
			if got.Any() != !reflect.DeepEqual(c.want, Faults{LivenessRan: c.want.LivenessRan}) {
				t.Fatalf("Any() = %v for %+v", got.Any(), got)
			}
		})
	}
}

func TestPromises(t *testing.T) {
	fixed, legacy := FixedPolicy(), LegacyPolicy()
	with := func(p Policy, f func(*Policy)) Policy { f(&p); return p }
	all := All()
	cases := []struct {
		name   string
		p      Policy
		f      Faults
		broken Set // All() minus the promise
	}{
		{"fixed, calm", fixed, Faults{}, 0},
		{"fixed, every fault", fixed, Faults{Crashes: make([]CrashFault, 3), BrokerCrashes: 1, PublisherCrashes: 1,
			PublisherCrashesUnacked: 1, PublisherConnLosses: 1, SubscriberCrashes: 1, SubscriberMidDelivery: 1,
			CallbackPreCrashes: 1, Partitions: 1, ConnLosses: 4}, 0},
		{"fixed, QoS2 window crash", fixed, Faults{Crashes: make([]CrashFault, 1), SubscriberCrashes: 1, CallbackPostCrashes: 1},
			SetOf(QoS2ExactlyOnce, SharedDelivery)},
		{"fixed, subscriber state lost", fixed, Faults{StateLosses: 1, SubscriberStateLosses: 1}, SetOf(QoS2ExactlyOnce, SharedDelivery)},
		{"fixed, subscriber state lost with a lost connection", fixed, Faults{StateLosses: 1, SubscriberStateLosses: 1,
			ConnLosses: 2, SubscriberConnLosses: 1}, SetOf(QoS2ExactlyOnce, SharedDelivery)},
		{"fixed, publisher-only state lost", fixed, Faults{StateLosses: 1}, 0},
		{"legacy, calm", legacy, Faults{}, 0},
		{"no store, publisher lost its connection", with(fixed, func(p *Policy) { p.Retransmit = RetransmitNone }),
			Faults{PublisherConnLosses: 1, ConnLosses: 1}, SetOf(NoLoss, NoStuck, PacketIDUnique, SharedDelivery)},
		{"memory store, publisher lost its connection", with(fixed, func(p *Policy) { p.Retransmit = RetransmitMemory }),
			Faults{PublisherConnLosses: 1, ConnLosses: 1}, 0},
		{"memory store, publisher crashed", with(fixed, func(p *Policy) { p.Retransmit = RetransmitMemory }),
			Faults{Crashes: make([]CrashFault, 1), PublisherCrashes: 1, PublisherCrashesUnacked: 1}, SetOf(NoLoss, NoStuck, PacketIDUnique, Order, SharedDelivery)},
		{"ack before callback, crash in callback", with(fixed, func(p *Policy) { p.AckBeforeCallback = true }),
			Faults{Crashes: make([]CrashFault, 1), SubscriberCrashes: 1, SubscriberMidDelivery: 1, CallbackPreCrashes: 1}, SetOf(NoLoss, NoStuck, SharedDelivery)},
		{"ack before callback, crash elsewhere", with(fixed, func(p *Policy) { p.AckBeforeCallback = true }),
			Faults{Crashes: make([]CrashFault, 1), SubscriberCrashes: 1}, 0},
		{"volatile QoS2, subscriber crash", with(fixed, func(p *Policy) { p.QoS2Durable = false }),
			Faults{Crashes: make([]CrashFault, 1), SubscriberCrashes: 1}, SetOf(QoS2ExactlyOnce, SharedDelivery)},
		{"no broker persistence, broker crash", with(fixed, func(p *Policy) { p.Broker = PersistNone }),
			Faults{Crashes: make([]CrashFault, 1), BrokerCrashes: 1}, SetOf(NoLoss, NoStuck, QoS2ExactlyOnce, Retransmit, PacketIDUnique, Order, SharedDelivery, SessionPresent, SessionExpiry) | routingSet},
		{"periodic broker persistence, broker crash", with(fixed, func(p *Policy) { p.Broker = PersistPeriodic }),
			Faults{Crashes: make([]CrashFault, 1), BrokerCrashes: 1}, SetOf(NoLoss, NoStuck, QoS2ExactlyOnce, Retransmit, PacketIDUnique, Order, SharedDelivery, SessionPresent, SessionExpiry) | routingSet},
		{"broker acks before storing, broker crash", with(fixed, func(p *Policy) { p.BrokerAckBeforeStore = true }),
			Faults{Crashes: make([]CrashFault, 1), BrokerCrashes: 1}, SetOf(NoLoss, NoStuck, QoS2ExactlyOnce, Retransmit, PacketIDUnique, Order, SharedDelivery, SessionPresent, SessionExpiry) | routingSet},
		{"unknown ack fails, subscriber state lost", with(fixed, func(p *Policy) { p.UnknownAck = UnknownAckFail }),
			Faults{StateLosses: 1, SubscriberStateLosses: 1}, SetOf(NoLoss, QoS2ExactlyOnce, PubrelAnswered, NoStuck, ClientKeepAlive, SharedDelivery, FlowResume)},
		{"unknown ack fails, connection lost", with(fixed, func(p *Policy) { p.BrokerUnknownAck = UnknownAckFail }),
			Faults{ConnLosses: 1}, SetOf(NoLoss, PubrelAnswered, NoStuck, ClientKeepAlive, SharedDelivery, FlowResume)},
		{"unknown ack fails, calm", with(fixed, func(p *Policy) { p.UnknownAck = UnknownAckFail }), Faults{}, 0},
		{"unset policy counts as legacy", Policy{}, Faults{ConnLosses: 1, PublisherConnLosses: 1},
			SetOf(NoLoss, PubrelAnswered, NoStuck, PacketIDUnique, ClientKeepAlive, SharedDelivery, FlowResume)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Promises(c.p, c.f)
			if want := all &^ c.broken; got != want {
				t.Fatalf("Promises = %v, want %v (missing %v, extra %v)", got, want, want&^got, got&^want)
			}
			for _, always := range []Invariant{SendQuota} {
				if !got.Has(always) {
					t.Fatalf("%v must always be promised", always)
				}
			}
		})
	}
}

func TestCheckReportsStepAndReason(t *testing.T) {
	b := base().accepted("p1", "m1", 1).sent("p1", BrokerNode, publish(1, 1, false, "m1"))
	at := len(b.h.Events)
	b.sent("p1", BrokerNode, publish(1, 1, false, "m2"))
	vs := Check(b.h, Options{})
	if len(vs) != 1 {
		t.Fatalf("want exactly one violation, got %v", vs)
	}
	v := vs[0]
	if v.Step != at || v.Invariant != PacketIDUnique || v.Node != "p1" {
		t.Fatalf("got %+v, want step %d PacketIDUnique p1", v, at)
	}
	for _, part := range []string{"reuses id 1", `msg "m1"`, "[MQTT-2.2.1-3]"} {
		if !strings.Contains(v.Reason, part) {
			t.Fatalf("reason %q lacks %q", v.Reason, part)
		}
	}
	if s := v.String(); !strings.HasPrefix(s, "step ") || !strings.Contains(s, "PacketIDUnique p1: ") {
		t.Fatalf("String() = %q", s)
	}
}

func TestCheckSortedAndDeterministic(t *testing.T) {
	b := base().qos2("m1", 1, 1).delivered("s1", "m1", 2).delivered("s1", "ghost", 1)
	b.sent("p1", BrokerNode, publish(0, 1, false, "m2")).accepted("p1", "m3", 1).kind(LivenessStart)
	first := Check(b.h, Options{})
	if len(first) < 4 {
		t.Fatalf("want violations of several invariants, got %v", first)
	}
	for i := 1; i < len(first); i++ {
		if first[i-1].Step > first[i].Step {
			t.Fatalf("violations not sorted by step: %v", first)
		}
	}
	for range 20 {
		if again := Check(b.h, Options{}); !reflect.DeepEqual(first, again) {
			t.Fatalf("Check is not deterministic:\n%v\n%v", first, again)
		}
	}
	only := Check(b.h, Options{Only: SetOf(NoStuck)})
	if len(only) != 1 || only[0].Invariant != NoStuck {
		t.Fatalf("Options.Only ignored: %v", only)
	}
}

func TestCheckPromised(t *testing.T) {
	// A subscriber lost its QoS2 state and the volatile policy redelivers.
	b := base().qos2("m1", 1, 1).ev(Event{Kind: StateLost, Node: "s1"}).delivered("s1", "m1", 2).liveness()
	if vs := Check(b.h, Options{}); len(vs) != 1 || vs[0].Invariant != QoS2ExactlyOnce {
		t.Fatalf("Check: want one QoS2ExactlyOnce violation, got %v", vs)
	}
	if vs := CheckPromised(b.h, FixedPolicy()); len(vs) != 0 {
		t.Fatalf("CheckPromised: state loss excuses the duplicate, got %v", vs)
	}
	// Without the fault the duplicate is a promised violation.
	c := base().qos2("m1", 1, 1).delivered("s1", "m1", 2).liveness()
	if vs := CheckPromised(c.h, FixedPolicy()); len(vs) != 1 {
		t.Fatalf("CheckPromised: want the duplicate, got %v", vs)
	}
}

// TestCheckPromisedStateLossWithoutSuback: a subscriber whose SUBACK was lost
// (no Subscribed event) still gets what the broker routes to it; losing its
// QoS2 state makes the resent PUBLISH a second delivery, which the fault
// excuses (campaign seeds 926 and 20999, 3.1.1 swarm). Canary: the same
// history without the StateLost is a promised violation.
func TestCheckPromisedStateLossWithoutSuback(t *testing.T) {
	run := func(lose bool) []Violation {
		b := base().connect("s2", false, false).xfer("s2", BrokerNode, pkt(SUBSCRIBE, 1)).
			accepted("p1", "m1", 2).xfer("p1", BrokerNode, publish(1, 2, false, "m1")).
			xfer(BrokerNode, "s2", publish(3, 2, false, "m1")).delivered("s2", "m1", 2)
		if lose {
			b.ev(Event{Kind: StateLost, Node: "s2"})
		}
		b.xfer(BrokerNode, "s2", publish(3, 2, true, "m1")).delivered("s2", "m1", 2).liveness()
		return CheckPromised(b.h, FixedPolicy())
	}
	for _, v := range run(true) {
		if v.Invariant == QoS2ExactlyOnce {
			t.Fatalf("state loss of s2 must excuse its duplicate, got %v", v)
		}
	}
	found := false
	for _, v := range run(false) {
		found = found || (v.Invariant == QoS2ExactlyOnce && v.Node == "s2")
	}
	if !found {
		t.Fatal("canary: without the state loss the duplicate must be a promised violation")
	}
}

func TestMatches(t *testing.T) {
	cases := []struct {
		f, t string
		want bool
	}{
		{"t/a", "t/a", true}, {"t/a", "t/b", false}, {"t/+", "t/a", true}, {"t/+", "t/a/b", false},
		{"t/#", "t/a/b", true}, {"t/#", "t", true}, {"#", "t/a", true}, {"+/+", "t/a", true},
		{"+", "t/a", false}, {"#", "$SYS/x", false}, {"+/x", "$SYS/x", false}, {"$SYS/#", "$SYS/x", true},
		{"t/a/b", "t/a", false}, {"t/+/c", "t/b/c", true}, {"t//c", "t//c", true}, {"+", "", true},
	}
	for _, c := range cases {
		if got := Matches(c.f, c.t); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.f, c.t, got, c.want)
		}
	}
}

func TestSetAndNames(t *testing.T) {
	if len(Invariants()) != 25 || All().String() != "{NoLoss,QoS2ExactlyOnce,Retransmit,PubrelAnswered,PacketIDUnique,SendQuota,Order,NoStuck,SessionPresent,GrantedQoS,Unsubscribe,Overlap,Retained,MessageExpiry,ClientKeepAlive,SharedDelivery,FlowResume,BrokerKeepAlive,SessionExpiry,TopicAlias,Will,SubscriptionIDs,MaxPacketSize,DollarTopics,Access}" {
		t.Fatalf("All() = %v", All())
	}
	s := SetOf(Order, NoLoss).Without(Order)
	if !s.Has(NoLoss) || s.Has(Order) || s.String() != "{NoLoss}" {
		t.Fatalf("set ops: %v", s)
	}
	if Invariant(0).String() != "Invariant(0)" || Invariant(99).String() != "Invariant(99)" {
		t.Fatal("out-of-range invariant names")
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := FixedPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := LegacyPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := FixedPolicy()
	bad.Broker = 9
	err := bad.Validate()
	if !errors.Is(err, ErrBadPolicy) || !strings.Contains(err.Error(), "Broker persistence 9") {
		t.Fatalf("Validate = %v", err)
	}
	if err := (Policy{}).Validate(); !errors.Is(err, ErrBadPolicy) {
		t.Fatalf("zero policy must not validate: %v", err)
	}
}
