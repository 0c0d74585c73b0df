package live

import (
	"runtime"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/model"
)

// TestClientCrashRunsNothingQueued: work the client's loop had queued when
// Crash was called (here a closure standing for a chunk read from the
// socket, a command or a timer, which would record a packet sent or
// received) never runs after the Crash is recorded: the history shows no
// event of a node after its Crash. Before the fix, Crash recorded the
// Crash in one loop step and stopped the loop in another, and queued work
// ran in between ('simrun live -seed 2 -faults client-kill,cut,blackhole
// -duration 3m' at 85dfb19: a publisher's DUP=1 resends recorded after its
// Crash, Retransmit 18). The queue is filled while the loop is held, so
// the order is fixed, not a matter of timing.
func TestClientCrashRunsNothingQueued(t *testing.T) {
	p, err := engine.PresetByName("fixed")
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder()
	c, err := RunClient(ClientOptions{Addr: "127.0.0.1:1", Config: engine.DefaultClientConfig("c1", p.Client), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	gate, held := make(chan struct{}), make(chan struct{})
	c.l.post(func() { close(held); <-gate }) // holds the loop
	<-held
	crashed := make(chan struct{})
	go func() { c.Crash(); close(crashed) }()
	for len(c.l.in) == 0 { // Crash's step is queued behind the held one
		runtime.Gosched()
	}
	// Queued after Crash's step: what a loaded loop still had to do.
	c.l.post(func() {
		rec.Add(model.Event{Kind: model.Sent, Node: "c1", Peer: model.BrokerNode, Packet: model.Packet{Type: model.PUBLISH, ID: 1, QoS: 2, Dup: true, Msg: "m"}})
	})
	close(gate)
	<-crashed
	h := rec.History()
	crash := -1
	for i, e := range h.Events {
		if e.Kind == model.Crash && e.Node == "c1" {
			crash = i
		} else if crash >= 0 && e.Node == "c1" {
			t.Fatalf("event %d (kind %d) of c1 after its Crash at %d", i, e.Kind, crash)
		}
	}
	if crash < 0 {
		t.Fatal("no Crash recorded")
	}
}
