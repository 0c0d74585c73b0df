package live

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// limited is the spec's promise for every role with the broker's limits l.
func limited(l model.BrokerLimits) model.Policies {
	p := model.FixedPolicy()
	p.Limits = l
	return model.Uniform(p)
}

// TestQueueLimitRecorded (issue 20, class 3): runs of our broker with a
// queue bound of 3 (simrun broker -config with max_queued_messages 3 and
// queue_full drop-oldest, then drop-newest), recorded with 'simrun live
// -seed 5 -broker ours -broker-config FILE -subscribers 1 -publishers 1
// -faults client-kill -duration 5s -rate 40 -liveness 8s -fault-interval
// 700ms -promise broker=spec,queue:3:POLICY' with the commit that added them. The
// subscriber is killed twice while p1 publishes: the broker drops 21 (8)
// copies for it and logs each drop, which the tester records as Dropped
// events. Under the declared limit the runs are clean; the same histories
// without it lose every dropped copy (NoLoss, and FlowResume: parked
// though s1 is connected at the end). A drop against the declared limit
// is caught with it: a bound the run shows the queue never reached
// (queue:30), the other policy (drop-newest when the broker dropped the
// oldest: no copy older than the dropped one may have been queued; drop-
// oldest with an in-flight window of 2 when it dropped the newest: more
// older copies than that were sent after the drop; that window is itself
// caught as SendQuota).
func TestQueueLimitRecorded(t *testing.T) {
	oldest := model.BrokerLimits{Queue: 3, QueueFull: model.DropOldest}
	newest := model.BrokerLimits{Queue: 3, QueueFull: model.DropNewest}
	lost := func(n int) map[model.Invariant]int {
		return map[model.Invariant]int{model.NoLoss: n, model.FlowResume: n}
	}
	judgeRecorded(t, []recorded{
		{file: "queue3-drop-oldest.jsonl", promise: limited(oldest)},
		{file: "queue3-drop-oldest.jsonl", promise: limited(model.BrokerLimits{}), want: lost(21)},
		{file: "queue3-drop-oldest.jsonl", promise: limited(model.BrokerLimits{Queue: 30, QueueFull: model.DropOldest}), want: lost(21)},
		{file: "queue3-drop-oldest.jsonl", promise: limited(newest), want: lost(3)},
		{file: "queue3-drop-newest.jsonl", promise: limited(newest)},
		{file: "queue3-drop-newest.jsonl", promise: limited(model.BrokerLimits{}), want: lost(8)},
		// The window is caught too: to a v5 subscriber (Receive Maximum 65535)
		// our broker keeps up to 11 copies in flight in this run, not 2.
		{file: "queue3-drop-newest.jsonl", promise: limited(model.BrokerLimits{Queue: 3, QueueFull: model.DropOldest, Inflight: 2}),
			want: map[model.Invariant]int{model.NoLoss: 7, model.FlowResume: 7, model.SendQuota: 52}},
	})
}

// TestQueueLimitOrderCanary: the drop-oldest run with its first two drop
// records swapped (the broker dropping a copy while an older copy of the
// same publisher stayed queued, to be dropped after it) is caught under
// the declared limit, for that one copy, by either policy.
func TestQueueLimitOrderCanary(t *testing.T) {
	h, err := ReadHistory(filepath.Join("testdata", "queue3-drop-oldest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var drops []int
	for i, e := range h.Events {
		if e.Kind == model.Dropped {
			drops = append(drops, i)
		}
	}
	if len(drops) < 2 {
		t.Fatalf("%d drops recorded, want at least 2", len(drops))
	}
	a, b := &h.Events[drops[0]], &h.Events[drops[1]]
	a.Msg, b.Msg = b.Msg, a.Msg
	for _, l := range []model.BrokerLimits{
		{Queue: 3, QueueFull: model.DropOldest},
		{Queue: 1, QueueFull: model.DropOldest},
	} {
		v := Judge(h, limited(l), 0)
		if got, want := countsOf(v.Violations), fmt.Sprint(map[model.Invariant]int{model.NoLoss: 1, model.FlowResume: 1}); got != want {
			for _, x := range v.Violations {
				t.Logf("%s: %s", x.Invariant, x.Reason)
			}
			t.Errorf("%v: %s, want %s (the copy dropped before an older one)", l, got, want)
		}
	}
}

// TestParseDropLine: the drop line of simrun broker and of any broker that
// writes DropLineFormat becomes a Dropped event; other lines do not.
func TestParseDropLine(t *testing.T) {
	tests := []struct {
		line                     string
		ok                       bool
		peer, msg, topic, reason string
	}{
		{`simrun broker: 03:41:07.512 dropped client=s1 reason=queue-full bound=1000 policy=drop-oldest topic="mqttlab/live" msg="lt00002a-7"`,
			true, "s1", "lt00002a-7", "mqttlab/live", "queue-full bound=1000 policy=drop-oldest"},
		{`dropped client=s2 reason=expired topic="t" msg="x"`, true, "s2", "x", "t", "expired"},
		{`1700000000: dropped client=c-9 reason=queue-full msg="a \"b\"" extra=1`, true, "c-9", `a "b"`, "", "queue-full"},
		{`dropped client=s1 reason=queue-full`, false, "", "", "", ""},        // no msg
		{`dropped client= reason=queue-full msg="x"`, false, "", "", "", ""},  // no client
		{`dropped client=s1 reason=queue-full msg="x`, false, "", "", "", ""}, // unterminated
		{`simrun broker: conn 1 opened`, false, "", "", "", ""},
	}
	for _, tc := range tests {
		e, ok := ParseDropLine(tc.line)
		if ok != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.line, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if e.Kind != model.Dropped || e.Node != model.BrokerNode || e.Peer != tc.peer || e.Msg != tc.msg || e.Topic != tc.topic || e.Reason != tc.reason {
			t.Errorf("%q: %+v, want peer %q msg %q topic %q reason %q", tc.line, e, tc.peer, tc.msg, tc.topic, tc.reason)
		}
	}
}

// TestDropStats: the summary counts the broker's drops and how many the
// declared limits excuse.
func TestDropStats(t *testing.T) {
	h, err := ReadHistory(filepath.Join("testdata", "queue3-drop-oldest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lim     model.BrokerLimits
		excused int
	}{{model.BrokerLimits{Queue: 3, QueueFull: model.DropOldest}, 21}, {model.BrokerLimits{}, 0}, {model.BrokerLimits{Queue: 3, QueueFull: model.DropNewest}, 18}} {
		cfg := DefaultTestConfig()
		cfg.Promise = limited(c.lim)
		r := JudgeRecorded(cfg, h)
		if r.Stats.Dropped != 21 || r.Stats.DropsExcused != c.excused {
			t.Errorf("%v: %d dropped, %d excused; want 21, %d", c.lim, r.Stats.Dropped, r.Stats.DropsExcused, c.excused)
		}
		if want := fmt.Sprintf("drops        21 copies the broker dropped (its drop log), %d excused", c.excused); !strings.Contains(r.Summary(), want) {
			t.Errorf("%v: summary lacks %q:\n%s", c.lim, want, r.Summary())
		}
	}
}
