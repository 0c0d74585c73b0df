// Package histpkt describes engine packets in the model's vocabulary. It is
// the one translation both worlds use when they record a history: sim (with
// interned strings) and live (with copies), so a simulated and a real run of
// the same traffic record the same model.Packet values.
package histpkt

import (
	"slices"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// Parts is a packet's description in two halves: the scalar fields, ready,
// and what the caller turns into strings its own way (Of copies or interns
// them into a model.Packet; sim keeps string ids in its compact history).
type Parts struct {
	// Scalars is the description without its strings: Topic, Msg, Payload
	// and Filter are empty. Its SubIDs alias the packet's (Of copies them).
	Scalars model.Packet
	// Publish says Topic and Payload are set (a PUBLISH): they alias the
	// packet, which may alias a decoder's buffer.
	Publish bool
	// Will says Topic and Payload are a CONNECT's will message's.
	Will           bool
	Topic, Payload []byte
	// Filter is the filter of a one-filter SUBSCRIBE or UNSUBSCRIBE.
	Filter string
}

// Of describes p for the model. str turns the bytes it keeps (topic,
// payload) into strings — it must copy or intern them, since decoded packets
// alias the decoder's buffer — and msgID names the message a PUBLISH payload
// carries. A nil packet gives the zero Packet.
func Of(p packet.Packet, str, msgID func([]byte) string) model.Packet {
	parts := Split(p)
	m := parts.Scalars
	if parts.Publish || parts.Will {
		m.Topic, m.Payload, m.Msg = str(parts.Topic), str(parts.Payload), msgID(parts.Payload)
	}
	m.Filter = parts.Filter
	m.SubIDs = slices.Clone(m.SubIDs)
	return m
}

// Split describes p for the model, leaving its strings to the caller. A nil
// packet gives the zero Parts.
func Split(p packet.Packet) Parts {
	var r Parts
	if p == nil {
		return r
	}
	m := &r.Scalars
	m.Type = uint8(p.Type())
	switch p := p.(type) {
	case *packet.Publish:
		m.ID, m.QoS, m.Dup, m.Retain = p.PacketID, uint8(p.QoS), p.Dup, p.Retain
		m.Expiry = PublishExpiry(p)
		if p.Props.Present.Has(packet.PropTopicAlias) {
			m.TopicAlias = p.Props.TopicAlias // §3.3.2.3.4; Topic is empty when it names the topic alone
		}
		m.SubIDs = p.Props.SubscriptionIDs // §3.3.2.3.8
		r.Publish, r.Topic, r.Payload = true, p.Topic, p.Payload
	case *packet.Puback:
		m.ID, m.Reason = p.PacketID, uint8(p.Reason)
	case *packet.Pubrec:
		m.ID, m.Reason = p.PacketID, uint8(p.Reason)
	case *packet.Pubrel:
		m.ID, m.Reason = p.PacketID, uint8(p.Reason)
	case *packet.Pubcomp:
		m.ID, m.Reason = p.PacketID, uint8(p.Reason)
	case *packet.Subscribe:
		// §3.8.2.1.2: at most one Subscription Identifier, for every filter.
		m.ID, m.SubIDs = p.PacketID, p.Props.SubscriptionIDs
		if len(p.Subs) == 1 { // the model follows single-filter requests
			s := &p.Subs[0]
			r.Filter, m.QoS, m.Opts = s.Filter, uint8(s.QoS), SubOpts(s)
		}
	case *packet.Suback:
		m.ID = p.PacketID
		if len(p.Reasons) == 1 {
			m.Reason = uint8(p.Reasons[0])
		}
	case *packet.Unsubscribe:
		m.ID = p.PacketID
		if len(p.Filters) == 1 {
			r.Filter = p.Filters[0]
		}
	case *packet.Unsuback:
		m.ID = p.PacketID
		if len(p.Reasons) == 1 {
			m.Reason = uint8(p.Reasons[0])
		}
	case *packet.Connect:
		splitConnect(&r, p)
	case *packet.Connack:
		m.Sessions, m.Reason = p.SessionPresent, uint8(p.Reason)
		if p.Props.Present.Has(packet.PropServerKeepAlive) {
			m.KeepAlive = p.Props.ServerKeepAlive // [MQTT-3.2.2-21]
		}
		if p.Props.Present.Has(packet.PropMaximumPacketSize) {
			m.MaxSize = p.Props.MaximumPacketSize // [MQTT-3.2.2-15]
		}
	case *packet.Disconnect:
		m.Reason = uint8(p.Reason)
		if p.Props.Present.Has(packet.PropSessionExpiry) {
			m.Expiry, m.ExpirySet = p.Props.SessionExpiry, true
		}
	case *packet.Auth:
		m.Reason = uint8(p.Reason)
	}
	return r
}

// SubOpts is a subscription's options besides its QoS as model.Packet.Opts
// keeps them.
func SubOpts(s *packet.Subscription) uint8 {
	o := s.RetainHandling & 3 << 4
	if s.NoLocal {
		o |= model.OptNoLocal
	}
	if s.RetainAsPublished {
		o |= model.OptRetainAsPublished
	}
	return o
}

// PublishExpiry is the Message Expiry Interval of p, 0 when absent.
func PublishExpiry(p *packet.Publish) uint32 {
	if p.Props.Present.Has(packet.PropMessageExpiry) {
		return p.Props.MessageExpiry
	}
	return 0
}

// splitConnect describes a CONNECT: Clean Start, Keep Alive, Session Expiry
// Interval and the will message (its topic and payload are Parts' Topic and
// Payload, Publish stays false).
func splitConnect(r *Parts, p *packet.Connect) {
	m := &r.Scalars
	m.Clean, m.KeepAlive = p.CleanStart, p.KeepAlive
	if p.Props.Present.Has(packet.PropMaximumPacketSize) {
		m.MaxSize = p.Props.MaximumPacketSize
	}
	if p.Props.Present.Has(packet.PropTopicAliasMaximum) {
		m.TopicAlias = p.Props.TopicAliasMaximum // [MQTT-3.1.2-26]
	}
	if p.Props.Present.Has(packet.PropSessionExpiry) {
		m.Expiry = p.Props.SessionExpiry
	}
	if w := p.Will; w != nil {
		m.Will, m.QoS, m.Retain = true, uint8(w.QoS), w.Retain
		r.Will, r.Topic, r.Payload = true, []byte(w.Topic), w.Payload
		if w.Props.Present.Has(packet.PropWillDelay) {
			m.WillDelay = w.Props.WillDelay
		}
	}
}
