package sim

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// obsWorld is a swarm world with publisher p and subscriber s declared and
// nothing connected: its observer is fed by hand.
func obsWorld(t *testing.T) (w *World, p, s int32) {
	t.Helper()
	w = mustWorld(t, Config{Scenario: SwarmScenario, Profile: "calm"}, "node p v=4", "node s v=4")
	return w, w.byName["p"], w.byName["s"]
}

// brokerGot feeds the observer a SUBSCRIBE (qos >= 0) or, with qos < 0, an
// UNSUBSCRIBE of filter that the broker received from client c.
func brokerGot(w *World, c int32, filter string, qos int) {
	p := &cpacket{typ: uint8(packet.UNSUBSCRIBE), filter: w.strs.id(filter)}
	if qos >= 0 {
		p.typ, p.qos = uint8(packet.SUBSCRIBE), uint8(qos)
	}
	w.obs.received(w, &conn{client: c}, sideBroker, p)
}

// acceptAt makes publisher p's command cmd accept message msg on topic at
// QoS 1.
func acceptAt(w *World, p int32, cmd engine.CmdID, msg, topic string) {
	w.obs.accepted(w, p, cmd, &cmdInfo{kind: cmdPublish, msg: w.strs.id(msg), tid: w.strs.id(topic), qos: 1})
}

// TestObserverSubackAfterUnsubscribe: the SUBACK a client reads answers
// the SUBSCRIBE the broker took before it sent that SUBACK; a later
// UNSUBSCRIBE (or QoS 0 SUBSCRIBE) of the filter the broker took before
// the client read it removed the QoS>=1 subscription [MQTT-3.10.4-1]
// [MQTT-3.8.4-3], so a message published on it is not owed. The broker's
// last request on the filter decides, both ways.
func TestObserverSubackAfterUnsubscribe(t *testing.T) {
	for _, c := range []struct {
		name string
		reqs []int // the broker's requests on t/a in order: QoS, or -1 for UNSUBSCRIBE
		owed bool
	}{
		{"subscribe", []int{1}, true},
		{"subscribe, unsubscribe", []int{1, -1}, false},
		{"subscribe, unsubscribe, subscribe", []int{1, -1, 2}, true},
		{"subscribe, resubscribe at QoS 0", []int{1, 0}, false},
		{"subscribe at QoS 0, at QoS 1", []int{0, 1}, true},
	} {
		w, p, s := obsWorld(t)
		for _, q := range c.reqs {
			brokerGot(w, s, "t/a", q)
		}
		w.obs.subscribe(s, "t/a", 1) // s reads the SUBACK of the first SUBSCRIBE
		acceptAt(w, p, 1, "p-1", "t/a")
		if got := w.obs.expected == 1; got != c.owed {
			t.Errorf("%s: owed %v, want %v (%s)", c.name, got, c.owed, w.obs.pendingReport(w))
		}
	}
}

// TestObserverAckByCommand: an acknowledgement takes off the unacknowledged
// message of its own command, so a later clean start forgets the others.
// Every empty publish has the message id "": acknowledging one that an
// earlier clean start already forgot (the engine kept it, never sent, and
// sent it in the new session) must not take off another "" message still
// unacknowledged, which the next clean start discards [MQTT-3.1.2-4].
func TestObserverAckByCommand(t *testing.T) {
	w, p, s := obsWorld(t)
	w.obs.subscribe(s, "t/b", 1)
	acceptAt(w, p, 1, "", "t/c") // owed to no one
	w.obs.cleanStarted(p)        // its Connect was in flight: forgotten
	acceptAt(w, p, 2, "", "t/b") // owed to s
	w.obs.acknowledged(p, 1)
	if w.obs.expected != 1 {
		t.Fatalf("after the first message's ack: owed %d, want 1 (%s)", w.obs.expected, w.obs.pendingReport(w))
	}
	w.obs.cleanStarted(p)
	if w.obs.expected != 0 {
		t.Fatalf("after the clean start: still owed: %s", w.obs.pendingReport(w))
	}

	// The other way: its own acknowledgement keeps it owed.
	w, p, s = obsWorld(t)
	w.obs.subscribe(s, "t/b", 1)
	acceptAt(w, p, 1, "", "t/b")
	w.obs.acknowledged(p, 1)
	w.obs.cleanStarted(p)
	if w.obs.expected != 1 {
		t.Fatalf("an acknowledged message is owed after its publisher's clean start: owed %d, want 1", w.obs.expected)
	}
}

// runPlanFile replays a plan of testdata.
func runPlanFile(t *testing.T, name string) Result {
	t.Helper()
	r := Run(readPlanFile(t, name))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	return r
}

// TestSubackAfterUnsubscribeStillReached: suback-after-unsub-28938.plan
// (swarm seed 28938, every dimension drawn, shrunk) must still reach its
// shape and go quiet: the broker takes s2's SUBSCRIBE and UNSUBSCRIBE of
// t/a before s2 reads the SUBACK, s2 crashes before reading the UNSUBACK,
// and p5 then publishes on t/a. The broker rightly drops p5-1 for s2; the
// observer owed it (NoStuck) when it took the subscription from the SUBACK.
func TestSubackAfterUnsubscribeStillReached(t *testing.T) {
	r := runPlanFile(t, "suback-after-unsub-28938.plan")
	const (
		unsub   = iota // waiting for the broker's UNSUBSCRIBE of s2
		suback         // ... for s2 to read the SUBACK after it
		crashed        // ... for s2's crash with no UNSUBACK read
		publish        // ... for p5's message on t/a
		done
	)
	stage := unsub
	for _, e := range r.History().Events {
		switch {
		case stage == unsub && e.Kind == model.Received && e.Node == BrokerName && e.Peer == "s2" && e.Packet.Type == model.UNSUBSCRIBE:
			stage = suback
		case stage == suback && e.Kind == model.Received && e.Node == "s2" && e.Packet.Type == model.SUBACK:
			stage = crashed
		case stage == crashed && e.Kind == model.Received && e.Node == "s2" && e.Packet.Type == model.UNSUBACK:
			stage = done + 1 // read: not the shape
		case stage == crashed && e.Kind == model.Crash && e.Node == "s2":
			stage = publish
		case stage == publish && e.Kind == model.Accepted && e.Node == "p5" && e.Topic == "t/a":
			stage = done
		}
	}
	if stage != done {
		t.Fatalf("the plan no longer reaches the shape (stopped at stage %d of %d); re-shrink it", stage, done)
	}
	if !r.Quiet || len(r.Violations) > 0 {
		t.Fatalf("quiet %v, promised violations: %v", r.Quiet, r.Violations)
	}
}

// TestEmptyAckedAfterCleanStillReached: empty-acked-after-clean-58348.plan
// (swarm seed 58348, every dimension drawn, shrunk) must still reach its
// shape and go quiet: p2 (Clean Start) publishes an empty message while
// its first CONNECT is in flight, which the engine keeps and sends in the
// new session and the broker acknowledges after that clean start; an
// empty message for s2 stays unacknowledged until p2 crashes and starts
// clean again, discarding it [MQTT-3.1.2-4]. The observer took the first
// acknowledgement for the second message (both have the id "") and owed
// it for good (NoStuck).
func TestEmptyAckedAfterCleanStillReached(t *testing.T) {
	r := runPlanFile(t, "empty-acked-after-clean-58348.plan")
	cleans, ackedEmpty, ackedAfterClean := 0, false, false
	accepted := map[string]bool{} // topic of an accepted empty message
	for _, e := range r.History().Events {
		switch {
		case e.Kind == model.Connected && e.Node == "p2" && e.CleanStart:
			cleans++
		case e.Kind == model.Accepted && e.Node == "p2" && e.Msg == "":
			accepted[e.Topic] = true
		case e.Kind == model.Acknowledged && e.Node == "p2" && e.Msg == "":
			ackedEmpty = true
			ackedAfterClean = ackedAfterClean || cleans == 1
		}
	}
	if cleans != 2 || !ackedAfterClean || !accepted["t/b"] || !accepted["t/c/y"] || !ackedEmpty {
		t.Fatalf("the plan no longer reaches the shape (clean starts %d, empty acked after the first %v, empty on t/b %v, on t/c/y %v); re-shrink it",
			cleans, ackedAfterClean, accepted["t/b"], accepted["t/c/y"])
	}
	if !r.Quiet || len(r.Violations) > 0 {
		t.Fatalf("quiet %v, promised violations: %v", r.Quiet, r.Violations)
	}
}

// TestObserverTooLargeQoS2: a resend the broker discards as too large for
// the client's Maximum Packet Size [MQTT-3.1.2-25] names its packet id
// (engine.Drop.PacketID); the observer then waits neither for its ack nor,
// for a QoS 2 copy the client holds awaiting PUBREL, for that PUBREL: a
// broker that reads "completed" as the flow's end sends none. Only that id
// of that client is excused: another id the client holds, the same id at
// another client, a first send's drop (no id) and a queue-full drop leave
// the stuck id reported (NoStuck still bites).
func TestObserverTooLargeQoS2(t *testing.T) {
	const topic, payload = "t/a", "p-1"
	for _, c := range []struct {
		name   string
		client string
		reason engine.DropReason
		id     uint16
		want   string
	}{
		{"its resend dropped", "s", engine.DropTooLarge, 5, "s client-in ids 7"},
		{"another id's resend dropped", "s", engine.DropTooLarge, 6, "s client-in ids 5 7"},
		{"another client's resend dropped", "p", engine.DropTooLarge, 5, "s client-in ids 5 7"},
		{"a first send dropped", "s", engine.DropTooLarge, 0, "s client-in ids 5 7"},
		{"a queue-full drop", "s", engine.DropQueueFull, 5, "s client-in ids 5 7"},
	} {
		w, _, s := obsWorld(t)
		for _, id := range []uint16{5, 7} {
			w.obs.received(w, &conn{client: s}, sideClient, &cpacket{typ: uint8(packet.PUBLISH), qos: 2, id: id})
		}
		w.brokerDropped(engine.Drop{Client: c.client, Topic: topic, Payload: []byte(payload), Reason: c.reason, PacketID: c.id})
		if got := w.obs.pendingReport(w); got != c.want {
			t.Errorf("%s: pending %q, want %q", c.name, got, c.want)
		}
	}
}

// TestQoS2ResendTooLargeStillReached: qos2-resend-too-large-47923302846.plan
// (swarm seed 47923302846, shrunk) must still reach its shape and go
// quiet: the broker discards s5's QoS 2 resend as too large for its
// Maximum Packet Size [MQTT-3.1.2-25] after s5 received the first copy
// (by topic alias) and PUBREC'd it unheard; the broker then sends PUBREL
// for that id [MQTT-4.3.3-5] and s5 releases it with PUBCOMP 0x00.
func TestQoS2ResendTooLargeStillReached(t *testing.T) {
	r := runPlanFile(t, "qos2-resend-too-large-47923302846.plan")
	held := map[uint16]bool{} // QoS 2 ids s5 received
	var dropped, released bool
	for _, e := range r.History().Events {
		p := &e.Packet
		switch {
		case e.Kind == model.Received && e.Node == "s5" && p.Type == model.PUBLISH && p.QoS == 2:
			held[p.ID] = true
		case e.Kind == model.Dropped && e.Peer == "s5" && e.Reason == "too-large":
			dropped = true
		case dropped && e.Kind == model.Sent && e.Node == "s5" && p.Type == model.PUBCOMP && p.Reason == 0 && held[p.ID]:
			released = true
		}
	}
	if !dropped || !released {
		t.Fatalf("the plan no longer reaches the shape (too-large drop for s5 %v, a held id released after it %v); re-shrink it", dropped, released)
	}
	if !r.Quiet || len(r.Violations) > 0 {
		t.Fatalf("quiet %v, promised violations: %v", r.Quiet, r.Violations)
	}
}
