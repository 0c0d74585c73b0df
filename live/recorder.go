package live

import (
	"context"
	"sync"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/internal/histpkt"
	"github.com/mqttlab/mqttlab/model"
)

// Recorder collects a model.History from one or more drivers (a client and
// its rebooted successor, or clients and a broker), in the order the events
// took effect. It is safe for concurrent use.
type Recorder struct {
	discard bool // keep nothing (a long-running server's recorder)
	mu      sync.Mutex
	h       model.History
	changed chan struct{} // closed and replaced on every Add
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{changed: make(chan struct{})} }

// NewDiscardRecorder returns a recorder that keeps no event: a driver that
// serves for days (simrun broker) records into it without growing.
func NewDiscardRecorder() *Recorder { return &Recorder{discard: true, changed: make(chan struct{})} }

// Add appends an event.
func (r *Recorder) Add(e model.Event) {
	if r.discard {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Add(e)
	close(r.changed)
	r.changed = make(chan struct{})
}

// History returns a copy of the history so far.
func (r *Recorder) History() model.History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return model.History{Events: append([]model.Event(nil), r.h.Events...)}
}

// Len returns the number of events so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.h.Events)
}

// Wait blocks until an event at index from or later satisfies ok and returns
// its index, or returns the context's error.
func (r *Recorder) Wait(ctx context.Context, from int, ok func(model.Event) bool) (int, error) {
	seen := from
	for {
		r.mu.Lock()
		for ; seen < len(r.h.Events); seen++ {
			if ok(r.h.Events[seen]) {
				r.mu.Unlock()
				return seen, nil
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return -1, ctx.Err()
		}
	}
}

// MsgIDFunc extracts the model's message id from a PUBLISH payload.
type MsgIDFunc func(payload []byte) string

// PayloadMsgID is the default MsgIDFunc: the whole payload is the id.
func PayloadMsgID(payload []byte) string { return string(payload) }

// modelPacket describes p in the model's vocabulary, copying every byte it
// keeps (decoded packets alias the decoder's buffer).
func modelPacket(p packet.Packet, msgID MsgIDFunc) model.Packet {
	return histpkt.Of(p, func(b []byte) string { return string(b) }, msgID)
}

// sized is m with the encoded size n recorded when it is a PUBLISH
// (model.Packet.Size, what a Maximum Packet Size bounds [MQTT-3.1.2-25]).
func sized(m model.Packet, n int) model.Packet {
	if m.Type == model.PUBLISH {
		m.Size = uint32(n)
	}
	return m
}

// connectReceiveMax is the Receive Maximum property of p when p is a
// CONNECT that carries one, else 0 (absent: 65535): a client's Sent CONNECT
// event records it for the model's SendQuota [MQTT-3.3.4-9].
func connectReceiveMax(p packet.Packet) uint16 {
	if c, ok := p.(*packet.Connect); ok && c.Props.Present.Has(packet.PropReceiveMaximum) {
		return c.Props.ReceiveMaximum
	}
	return 0
}
