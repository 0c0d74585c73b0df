package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// stopPlan is FuzzSimPlan's finding: a subscription the periodic broker had
// not snapshotted yet, then a clean stop of the broker while QoS 2 messages
// are published.
const stopPlan = `mqttlab-plan 1
seed 1
profile calm
preset broker-periodic
scenario small
version 5
---
connect p1
connect s1
advance 50ms
subscribe s1 filter=t/# qos=2
advance 100ms
stop broker
slow p1 200ms
publish p1 topic=t/a qos=2 msg=p1-1
publish p1 topic=t/a qos=2 msg=p1-2
publish p1 topic=t/a qos=2 msg=p1-3
publish p1 topic=t/a qos=2 msg=p1-4
advance 1s
`

// runStopPlan runs stopPlan with the broker's persistence set to mode.
func runStopPlan(t *testing.T, mode engine.BrokerPersistence) Result {
	t.Helper()
	plan, err := ParsePlan(stopPlan)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigOf(plan.Header)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Preset.Broker.Persistence = mode
	r := Run(cfg, plan)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	stops := 0
	for _, e := range r.History().Events {
		if e.Kind == model.Crash && e.Node == BrokerName && e.Point == model.CrashStop {
			stops++
		}
	}
	if stops != 1 {
		t.Fatalf("the history records %d broker stops (Crash at CrashStop), want 1", stops)
	}
	return r
}

// TestStopBrokerPeriodicKeepsSubscription: a periodic broker writes its
// snapshot on Shutdown, so the subscription survives the stop and every
// message reaches s1, with no violation at all.
func TestStopBrokerPeriodicKeepsSubscription(t *testing.T) {
	r := runStopPlan(t, engine.PersistPeriodic)
	if r.Stats.Delivered != 4 || !r.Quiet {
		t.Fatalf("delivered %d of 4 messages (quiet %v)", r.Stats.Delivered, r.Quiet)
	}
	if vs := model.Check(r.History(), model.Options{}); len(vs) > 0 {
		t.Fatalf("violations after a clean stop of a periodic broker: %v", vs)
	}
}

// TestStopBrokerWithoutPersistenceIsExcused: a broker that keeps nothing
// durable forgets the subscription on a stop, so the messages are lost; the
// model sees the stop and does not promise NoLoss, so nothing promised is
// violated.
func TestStopBrokerWithoutPersistenceIsExcused(t *testing.T) {
	r := runStopPlan(t, engine.LegacyPersistNone)
	if r.Stats.Delivered != 0 {
		t.Fatalf("delivered %d messages through a subscription the broker cannot remember", r.Stats.Delivered)
	}
	lost := false
	for _, v := range model.Check(r.History(), model.Options{}) {
		lost = lost || v.Invariant == model.NoLoss
	}
	if !lost {
		t.Fatal("the model sees no NoLoss violation: the canary shows nothing")
	}
	if len(r.Violations) > 0 {
		t.Fatalf("promised violations after a stop of a broker without persistence: %v", r.Violations)
	}
}
