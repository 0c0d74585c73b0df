package live

import (
	"fmt"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// arrival is what the receiver's side of the history gains when a chunk's
// bytes are written to it: its Received events, and for an observed client
// the Connected and Subscribed events its CONNACK and SUBACK mean.
type arrival struct {
	events []model.Event
	pubs   []model.Packet // PUBLISHes an observed client received (onReceive)
}

// record decodes data, the next bytes of direction d of pc, records the
// sender's side of its complete packets at once (Sent; a CONNECT's
// ConnOpened) and returns the receiver's side, to be recorded unless a
// black hole swallows the bytes. It also returns the decoder to use next: nil
// once the stream failed to decode (the proxy keeps forwarding; the
// receiver judges it).
func (p *Proxy) record(pc *proxyConn, d Direction, dec *packet.Decoder, data []byte) (*packet.Decoder, arrival) {
	var a arrival
	if dec == nil {
		return nil, a
	}
	dec.Feed(data)
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		pk, err := dec.Next()
		if err != nil {
			return nil, a
		}
		if pk == nil {
			return dec, a
		}
		now := time.Now().UnixNano()
		if d == Up {
			p.recordUp(pc, pk, dec.LastSize(), now, &a)
		} else {
			p.recordDown(pc, pk, dec.LastSize(), now, &a)
		}
	}
}

// arrived records the receiver's side of a chunk about to be written to it
// on direction d, and reports whether to write it: false, recording
// nothing, when the direction was black-holed or the broker marked down
// since the chunk was read. The check and the recording are one step
// under the proxy's lock, so an arrival is recorded before a broker's
// Crash (SetBrokerDown comes first) or not at all: a chunk decoded before
// the kill and recorded after the Crash would show a dead broker
// receiving it (mosquitto run at 69d5d62: a PUBCOMP decoded 7 ms before
// the kill, recorded 13 events after its Crash, read as acknowledged
// with no crash since).
func (p *Proxy) arrived(pc *proxyConn, d Direction, a arrival) bool {
	p.mu.Lock()
	if pc.hole[d] || p.down || pc.closing {
		p.mu.Unlock()
		return false
	}
	for _, e := range a.events {
		p.opts.Recorder.Add(e)
	}
	p.mu.Unlock()
	if p.opts.onReceive != nil {
		for _, m := range a.pubs {
			p.opts.onReceive(pc.clientID, m)
		}
	}
	return true
}

// recordUp records a client->broker packet of size bytes: the client's
// Sent now, the broker's Received in the arrival. A connection's first CONNECT names it.
func (p *Proxy) recordUp(pc *proxyConn, pk packet.Packet, size int, now int64, a *arrival) {
	if c, ok := pk.(*packet.Connect); ok && pc.clientID == "" {
		p.named(pc, c, now)
	}
	if pc.clientID == "" {
		return // bytes before a CONNECT: nothing to name them by
	}
	m := sized(modelPacket(pk, p.opts.MsgID), size)
	if pc.observed {
		p.opts.Recorder.Add(model.Event{Kind: model.Sent, Time: now, Node: pc.clientID, Peer: model.BrokerNode, Packet: m, ReceiveMax: connectReceiveMax(pk)})
	}
	if s, ok := pk.(*packet.Subscribe); ok {
		pc.subs[s.PacketID] = append([]packet.Subscription(nil), s.Subs...)
	}
	if p.opts.RecordBroker {
		a.events = append(a.events, model.Event{Kind: model.Received, Time: now, Node: model.BrokerNode, Peer: pc.clientID, Packet: m})
	}
}

// named records the opening of pc once its CONNECT names the client.
func (p *Proxy) named(pc *proxyConn, c *packet.Connect, now int64) {
	pc.clientID, pc.version, pc.clean = c.ClientID, c.Version, c.CleanStart
	if pc.clientID == "" { // two anonymous clients must stay apart
		pc.clientID = fmt.Sprintf("anonymous-%d", pc.id)
	}
	pc.persistent = !c.CleanStart
	if c.Version == packet.V5 {
		pc.persistent = c.Props.Present.Has(packet.PropSessionExpiry) && c.Props.SessionExpiry > 0
	}
	pc.observed = p.opts.Observe != nil && p.opts.Observe(c.ClientID)
	if pc.observed {
		p.opts.Recorder.Add(model.Event{Kind: model.ConnOpened, Time: now, Node: pc.clientID, Peer: model.BrokerNode})
	}
	if p.opts.RecordBroker {
		p.opts.Recorder.Add(model.Event{Kind: model.ConnOpened, Time: now, Node: model.BrokerNode, Peer: pc.clientID})
	}
}

// recordDown records a broker->client packet of size bytes: the broker's Sent now; the
// client's Received, and what it means to the client's application
// (Connected at CONNACK, Subscribed at SUBACK), in the arrival.
func (p *Proxy) recordDown(pc *proxyConn, pk packet.Packet, size int, now int64, a *arrival) {
	if pc.clientID == "" || p.down {
		return
	}
	m := sized(modelPacket(pk, p.opts.MsgID), size)
	if p.opts.RecordBroker {
		p.opts.Recorder.Add(model.Event{Kind: model.Sent, Time: now, Node: model.BrokerNode, Peer: pc.clientID, Packet: m})
	}
	if !pc.observed {
		return
	}
	a.events = append(a.events, model.Event{Kind: model.Received, Time: now, Node: pc.clientID, Peer: model.BrokerNode, Packet: m})
	if m.Type == model.PUBLISH {
		a.pubs = append(a.pubs, m)
	}
	switch pk := pk.(type) {
	case *packet.Connack:
		if e, ok := p.connected(pc, pk, now); ok {
			a.events = append(a.events, e)
		}
	case *packet.Suback:
		subs := pc.subs[pk.PacketID]
		delete(pc.subs, pk.PacketID)
		for i, s := range subs {
			if i < len(pk.Reasons) && !pk.Reasons[i].IsError() {
				a.events = append(a.events, model.Event{Kind: model.Subscribed, Time: now, Node: pc.clientID, Filter: s.Filter, QoS: uint8(pk.Reasons[i]), Persistent: pc.persistent})
			}
		}
	}
}

// connected is an observed client's Connected event at its CONNACK.
func (p *Proxy) connected(pc *proxyConn, ack *packet.Connack, now int64) (model.Event, bool) {
	if ack.Reason.IsError() {
		return model.Event{}, false
	}
	var rm uint16
	if ack.Props.Present.Has(packet.PropReceiveMaximum) {
		rm = ack.Props.ReceiveMaximum
	}
	had := p.opts.HadState != nil && !pc.clean && p.opts.HadState(pc.clientID)
	return model.Event{Kind: model.Connected, Time: now, Node: pc.clientID, CleanStart: pc.clean,
		SessionPresent: ack.SessionPresent, HadState: had, Version: uint8(pc.version), ReceiveMax: rm}, true
}
