package live

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/model"
)

// TestExcuses: each excused invariant names the fault groups that alone
// take it away under the declared policy.
func TestExcuses(t *testing.T) {
	mosq := model.FixedPolicy()
	mosq.Retransmit, mosq.QoS2Durable, mosq.AckBeforeCallback = model.RetransmitMemory, false, true
	periodic := model.FixedPolicy()
	periodic.Broker = model.PersistPeriodic
	for _, c := range []struct {
		name string
		p    model.Policy
		f    model.Faults
		inv  model.Invariant
		want []string // substrings of the groups named, in order
	}{
		{"broker crash, periodic", periodic, model.Faults{BrokerCrashes: 2, Crashes: []model.CrashFault{{Role: model.RoleBroker}}, LivenessRan: true},
			model.NoLoss, []string{"2 broker crashes"}},
		{"subscriber and publisher crashes, mosquitto clients", mosq,
			model.Faults{SubscriberCrashes: 1, SubscriberMidDelivery: 1, PublisherCrashes: 1, PublisherCrashesUnacked: 1,
				Crashes: []model.CrashFault{{Role: model.RoleSubscriber}, {Role: model.RolePublisher}}, LivenessRan: true},
			model.NoLoss, []string{"publisher crashes", "subscriber crashes"}},
		{"subscriber crash, volatile QoS 2", mosq, model.Faults{SubscriberCrashes: 1, Crashes: []model.CrashFault{{Role: model.RoleSubscriber}}},
			model.QoS2ExactlyOnce, []string{"1 subscriber crashes"}},
	} {
		var got *Excuse
		for _, e := range excuses(model.Uniform(c.p), c.f, nil) {
			if e.Invariant == c.inv {
				got = &e
			}
		}
		if got == nil {
			t.Errorf("%s: %s not excused", c.name, c.inv)
			continue
		}
		if len(got.By) != len(c.want) {
			t.Errorf("%s: excused by %q, want %d groups %q", c.name, got.By, len(c.want), c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got.By[i], w) {
				t.Errorf("%s: group %d is %q, want it to name %q", c.name, i, got.By[i], w)
			}
		}
	}
	if ex := excuses(model.Uniform(model.FixedPolicy()), model.Faults{BrokerCrashes: 3, LivenessRan: true}, nil); len(ex) != 0 {
		t.Errorf("the spec's promises excused %v under broker crashes", ex)
	}
}

// TestHistoryRoundTrip: ReadHistory reads back what writeHistory wrote,
// every field the model reads.
func TestHistoryRoundTrip(t *testing.T) {
	h := model.History{Events: []model.Event{
		{Kind: model.Sent, Time: 5, Node: "s1", Peer: model.BrokerNode, Packet: model.Packet{Type: model.CONNECT, KeepAlive: 2, MaxSize: 900, Expiry: 60, Will: true, WillDelay: 3, Topic: "w", Msg: "lt00000a-1", Payload: "lt00000a-1", QoS: 1}},
		{Kind: model.Received, Time: 6, Node: model.BrokerNode, Peer: "p1", Packet: model.Packet{Type: model.PUBLISH, ID: 9, QoS: 2, Dup: true, Topic: "t", Msg: "", Payload: "other", Size: 40, SubIDs: []uint32{4}}},
		{Kind: model.Connected, Time: 7, Node: "s1", Peer: model.BrokerNode, CleanStart: true, SessionPresent: true, HadState: true, Version: 5, ReceiveMax: 10},
		{Kind: model.Crash, Time: 8, Node: "s1", Point: model.CrashBetweenSteps, Reason: "why"},
	}}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if err := writeHistory(path, h); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, h)
	}
	if err := os.WriteFile(path, []byte(`{"kind":"Meteor"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHistory(path); err == nil || !strings.Contains(err.Error(), "Meteor") {
		t.Errorf("unknown kind: error %v", err)
	}
}

// TestJitterProbeRounds: the tolerance is the largest lateness seen,
// rounded up to a whole millisecond.
func TestJitterProbeRounds(t *testing.T) {
	j := startJitterProbe()
	j.note(12300 * time.Microsecond)
	tol, n := j.finish()
	if tol < 13*time.Millisecond || tol%time.Millisecond != 0 || n < 1 {
		t.Errorf("tolerance %v over %d samples, want a whole number of ms >= 13ms", tol, n)
	}
}
