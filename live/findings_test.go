package live

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/findings"
	"github.com/mqttlab/mqttlab/model"
)

// readGzHistory reads a recorded history.jsonl.gz of testdata/findings.
func readGzHistory(t *testing.T, name string) model.History {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata/findings", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "history.jsonl")
	out, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.ReadFrom(z); err != nil {
		t.Fatal(err)
	}
	out.Close()
	h, err := ReadHistory(tmp)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// groupRecorded judges a recorded history under the spec's promises and
// groups its violations, checking that the findings account for every
// violation exactly once.
func groupRecorded(t *testing.T, name string) (model.History, Verdict, []findings.Finding) {
	h := readGzHistory(t, name)
	v := Judge(h, model.Uniform(model.FixedPolicy()), DefaultTestConfig().Tolerance)
	fs := findings.Group(&h, v.Violations)
	want := map[model.Invariant]int{}
	for _, x := range v.Violations {
		want[x.Invariant]++
	}
	got := map[model.Invariant]int{}
	for i := range fs {
		for _, x := range fs[i].Occurrences {
			got[x.Invariant]++
		}
		for _, c := range fs[i].Explains {
			got[c.Violation.Invariant]++
		}
	}
	for _, inv := range model.Invariants() {
		if got[inv] != want[inv] {
			t.Errorf("%s: findings account for %d violations, the verdict has %d", inv, got[inv], want[inv])
		}
	}
	return h, v, fs
}

// TestFindingsMosquittoStrictKilled: mosquitto (autosave on every change)
// SIGKILLed 18 times under load (simrun live -broker mosquitto
// -broker-config mosquitto-strict -faults broker-kill -duration 30s -seed
// 2, docs/live.md) reads as at most 6 findings: its resends after PUBREL
// and its reuse of packet ids still in flight stay two findings, every
// duplicate delivery is listed under one of them, and what the liveness
// bound cut is one finding of its own that blames no subject.
func TestFindingsMosquittoStrictKilled(t *testing.T) {
	h, v, fs := groupRecorded(t, "mosquitto-strict-killed.jsonl.gz")
	// mosquitto refused some PUBLISHes with PUBREC 0x97 (Quota exceeded):
	// a refused message is owed to no one [MQTT-4.3.3-8] (the model's
	// refused.go), so no violation names one of them.
	refused := refusedMsgs(&h)
	if len(refused) == 0 {
		t.Fatal("the recording holds no refused PUBLISH: the check below proves nothing")
	}
	for _, x := range v.Violations {
		for m := range refused {
			if x.Invariant == model.NoLoss && strings.Contains(x.Reason, `"`+m+`"`) {
				t.Errorf("a message mosquitto refused (PUBREC 0x97) is owed: %s", x)
			}
		}
	}
	if len(fs) == 0 || len(fs) > 6 {
		t.Fatalf("%d findings, want 1 to 6", len(fs))
	}
	var resend, reuse, cut *findings.Finding
	for i := range fs {
		f := &fs[i]
		switch {
		case f.Invariant == model.Retransmit && strings.Contains(f.Pattern, "after its PUBREL"):
			resend = f
		case f.Invariant == model.PacketIDUnique:
			reuse = f
		case f.Subject == findings.CutSubject:
			cut = f
		case f.Invariant == model.QoS2ExactlyOnce:
			t.Errorf("a duplicate delivery is a finding of its own: %s", f.Title())
		}
	}
	if resend == nil || reuse == nil || cut == nil {
		t.Fatalf("want the resend, the id reuse and the cut as findings:\n%s", findings.Markdown(&h, fs, 0)[:3000])
	}
	if len(resend.ExplainedCounts()) == 0 || resend.ExplainedCounts()[0].Invariant != model.QoS2ExactlyOnce {
		t.Errorf("the resends explain no duplicate delivery: %v", resend.ExplainedCounts())
	}
	for _, name := range []string{"PUBREL", "PUBCOMP", "Crash", "Restart", "CONNACK", "Delivered"} {
		var lines []string
		for _, i := range resend.Excerpt {
			lines = append(lines, findings.FormatEvent(i, &h.Events[i]))
		}
		if !strings.Contains(strings.Join(lines, "\n"), name) {
			t.Errorf("the resend's flow lacks a %s", name)
		}
	}
	if !strings.Contains(cut.Reading, "not a finding against the broker") {
		t.Errorf("the cut's reading blames a subject: %s", cut.Reading)
	}
}

// TestFindingsMosquittoSubKilled: mosquitto_sub (3.1.1, persistent QoS 2)
// killed at random under mosquitto (simrun live -broker mosquitto
// -subscriber 'mosquitto_sub ...' -faults client-kill -duration 30s -seed
// 3, docs/live.md) is one finding: the subscriber acknowledged messages
// and lost them in its crash, cited in 3.1.1's numbers, with the NoStuck
// it causes listed under it.
func TestFindingsMosquittoSubKilled(t *testing.T) {
	h, _, fs := groupRecorded(t, "mosquitto-sub-killed.jsonl.gz")
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1:\n%s", len(fs), findings.Markdown(&h, fs, 0))
	}
	f := &fs[0]
	if f.Invariant != model.NoLoss || !strings.Contains(f.Pattern, findings.ShapeAcked) || f.Version != findings.V311 {
		t.Fatalf("finding %s, pattern %q, version %d", f.Title(), f.Pattern, f.Version)
	}
	if got := strings.Join(f.Clauses, ","); got != "MQTT-4.3.3-2,MQTT-4.3.2-2" {
		t.Errorf("clauses %s, want 3.1.1's MQTT-4.3.3-2,MQTT-4.3.2-2", got)
	}
	if len(f.Explains) != 1 || f.Explains[0].Violation.Invariant != model.NoStuck {
		t.Errorf("explains %v, want the NoStuck", f.ExplainedCounts())
	}
	if !strings.Contains(f.Reading, "crashed at step") {
		t.Errorf("the reading does not name the crash: %s", f.Reading)
	}
}

// refusedMsgs lists the messages the broker answered with a PUBACK or
// PUBREC of reason code >= 0x80 and never with a lower one.
func refusedMsgs(h *model.History) map[string]bool {
	type link struct {
		peer string
		id   uint16
	}
	last := map[link]string{}
	refused, accepted := map[string]bool{}, map[string]bool{}
	for _, e := range h.Events {
		p := &e.Packet
		switch {
		case e.Kind == model.Received && e.Node == model.BrokerNode && p.Type == model.PUBLISH && p.QoS > 0:
			last[link{e.Peer, p.ID}] = p.Msg
		case e.Kind == model.Sent && e.Node == model.BrokerNode && (p.Type == model.PUBACK || p.Type == model.PUBREC):
			if m := last[link{e.Peer, p.ID}]; m != "" && p.Reason >= 0x80 {
				refused[m] = true
			} else if m != "" {
				accepted[m] = true
			}
		}
	}
	for m := range accepted {
		delete(refused, m)
	}
	return refused
}
