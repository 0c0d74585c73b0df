package live

import (
	"strings"
	"testing"

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
