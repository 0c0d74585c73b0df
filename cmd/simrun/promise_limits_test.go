package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// TestParsePromiseLimits: the broker's limits ride among its sets, in the
// plain form and the broker's entry, whatever their order (a preset set
// after them keeps them); the clients' policies declare none.
func TestParsePromiseLimits(t *testing.T) {
	tests := []struct {
		in   string
		want model.BrokerLimits
	}{
		{"spec", model.BrokerLimits{}},
		{"broker=spec,queue:1000:drop-oldest", model.BrokerLimits{Queue: 1000, QueueFull: model.DropOldest}},
		{"broker=queue:5:drop-newest,fixed", model.BrokerLimits{Queue: 5, QueueFull: model.DropNewest}},
		{"broker=fixed, queue:3:drop-oldest, inflight:32, expiry:60;subscribers=mosquitto-clients",
			model.BrokerLimits{Queue: 3, QueueFull: model.DropOldest, Inflight: 32, Expiry: 60}},
		{"queue:10:drop-oldest,mosquitto-clients", model.BrokerLimits{Queue: 10, QueueFull: model.DropOldest}},
		{"broker=broker-periodic,expiry:1", model.BrokerLimits{Expiry: 1}},
	}
	for _, tc := range tests {
		ps, roles, err := parsePromise(tc.in, 2, 2)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if ps.Broker.Limits != tc.want {
			t.Errorf("%q: broker limits %v, want %v", tc.in, ps.Broker.Limits, tc.want)
		}
		if got := ps.For("s1").Limits; got != tc.want {
			t.Errorf("%q: s1 is judged with the broker's limits %v, want %v", tc.in, got, tc.want)
		}
		if err := ps.Broker.Validate(); err != nil {
			t.Errorf("%q: %v", tc.in, err)
		}
		if len(roles) == 0 {
			t.Errorf("%q: no roles", tc.in)
		}
	}
}

// TestParsePromiseLimitErrors: a malformed or misplaced limit is a usage
// error naming it.
func TestParsePromiseLimitErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"broker=queue:1000", "want queue:N:drop-oldest or queue:N:drop-newest"},
		{"broker=queue:0:drop-oldest", `"0" is not a whole number in 1..`},
		{"broker=queue:x:drop-oldest", `"x" is not a whole number`},
		{"broker=queue:-3:drop-oldest", `"-3" is not a whole number`},
		{"broker=queue:10:drop-middle", `queue policy "drop-middle" is neither drop-oldest nor drop-newest`},
		{"broker=queue:10:drop-oldest,queue:20:drop-oldest", "queue given twice"},
		{"broker=inflight:70000", `"70000" is not a whole number in 1..65535`},
		{"broker=inflight", `unknown promise set "inflight"`},
		{"broker=expiry:1:2", "want expiry:SECONDS"},
		{"broker=expiry:99999999999", "is not a whole number in 1..4294967295"},
		{"broker=burst:3", `unknown limit "burst:3"`},
		{"subscribers=queue:3:drop-oldest", "is a broker limit, not one of subscribers"},
		{"s1=spec,inflight:3", "is a broker limit, not one of s1"},
	} {
		_, _, err := parsePromise(c.in, 2, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to say %q", c.in, err, c.want)
		}
	}
}

// TestLivePromiseLimitUsage: simrun live refuses a bad limit up front
// with exit 2, before any subject starts.
func TestLivePromiseLimitUsage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	r := simrun(t, "live", "-out", dir, "-promise", "broker=spec,queue:10:drop-sideways")
	r.want(t, exitUsage)
	if !strings.Contains(r.stderr, "bad -promise") || !strings.Contains(r.stderr, "drop-sideways") {
		t.Errorf("stderr does not name the bad limit:\n%s", r.stderr)
	}
}

// TestLiveOursBrokerConfig: -broker ours -broker-config FILE hands the
// file to simrun broker with -config, in place, instead of writing a copy
// into the broker's record store (which the broker then refused to open:
// "corrupt record"); a mosquitto built-in or a bad file is refused up
// front.
func TestLiveOursBrokerConfig(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "q.conf")
	if err := os.WriteFile(conf, []byte("max_queued_messages 3\nqueue_full drop-oldest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := liveFlags{broker: "ours", brokerPreset: defaultPreset, brokerConfig: conf}
	b, err := f.brokerSubject()
	if err != nil {
		t.Fatal(err)
	}
	if b.Config != "" || !strings.Contains(b.Command, " -config '"+conf+"'") || !strings.Contains(b.Command, "-data {dir}") {
		t.Errorf("broker subject %+v: want the file given with -config, nothing written into {dir}", b)
	}
	for _, c := range []struct{ conf, want string }{
		{"mosquitto", "is a mosquitto config"},
		{filepath.Join(t.TempDir(), "missing.conf"), "bad -broker-config"},
	} {
		f := liveFlags{broker: "ours", brokerPreset: defaultPreset, brokerConfig: c.conf}
		if _, err := f.brokerSubject(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-broker-config %s: error %v, want it to say %q", c.conf, err, c.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(bad, []byte("max_queued_messages none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f = liveFlags{broker: "ours", brokerPreset: defaultPreset, brokerConfig: bad}
	if _, err := f.brokerSubject(); err == nil || !strings.Contains(err.Error(), "max_queued_messages") {
		t.Errorf("a bad config file: error %v, want it to name the key", err)
	}
}

// TestLiveOursQueueLimit (acceptance): our broker with a queue bound of 1
// and an in-flight window of 1 for 3.1.1 clients (-broker-config), two
// publishers at 60 msg/s and one 3.1.1 subscriber at QoS 2, slowed
// connections and the subscriber killed twice (seed 5), drops copies (a
// window of one QoS 2 flow cannot keep up; an offline session holds one
// copy) and logs each; the tester records them as Dropped events, and
// under the declared limit (-promise broker=spec,queue:1:drop-oldest) the
// run is clean. The same history judged without the limit loses every
// dropped copy (NoLoss).
func TestLiveOursQueueLimit(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "q1.conf")
	if err := os.WriteFile(conf, []byte("max_queued_messages 1\nqueue_full drop-oldest\nmax_inflight_v311 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, dir := liveRun(t, "-seed", "5", "-broker", "ours", "-broker-config", conf, "-subscribers", "1", "-publishers", "2",
		"-version", "3", "-rate", "60", "-fault-interval", "500ms", "-faults", "slow,client-kill", "-liveness", "8s",
		"-promise", "broker=spec,queue:1:drop-oldest")
	r.want(t, exitOK)
	h, err := live.ReadHistory(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for _, e := range h.Events {
		if e.Kind == model.Dropped {
			drops++
			if e.Peer != "s1" || !strings.HasPrefix(e.Reason, "queue-full bound=1 policy=drop-oldest") {
				t.Errorf("drop recorded as %+v", e)
			}
		}
	}
	if drops == 0 {
		log, _ := os.ReadFile(filepath.Join(dir, "logs/broker.log"))
		t.Fatalf("no Dropped event recorded; broker log:\n%.3000s", log)
	}
	v := live.Judge(h, model.Uniform(model.FixedPolicy()), 0)
	lost := 0
	for _, x := range v.Violations {
		if x.Invariant == model.NoLoss {
			lost++
		}
	}
	if lost == 0 || lost > drops {
		t.Errorf("without the limit: %d NoLoss violations of %d drops, want between 1 and %d", lost, drops, drops)
	}
}
