package engine

import (
	"github.com/mqttlab/mqttlab/engine/packet"
)

// brokerMsg is an immutable application message shared by every session it
// was routed to. Topic and payload share one buffer (topic, payload); the
// struct is kept small because every queued or inflight copy holds one.
type brokerMsg struct {
	buf   []byte             // the topic, then the payload
	props *packet.Properties // forwarded v5 properties; nil when none
	// expiresAt is when the v5 Message Expiry Interval runs out, set when
	// the message is published (see expires).
	expiresAt Time
	// originSeq is the sequence number of the pending inbound QoS 2 record
	// this message came from (0 when none): it tells, at restart, which
	// sessions already hold their copy.
	originSeq uint64
	// expires says the message has a v5 Message Expiry Interval (interval,
	// seconds).
	interval uint32
	ntopic   uint16 // the topic's length (at most maxTopicLen)
	expires  bool
	// checked says the topic and properties come from a decoded PUBLISH or
	// Will, so they passed the codec's checks: its copies are encoded
	// without repeating them (sendPub). A message restored from a record
	// is not checked.
	checked bool
	// unaging is the MutExpiryUnchanged canary: the message never expires
	// and its copies carry the publisher's interval unchanged.
	unaging bool
}

// maxTopicLen is the longest topic name: a UTF-8 string's length is two
// bytes (§1.5.4), so brokerMsg keeps it in a uint16.
const maxTopicLen = 65535

// topic returns the topic name.
func (m *brokerMsg) topic() []byte { return m.buf[:m.ntopic:m.ntopic] }

// payload returns the payload.
func (m *brokerMsg) payload() []byte { return m.buf[m.ntopic:] }

// forwarded lists the v5 PUBLISH properties the broker passes on unchanged
// [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-20].
const forwarded = packet.PropSet(1<<packet.PropPayloadFormat | 1<<packet.PropContentType |
	1<<packet.PropResponseTopic | 1<<packet.PropCorrelationData)

// newBrokerMsg copies topic, payload and the forwarded properties out of
// the decoder's buffer. Topic and payload are copied side by side into space
// carved from arena (box.go), or into an allocation of their own when arena
// is nil.
func newBrokerMsg(arena *byteArena, topic, payload []byte, props *packet.Properties, v5 bool) brokerMsg {
	var buf []byte
	if arena != nil {
		arena.reserve(min(len(topic)+len(payload), arenaSmall))
		buf = arena.take(append(append(arena.free, topic...), payload...))
	} else {
		buf = make([]byte, len(topic)+len(payload))
		copy(buf, topic)
		copy(buf[len(topic):], payload)
	}
	m := brokerMsg{buf: buf, ntopic: uint16(len(topic))}
	if v5 && props != nil && props.Present.Has(packet.PropMessageExpiry) {
		m.expires, m.interval = true, props.MessageExpiry
	}
	if v5 && props != nil && (props.Present&forwarded != 0 || len(props.User) > 0) {
		p := &packet.Properties{
			Present:         props.Present & forwarded,
			PayloadFormat:   props.PayloadFormat,
			ContentType:     props.ContentType,
			ResponseTopic:   props.ResponseTopic,
			CorrelationData: append([]byte(nil), props.CorrelationData...),
			User:            append([]packet.UserProperty(nil), props.User...),
		}
		m.props = p
	}
	return m
}

// startExpiry starts the message's Message Expiry Interval at now.
func (m *brokerMsg) startExpiry(now Time) {
	if m.expires {
		m.expiresAt = now + Time(int64(m.interval)*Second)
	}
}

// expired reports whether the message's lifetime has passed: a copy whose
// delivery has not started is then deleted [MQTT-3.3.2-5].
func (m *brokerMsg) expired(now Time) bool { return m.expires && !m.unaging && now > m.expiresAt }

// propsAt returns the properties of a forwarded copy: the forwarded ones, and
// the Message Expiry Interval minus the time the message waited
// [MQTT-3.3.2-6].
func (m *brokerMsg) propsAt(now Time) packet.Properties {
	var p packet.Properties
	if m.props != nil {
		p = *m.props
	}
	if m.expires {
		left := max(int64(m.expiresAt-now), 0)
		if m.unaging {
			left = int64(m.interval) * Second
		}
		p.Present = p.Present.With(packet.PropMessageExpiry)
		p.MessageExpiry = uint32((left + Second - 1) / Second)
	}
	return p
}
