package seqchart

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/model"
)

// hist builds a history from events, numbering times by position when a
// time is zero.
func hist(evs ...model.Event) model.History {
	for i := range evs {
		if evs[i].Time == 0 {
			evs[i].Time = int64(i+1) * 1_000_000
		}
	}
	return model.History{Events: evs}
}

func sent(node, peer string, p model.Packet) model.Event {
	return model.Event{Kind: model.Sent, Node: node, Peer: peer, Packet: p}
}

func recv(node, peer string, p model.Packet) model.Event {
	return model.Event{Kind: model.Received, Node: node, Peer: peer, Packet: p}
}

func pub(id uint16, msg string) model.Packet {
	return model.Packet{Type: model.PUBLISH, ID: id, QoS: 1, Msg: msg, Payload: msg, Topic: "t/a"}
}

var puback1 = model.Packet{Type: model.PUBACK, ID: 1}

// TestPacketMatching: a receive is the oldest unreceived send of the same
// packet between the same nodes; a send never received is lost, with the
// cut that ended its link as the reason; acks join their message's story.
func TestPacketMatching(t *testing.T) {
	h := hist(
		model.Event{Kind: model.Accepted, Node: "p1", Msg: "m1", QoS: 1},
		sent("p1", "broker", pub(1, "m1")),                                        // 1: received at 3
		sent("p1", "broker", pub(2, "m2")),                                        // 2: lost
		recv("broker", "p1", pub(1, "m1")),                                        // 3
		sent("broker", "p1", puback1),                                             // 4: received at 5
		recv("p1", "broker", puback1),                                             // 5
		model.Event{Kind: model.Cut, Node: "p1", Peer: "broker", Reason: "reset"}, // 6
		sent("broker", "s1", pub(7, "m1")),                                        // 7: received at 8
		recv("s1", "broker", pub(7, "m1")),                                        // 8
		sent("s1", "broker", model.Packet{Type: model.PUBACK, ID: 7}),             // 9: lost, nothing ended the link
	)
	c := build(Run{History: h})
	if got := strings.Join(c.Nodes, ","); got != "p1,broker,s1" {
		t.Errorf("lanes %s, want publishers left of the broker", got)
	}
	want := []struct {
		sent, recv int
		msg, lost  string
	}{
		{1, 3, "m1", ""},
		{2, -1, "m2", "lost: cut (reset) (step 6)"},
		{4, 5, "m1", ""},
		{7, 8, "m1", ""},
		{9, -1, "m1", "lost: never received"},
	}
	if len(c.Packets) != len(want) {
		t.Fatalf("%d packets, want %d: %+v", len(c.Packets), len(want), c.Packets)
	}
	for i, w := range want {
		p := c.Packets[i]
		if p.Sent != w.sent || p.Recv != w.recv || p.Msg != w.msg || p.Lost != w.lost {
			t.Errorf("packet %d: sent %d recv %d msg %q lost %q, want %+v", i, p.Sent, p.Recv, p.Msg, p.Lost, w)
		}
		if p.Recv < 0 && p.RT <= p.ST {
			t.Errorf("lost packet %d: cross at %d, not after the send at %d", i, p.RT, p.ST)
		}
	}
	if strings.Join(c.Msgs, ",") != "m1,m2" {
		t.Errorf("messages %v", c.Msgs)
	}
}

// TestPacketsOfADeadConnection: a packet towards a node that then
// crashes, closes the connection or has it cut is lost, and a later packet
// just like it (the CONNECT after the broker's restart) is not taken for
// it.
func TestPacketsOfADeadConnection(t *testing.T) {
	connect := model.Packet{Type: model.CONNECT}
	ping := model.Packet{Type: model.PINGREQ}
	h := hist(
		sent("p1", "broker", connect), // 0: lost to the crash
		model.Event{Kind: model.Crash, Node: "broker", Point: model.CrashBetweenSteps},
		model.Event{Kind: model.Restart, Node: "broker"},
		sent("p1", "broker", connect), // 3: received at 4
		recv("broker", "p1", connect),
		sent("p1", "broker", ping), // 5: lost to the close
		model.Event{Kind: model.ConnClosed, Node: "broker", Peer: "p1"},
		sent("p1", "broker", ping), // 7: received at 8
		recv("broker", "p1", ping),
	)
	c := build(Run{History: h})
	got := map[int]int{}
	for _, p := range c.Packets {
		got[p.Sent] = p.Recv
	}
	want := map[int]int{0: -1, 3: 4, 5: -1, 7: 8}
	for s, r := range want {
		if got[s] != r {
			t.Errorf("packet sent at %d received at %d, want %d (all: %v)", s, got[s], r, got)
		}
	}
	if !strings.Contains(c.Packets[0].Lost, "the broker crashed") || !strings.Contains(c.Packets[2].Lost, "closed") {
		t.Errorf("reasons: %q, %q", c.Packets[0].Lost, c.Packets[2].Lost)
	}
}

// TestSpansAndMarks: connections, crashes (with the crash point and lost
// writes), partitions and the liveness phase become spans; app events and
// faults become marks.
func TestSpansAndMarks(t *testing.T) {
	h := hist(
		model.Event{Kind: model.ConnOpened, Node: "s1", Peer: "broker"},
		model.Event{Kind: model.Partition, Node: "s1", Peer: "broker"},
		model.Event{Kind: model.Heal, Node: "s1", Peer: "broker"},
		model.Event{Kind: model.Crash, Node: "s1", Point: model.CrashInCallbackPre, Reason: "2 unsynced writes lost"},
		model.Event{Kind: model.Restart, Node: "s1"},
		model.Event{Kind: model.Delivered, Node: "s1", Msg: "m1", QoS: 1},
		model.Event{Kind: model.LivenessStart},
		model.Event{Kind: model.Stuck, Reason: "undelivered s1<-m2"},
	)
	c := build(Run{History: h})
	spans := map[string]span{}
	for _, s := range c.Spans {
		spans[s.Kind] = s
	}
	if s := spans["conn"]; s.I != 0 || s.J != 3 {
		t.Errorf("connection span %+v: want it open from step 0 until the crash at 3", s)
	}
	if s := spans["partition"]; s.I != 1 || s.J != 2 {
		t.Errorf("partition span %+v", s)
	}
	if s := spans["down"]; s.I != 3 || s.J != 4 || !strings.Contains(s.Label, "in the app callback, before its write; 2 unsynced writes lost") {
		t.Errorf("down span %+v", s)
	}
	if s := spans["liveness"]; s.I != 6 || s.J != -1 || s.To != h.Events[7].Time {
		t.Errorf("liveness span %+v", s)
	}
	var kinds []string
	for _, m := range c.Marks {
		kinds = append(kinds, m.Kind)
	}
	if got := strings.Join(kinds, ","); got != "crash,restart,delivered,stuck" {
		t.Errorf("marks %s", got)
	}
}

// TestWriteSelfContained: the page carries its data, style and script,
// fetches nothing, and a hostile message id cannot close the script.
func TestWriteSelfContained(t *testing.T) {
	evil := "</script><img src=x onerror=alert(1)>"
	h := hist(model.Event{Kind: model.Accepted, Node: "p1", Msg: evil, QoS: 1}, model.Event{Kind: model.LivenessStart})
	v := model.NewViolation(model.NoLoss, 0, "s1", "msg "+evil+" lost", 1)
	v.ExplainedBy = "SessionPresent at step 0"
	var b bytes.Buffer
	if err := Write(&b, Run{Title: "t <b>", History: h, Violations: []model.Violation{v}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Count(page, "</script>") != 2 || strings.Contains(page, "<img") {
		t.Errorf("a message id escaped the data block")
	}
	for _, bad := range []string{"http://", "https://", "src=\"", "<link"} {
		if strings.Contains(strings.ReplaceAll(page, "http://www.w3.org/2000/svg", ""), bad) {
			t.Errorf("page refers to something outside itself: %q", bad)
		}
	}
	if !strings.Contains(page, "<title>t &lt;b&gt;</title>") || !strings.Contains(page, `"cited":[{"i":0`) ||
		!strings.Contains(page, `"explained":"SessionPresent at step 0"`) {
		t.Errorf("title not escaped or violation's cited events missing")
	}
}
