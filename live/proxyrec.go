package live

import (
	"fmt"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// record decodes data, the next bytes of direction d of pc, and records its
// complete packets. It returns the decoder to use next: nil once the stream
// failed to decode (the proxy keeps forwarding; the receiver judges it).
func (p *Proxy) record(pc *proxyConn, d Direction, dec *packet.Decoder, data []byte) *packet.Decoder {
	if dec == nil {
		return nil
	}
	dec.Feed(data)
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		pk, err := dec.Next()
		if err != nil {
			return nil
		}
		if pk == nil {
			return dec
		}
		now := time.Now().UnixNano()
		if d == Up {
			p.recordUp(pc, pk, now)
		} else {
			p.recordDown(pc, pk, now)
		}
	}
}

// recordUp records a client->broker packet: the client's Sent, then the
// broker's Received. A connection's first CONNECT names it.
func (p *Proxy) recordUp(pc *proxyConn, pk packet.Packet, now int64) {
	rec := p.opts.Recorder
	if c, ok := pk.(*packet.Connect); ok && pc.clientID == "" {
		p.named(pc, c, now)
	}
	if pc.clientID == "" {
		return // bytes before a CONNECT: nothing to name them by
	}
	m := modelPacket(pk, p.opts.MsgID)
	if pc.observed {
		rec.Add(model.Event{Kind: model.Sent, Time: now, Node: pc.clientID, Peer: model.BrokerNode, Packet: m, ReceiveMax: connectReceiveMax(pk)})
	}
	if s, ok := pk.(*packet.Subscribe); ok {
		pc.subs[s.PacketID] = append([]packet.Subscription(nil), s.Subs...)
	}
	if p.opts.RecordBroker && !pc.hole[Up] && !p.down { // a black hole (or a dead broker) swallows it
		rec.Add(model.Event{Kind: model.Received, Time: now, Node: model.BrokerNode, Peer: pc.clientID, Packet: m})
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

// recordDown records a broker->client packet: the broker's Sent, then the
// client's Received and what it means to the client's application
// (Connected at CONNACK, Subscribed at SUBACK).
func (p *Proxy) recordDown(pc *proxyConn, pk packet.Packet, now int64) {
	if pc.clientID == "" || p.down {
		return
	}
	rec := p.opts.Recorder
	m := modelPacket(pk, p.opts.MsgID)
	if p.opts.RecordBroker {
		rec.Add(model.Event{Kind: model.Sent, Time: now, Node: model.BrokerNode, Peer: pc.clientID, Packet: m})
	}
	if !pc.observed || pc.hole[Down] { // a black hole swallows it
		return
	}
	rec.Add(model.Event{Kind: model.Received, Time: now, Node: pc.clientID, Peer: model.BrokerNode, Packet: m})
	if p.opts.onReceive != nil {
		p.opts.onReceive(pc.clientID, m)
	}
	switch pk := pk.(type) {
	case *packet.Connack:
		p.connected(pc, pk, now)
	case *packet.Suback:
		subs := pc.subs[pk.PacketID]
		delete(pc.subs, pk.PacketID)
		for i, s := range subs {
			if i < len(pk.Reasons) && !pk.Reasons[i].IsError() {
				rec.Add(model.Event{Kind: model.Subscribed, Time: now, Node: pc.clientID, Filter: s.Filter, QoS: uint8(pk.Reasons[i]), Persistent: pc.persistent})
			}
		}
	}
}

// connected records an observed client's Connected event at its CONNACK.
func (p *Proxy) connected(pc *proxyConn, ack *packet.Connack, now int64) {
	if ack.Reason.IsError() {
		return
	}
	var rm uint16
	if ack.Props.Present.Has(packet.PropReceiveMaximum) {
		rm = ack.Props.ReceiveMaximum
	}
	had := p.opts.HadState != nil && !pc.clean && p.opts.HadState(pc.clientID)
	p.opts.Recorder.Add(model.Event{Kind: model.Connected, Time: now, Node: pc.clientID, CleanStart: pc.clean,
		SessionPresent: ack.SessionPresent, HadState: had, Version: uint8(pc.version), ReceiveMax: rm})
}
