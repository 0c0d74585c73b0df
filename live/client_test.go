package live_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/internal/mosquittotest"
	"github.com/mqttlab/mqttlab/live"
	"github.com/mqttlab/mqttlab/model"
)

// opTimeout bounds each command and each wait of these tests.
const opTimeout = 10 * time.Second

var versions = []packet.Version{packet.V311, packet.V5}

func fixed(t *testing.T) engine.Preset {
	t.Helper()
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clientConfig is the fixed preset's client with a persistent session.
func clientConfig(t *testing.T, id string, v packet.Version) engine.ClientConfig {
	cfg := engine.DefaultClientConfig(id, fixed(t).Client)
	cfg.Version = v
	if v == packet.V311 {
		cfg.SessionExpiry = 0
	}
	return cfg
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), opTimeout)
	t.Cleanup(cancel)
	return c
}

func runClient(t *testing.T, opts live.ClientOptions) *live.Client {
	t.Helper()
	c, err := live.RunClient(opts)
	if err != nil {
		t.Fatalf("RunClient %s: %v", opts.Config.ClientID, err)
	}
	t.Cleanup(c.Close)
	return c
}

func connect(t *testing.T, c *live.Client, clean, wantSession bool) {
	t.Helper()
	sp, err := c.Connect(ctx(t), clean)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if sp != wantSession {
		t.Fatalf("Session Present %v, want %v", sp, wantSession)
	}
}

// events returns the events of node of kind k from index from on that pass ok.
func events(h model.History, from int, node string, k model.Kind, ok func(model.Event) bool) []model.Event {
	var out []model.Event
	for _, e := range h.Events[from:] {
		if e.Node == node && e.Kind == k && (ok == nil || ok(e)) {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits for an event of node of kind k from index from that passes ok.
func waitFor(t *testing.T, rec *live.Recorder, from int, node string, k model.Kind, what string, ok func(model.Event) bool) int {
	t.Helper()
	i, err := rec.Wait(ctx(t), from, func(e model.Event) bool { return e.Node == node && e.Kind == k && (ok == nil || ok(e)) })
	if err != nil {
		t.Fatalf("%s: waiting for %s: %v\n%s", node, what, err, dump(rec.History()))
	}
	return i
}

func msgIs(msg string) func(model.Event) bool {
	return func(e model.Event) bool { return e.Msg == msg || e.Packet.Msg == msg }
}

func sentPublish(msg string, dup bool) func(model.Event) bool {
	return func(e model.Event) bool {
		return e.Packet.Type == model.PUBLISH && e.Packet.Msg == msg && e.Packet.Dup == dup
	}
}

// deliveredMsgs returns the sorted messages node delivered.
func deliveredMsgs(h model.History, node string) []string {
	var msgs []string
	for _, e := range events(h, 0, node, model.Delivered, nil) {
		msgs = append(msgs, fmt.Sprintf("%s@%d", e.Msg, e.QoS))
	}
	sort.Strings(msgs)
	return msgs
}

func count(h model.History, node string, k model.Kind, ok func(model.Event) bool) int {
	return len(events(h, 0, node, k, ok))
}

// phase marks the history: LivenessStart when the test's faults are over,
// Quiescent once everything it waited for has settled. With both, the model
// also judges no-loss and no-stuck.
func phase(rec *live.Recorder, k model.Kind) {
	rec.Add(model.Event{Kind: k, Time: time.Now().UnixNano()})
}

// checkModel runs the model over a real run's history: a run against a
// compliant broker with the fixed preset must violate nothing.
func checkModel(t *testing.T, rec *live.Recorder) {
	t.Helper()
	h := rec.History()
	if vs := model.Check(h, model.Options{}); len(vs) > 0 {
		for _, v := range vs {
			t.Errorf("model violation: %v", v)
		}
		t.Logf("history:\n%s", dump(h))
	}
}

func dump(h model.History) string {
	var b strings.Builder
	for i, e := range h.Events {
		fmt.Fprintf(&b, "%3d %-12v %s", i, kindName(e.Kind), e.Node)
		if e.Peer != "" {
			fmt.Fprintf(&b, "->%s", e.Peer)
		}
		if e.Packet.Type != 0 {
			p := e.Packet
			fmt.Fprintf(&b, " type=%d id=%d qos=%d dup=%v reason=%#x msg=%q sp=%v", p.Type, p.ID, p.QoS, p.Dup, p.Reason, p.Msg, p.Sessions)
		}
		if e.Msg != "" {
			fmt.Fprintf(&b, " msg=%q qos=%d", e.Msg, e.QoS)
		}
		if e.Kind == model.Connected {
			fmt.Fprintf(&b, " clean=%v sp=%v had=%v", e.CleanStart, e.SessionPresent, e.HadState)
		}
		if e.Reason != "" {
			fmt.Fprintf(&b, " reason=%s", e.Reason)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func kindName(k model.Kind) string {
	names := [...]string{"?", "Accepted", "Acknowledged", "Sent", "Received", "Delivered", "Subscribed",
		"Unsubscribed", "ConnOpened", "ConnClosed", "Connected", "Crash", "Restart", "StateLost",
		"Partition", "Heal", "LivenessStart", "Quiescent", "Stuck", "Failed"}
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprint(k)
}

// TestClientMosquittoPubSub: our client publishes QoS 0, 1 and 2 to
// mosquitto and our client receives them, in 3.1.1 and 5.0.
func TestClientMosquittoPubSub(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v.String(), func(t *testing.T) {
			rec := pubSubRun(t, v)
			h := rec.History()
			if got, want := deliveredMsgs(h, "sub"), []string{"m0@0", "m1@1", "m2@2"}; !slices.Equal(got, want) {
				t.Fatalf("delivered %q, want %q\n%s", got, want, dump(h))
			}
			if n := count(h, "pub", model.Acknowledged, nil); n != 3 {
				t.Errorf("%d publishes acknowledged, want 3 (QoS 1, 2 and the late one)", n)
			}
			checkModel(t, rec)
		})
	}
}

// pubSubRun publishes m0, m1, m2 at QoS 0, 1, 2 from our client to our
// client through mosquitto, then "late" after the subscriber unsubscribed.
func pubSubRun(t *testing.T, v packet.Version) *live.Recorder {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	rec := live.NewRecorder()
	phase(rec, model.LivenessStart) // no faults in this run
	sub := runClient(t, live.ClientOptions{Addr: b.Addr, Config: clientConfig(t, "sub", v), Recorder: rec})
	connect(t, sub, false, false)
	codes, err := sub.Subscribe(ctx(t), packet.Subscription{Filter: "t/#", QoS: 2})
	if err != nil || !slices.Equal(codes, []packet.ReasonCode{packet.GrantedQoS2}) {
		t.Fatalf("subscribe: codes %v err %v", codes, err)
	}
	pub := runClient(t, live.ClientOptions{Addr: b.Addr, Config: clientConfig(t, "pub", v), Recorder: rec})
	connect(t, pub, false, false)
	for q := packet.QoS(0); q <= 2; q++ {
		if err := pub.Publish(ctx(t), fmt.Sprintf("t/%d", q), []byte(fmt.Sprintf("m%d", q)), q, false); err != nil {
			t.Fatalf("publish QoS %d: %v", q, err)
		}
	}
	waitFor(t, rec, 0, "sub", model.Delivered, "m2", msgIs("m2"))
	waitFor(t, rec, 0, "sub", model.Sent, "PUBCOMP", func(e model.Event) bool { return e.Packet.Type == model.PUBCOMP })
	if err := sub.Unsubscribe(ctx(t), "t/#"); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	if err := pub.Publish(ctx(t), "t/late", []byte("late"), 1, false); err != nil {
		t.Fatalf("publish after unsubscribe: %v", err)
	}
	for _, c := range []*live.Client{pub, sub} {
		if err := c.Disconnect(ctx(t)); err != nil {
			t.Fatalf("disconnect: %v", err)
		}
	}
	phase(rec, model.Quiescent)
	return rec
}

// TestModelJudgesRealHistory is the canary of the recorded vocabulary: the
// model must catch a QoS 2 duplicate and a lost QoS 1 message planted in a
// real run's history, so a clean check of real runs means something.
func TestModelJudgesRealHistory(t *testing.T) {
	h := pubSubRun(t, packet.V5).History()
	if vs := model.Check(h, model.Options{}); len(vs) != 0 {
		t.Fatalf("clean run has violations: %v", vs)
	}
	cases := []struct {
		name string
		edit func(h model.History) model.History
		inv  model.Invariant
		msg  string // the message the violation must name
	}{
		{"QoS 2 delivered twice", func(h model.History) model.History {
			d := events(h, 0, "sub", model.Delivered, msgIs("m2"))[0]
			h.Events = append(h.Events[:len(h.Events)-1:len(h.Events)-1], d, h.Events[len(h.Events)-1])
			return h
		}, model.QoS2ExactlyOnce, "m2"},
		{"QoS 1 never delivered", func(h model.History) model.History {
			// The model stops counting a subscription that is unsubscribed
			// at any later step, so the UNSUBSCRIBE goes too.
			var out model.History
			for _, e := range h.Events {
				if !(e.Kind == model.Delivered && e.Msg == "m1") && e.Kind != model.Unsubscribed {
					out.Add(e)
				}
			}
			return out
		}, model.NoLoss, "m1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := c.edit(model.History{Events: slices.Clone(h.Events)})
			vs := model.Check(bad, model.Options{Only: model.SetOf(c.inv)})
			if !slices.ContainsFunc(vs, func(v model.Violation) bool { return strings.Contains(v.Reason, `"`+c.msg+`"`) }) {
				t.Fatalf("model did not catch it: %v\n%s", vs, dump(bad))
			}
		})
	}
}

// TestClientConnectionCutResumes loses acknowledgements in flight (a proxy
// drops them), cuts the connection, and resumes the session: the publisher
// resends with DUP and gets its acks, the subscriber is resent its
// unacknowledged messages and delivers the QoS 2 one exactly once.
func TestClientConnectionCutResumes(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v.String(), func(t *testing.T) {
			b := mosquittotest.Start(t, mosquittotest.Options{})
			pxPub, pxSub := startProxy(t, b.Addr), startProxy(t, b.Addr)
			rec := live.NewRecorder()
			sub := runClient(t, live.ClientOptions{Addr: pxSub.addr(), Config: clientConfig(t, "sub", v), Recorder: rec})
			connect(t, sub, false, false)
			if _, err := sub.Subscribe(ctx(t), packet.Subscription{Filter: "c/#", QoS: 2}); err != nil {
				t.Fatal(err)
			}
			pub := runClient(t, live.ClientOptions{Addr: pxPub.addr(), Config: clientConfig(t, "pub", v), Recorder: rec})
			connect(t, pub, false, false)

			// Publisher side: the broker's PUBACK and PUBREC are lost.
			pxPub.setDrop(true, false)
			t1 := pub.PublishAsync("c/1", []byte("cut-q1"), 1, false)
			t2 := pub.PublishAsync("c/2", []byte("cut-q2"), 2, false)
			waitFor(t, rec, 0, "pub", model.Sent, "PUBLISH cut-q2", sentPublish("cut-q2", false))
			if err := pub.CutConnection(); err != nil {
				t.Fatal(err)
			}
			pxPub.cut() // before the drop ends: no byte in flight may get through
			pxPub.setDrop(false, false)
			mark := rec.Len()
			connect(t, pub, false, true)
			for _, tok := range []*live.Token{t1, t2} {
				if _, err := tok.Wait(ctx(t)); err != nil {
					t.Fatalf("publish after resume: %v", err)
				}
			}
			for _, m := range []string{"cut-q1", "cut-q2"} {
				if len(events(rec.History(), mark, "pub", model.Sent, sentPublish(m, true))) == 0 {
					t.Errorf("%s not resent with DUP after the session-present CONNACK\n%s", m, dump(rec.History()))
				}
			}

			// mosquitto forwards a QoS 2 message on PUBREL (Method A).
			waitFor(t, rec, mark, "sub", model.Delivered, "cut-q2", msgIs("cut-q2"))

			// Subscriber side: its PUBACK and PUBREC are lost.
			subMark := rec.Len()
			pxSub.setDrop(false, true)
			if err := pub.Publish(ctx(t), "c/3", []byte("sub-q1"), 1, false); err != nil {
				t.Fatal(err)
			}
			if err := pub.Publish(ctx(t), "c/4", []byte("sub-q2"), 2, false); err != nil {
				t.Fatal(err)
			}
			waitFor(t, rec, subMark, "sub", model.Delivered, "sub-q2", msgIs("sub-q2"))
			waitFor(t, rec, subMark, "sub", model.Sent, "PUBREC of sub-q2", func(e model.Event) bool { return e.Packet.Type == model.PUBREC })
			if err := sub.CutConnection(); err != nil {
				t.Fatal(err)
			}
			pxSub.cut()
			pxSub.setDrop(false, false)
			phase(rec, model.LivenessStart)
			mark = rec.Len()
			connect(t, sub, false, true)
			i := waitFor(t, rec, mark, "sub", model.Received, "resent PUBLISH sub-q2", func(e model.Event) bool {
				return e.Packet.Type == model.PUBLISH && e.Packet.Msg == "sub-q2" && e.Packet.Dup
			})
			id := rec.History().Events[i].Packet.ID
			waitFor(t, rec, i, "sub", model.Sent, "PUBCOMP of sub-q2", func(e model.Event) bool {
				return e.Packet.Type == model.PUBCOMP && e.Packet.ID == id
			})
			waitFor(t, rec, mark, "sub", model.Delivered, "sub-q1 again", msgIs("sub-q1"))
			phase(rec, model.Quiescent)

			h := rec.History()
			if n := count(h, "sub", model.Delivered, msgIs("sub-q2")); n != 1 {
				t.Errorf("QoS 2 message delivered %d times, want exactly once [MQTT-4.3.3-10]\n%s", n, dump(h))
			}
			if n := count(h, "sub", model.Delivered, msgIs("cut-q2")); n != 1 {
				t.Errorf("QoS 2 message cut-q2 delivered %d times, want exactly once\n%s", n, dump(h))
			}
			checkModel(t, rec)
		})
	}
}

// TestClientRebootFromStore crashes a publisher holding unacknowledged
// messages and reboots it from its file store: the new driver resumes the
// session and resends them, and the subscriber gets each (QoS 2 once).
func TestClientRebootFromStore(t *testing.T) {
	for _, v := range versions {
		t.Run("v"+v.String(), func(t *testing.T) {
			b := mosquittotest.Start(t, mosquittotest.Options{})
			px := startProxy(t, b.Addr)
			rec := live.NewRecorder()
			sub := runClient(t, live.ClientOptions{Addr: b.Addr, Config: clientConfig(t, "sub", v), Recorder: rec})
			connect(t, sub, false, false)
			if _, err := sub.Subscribe(ctx(t), packet.Subscription{Filter: "r/#", QoS: 2}); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			pubOpts := func() live.ClientOptions {
				st, err := live.OpenStore(dir)
				if err != nil {
					t.Fatal(err)
				}
				return live.ClientOptions{Addr: px.addr(), Config: clientConfig(t, "pub", v), Store: st, Recorder: rec}
			}
			pub := runClient(t, pubOpts())
			connect(t, pub, false, false)
			px.setDrop(true, false)
			for i, q := range []packet.QoS{1, 2} {
				tok := pub.PublishAsync(fmt.Sprintf("r/%d", i), []byte(fmt.Sprintf("boot-q%d", q)), q, false)
				if err := tok.WaitAccepted(ctx(t)); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, rec, 0, "pub", model.Sent, "PUBLISH boot-q2", sentPublish("boot-q2", false))
			pub.Crash()
			px.cut()
			px.setDrop(false, false)
			phase(rec, model.LivenessStart)

			mark := rec.Len()
			pub2 := runClient(t, pubOpts())
			connect(t, pub2, false, true)
			for _, m := range []string{"boot-q1", "boot-q2"} {
				waitFor(t, rec, mark, "pub", model.Sent, "resent "+m, sentPublish(m, true))
			}
			waitFor(t, rec, mark, "pub", model.Received, "PUBACK", func(e model.Event) bool { return e.Packet.Type == model.PUBACK })
			waitFor(t, rec, mark, "pub", model.Received, "PUBCOMP", func(e model.Event) bool { return e.Packet.Type == model.PUBCOMP })
			waitFor(t, rec, 0, "sub", model.Delivered, "boot-q1", msgIs("boot-q1"))
			waitFor(t, rec, 0, "sub", model.Delivered, "boot-q2", msgIs("boot-q2"))
			// The UNSUBACK round trip orders any duplicate of boot-q2 before it.
			if err := sub.Unsubscribe(ctx(t), "r/#"); err != nil {
				t.Fatal(err)
			}
			phase(rec, model.Quiescent)
			h := rec.History()
			if n := count(h, "sub", model.Delivered, msgIs("boot-q2")); n != 1 {
				t.Errorf("QoS 2 message delivered %d times, want once\n%s", n, dump(h))
			}
			if n := count(h, "pub", model.Restart, nil); n != 1 {
				t.Errorf("%d Restart events, want 1", n)
			}
			checkModel(t, rec)
		})
	}
}

// TestClientStoreFailureStops: when the store cannot write, the driver stops
// as a crash would: the publish fails with the store's error, the history
// says Failed, and later commands fail with it too.
func TestClientStoreFailureStops(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	dir := t.TempDir()
	st, err := live.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := live.NewRecorder()
	pub := runClient(t, live.ClientOptions{Addr: b.Addr, Config: clientConfig(t, "pub", packet.V5), Store: st, Recorder: rec})
	connect(t, pub, false, false)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err = pub.Publish(ctx(t), "f/1", []byte("no disk"), 1, false)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("publish with a broken store: err = %v, want the store's not-exist error", err)
	}
	if n := count(rec.History(), "pub", model.Failed, nil); n != 1 {
		t.Fatalf("%d Failed events, want 1\n%s", n, dump(rec.History()))
	}
	if err := pub.Publish(ctx(t), "f/2", []byte("after"), 0, false); err == nil {
		t.Fatal("publish after the failure succeeded")
	}
}

// TestHistoryRecordsPublishSize: every PUBLISH the live client sends or
// receives carries its encoded size (model.Packet.Size, what a Maximum
// Packet Size bounds [MQTT-3.1.2-25]): a v5 PUBLISH of "mQ" on t/Q with no
// properties is 10 bytes, 12 with a packet id.
func TestHistoryRecordsPublishSize(t *testing.T) {
	h := pubSubRun(t, packet.V5).History()
	n := 0
	for _, e := range h.Events {
		p := &e.Packet
		if (e.Kind != model.Sent && e.Kind != model.Received) || p.Type != model.PUBLISH || len(p.Topic) != 3 || len(p.Payload) != 2 {
			continue
		}
		want := uint32(10)
		if p.QoS > 0 {
			want += 2
		}
		if p.Size != want {
			t.Errorf("%v %s of %q at QoS %d: Size %d, want %d", e.Kind, e.Node, p.Msg, p.QoS, p.Size, want)
		}
		n++
	}
	if n < 6 {
		t.Errorf("%d PUBLISH events of m0..m2, want the publisher's and the subscriber's 6", n)
	}
}
