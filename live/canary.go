package live

import (
	"net"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// The canaries: deliberate bugs of the broker driver, one per oracle of the
// wire fuzzer (brokerfuzz), each the kind of mistake a broker author makes,
// triggered by what the packets mean, never by a particular case's bytes.
// Canaries names them; BrokerOptions.Canary turns one on.
const (
	// CanaryKeepOpen leaves a connection open after a malformed packet.
	CanaryKeepOpen = "keep-open-on-malformed"
	// CanaryCrash crashes the process on a bad 5.0 PUBLISH property.
	CanaryCrash = "crash-on-publish-property"
	// CanaryHang blocks the event loop on a PUBREL of an unknown id.
	CanaryHang = "hang-on-unknown-pubrel"
	// CanaryAckFirst acknowledges a PUBLISH before checking it.
	CanaryAckFirst = "ack-before-check"
	// CanaryWildcard routes a PUBLISH whose Topic Name holds a wildcard.
	CanaryWildcard = "forward-wildcard-topic"
	// CanaryWillReason closes with a success reason code.
	CanaryWillReason = "disconnect-will-reason"
	// CanaryDropAck loses a PUBACK next to a delivery to its publisher.
	CanaryDropAck = "drop-puback-self-delivery"
	// CanaryLeakFD leaks a descriptor per connection.
	CanaryLeakFD = "leak-fd-per-connection"
)

// Canaries are the deliberate bugs BrokerOptions.Canary names: each makes
// the broker break a rule the wire fuzzer (brokerfuzz) must catch.
var Canaries = map[string]string{
	CanaryKeepOpen: "a connection that sent a malformed packet or a protocol error is left open (unanswered, unread) instead of closed [MQTT-4.8.0-1] [MQTT-4.13.1-1]",
	CanaryCrash: "a 5.0 PUBLISH's properties are first read by a walker that indexes its table of PUBLISH properties without a bound: an identifier a PUBLISH may not carry, " +
		"a Topic Alias of 0 or a Property Length past the packet panics the event loop and the process exits (§4.13: an error closes one connection, nothing else)",
	CanaryHang: "a 5.0 PUBREL whose packet id holds no QoS 2 message blocks the event loop waiting for that message instead of answering PUBCOMP 0x92: " +
		"the broker stops reading and answering every connection, PINGREQ included [MQTT-3.12.4-1]",
	CanaryAckFirst: "a QoS 1 or 2 PUBLISH is acknowledged (PUBACK, PUBREC) as soon as its fixed header and packet id are read, before its Topic Name and properties are checked: " +
		"a PUBLISH the spec says closes the connection is acknowledged first (and a valid one twice) [MQTT-4.8.0-1] [MQTT-4.13.1-1]",
	CanaryWildcard: "a PUBLISH whose Topic Name holds '+' or '#' is not refused: a sanitiser rewrites each wildcard character to '_' and the message is acknowledged " +
		"and routed to the subscribers of that topic [MQTT-3.3.2-2]",
	CanaryWillReason: "a 5.0 connection closed for an error gets DISCONNECT 0x04 (Disconnect with Will Message, a Client's success code, as if to say its will goes out) " +
		"instead of its error's reason code (5.0 §2.4: a refusal's code is 0x80 or more)",
	CanaryDropAck: "a QoS 1 PUBLISH that the broker also delivers back to its publisher (subscribed to the topic) gets no PUBACK: the ack and the delivery " +
		"share the connection's outgoing batch and the ack is overwritten [MQTT-4.3.2-4]",
	CanaryLeakFD: "each accepted connection's descriptor is duplicated (as TCPConn.File does, to set a socket option) and the copy is never closed: " +
		"one descriptor leaks per connection",
}

// canaryFramer splits a connection's inbound bytes into whole packets for
// the canaries that read packets before the engine does (CanaryCrash,
// CanaryAckFirst, CanaryWildcard); the engine then gets whole packets
// only, as a broker that frames before it parses. A fixed header it cannot
// frame (a fifth Remaining Length byte) or a packet over 64 KiB ends the
// framing: from then on the bytes pass through as they come.
type canaryFramer struct {
	buf       []byte
	pass      bool
	version   byte // the CONNECT's protocol level, once framed
	connected bool
}

// canaryFrameMax bounds a packet the framer holds whole.
const canaryFrameMax = 64 << 10

// frames adds data and returns the whole packets it completes (and, once
// passing through, the raw bytes as they come).
func (cf *canaryFramer) frames(data []byte) (pkts [][]byte, raw []byte) {
	if cf.pass {
		return nil, data
	}
	cf.buf = append(cf.buf, data...)
	for len(cf.buf) > 0 {
		n, ok := frameLen(cf.buf)
		if n < 0 || n > canaryFrameMax {
			cf.pass, raw, cf.buf = true, cf.buf, nil
			return pkts, raw
		}
		if !ok {
			break
		}
		pkts = append(pkts, append([]byte(nil), cf.buf[:n]...))
		cf.buf = cf.buf[n:]
	}
	return pkts, nil
}

// frameLen is the length of the packet that starts b (fixed header and
// body) and whether b holds all of it; -1 for a malformed fixed header.
func frameLen(b []byte) (n int, whole bool) {
	rl, mult := 0, 1
	for i := 1; i < len(b); i++ {
		if i > 4 {
			return -1, false
		}
		rl += int(b[i]&0x7f) * mult
		mult *= 128
		if b[i]&0x80 == 0 {
			return 1 + i + rl, len(b) >= 1+i+rl
		}
	}
	return 0, false
}

// connectLevel is a framed CONNECT's Protocol Level (0 if it is too short).
func connectLevel(p []byte) byte {
	body := p[1:]
	for len(body) > 0 && body[0]&0x80 != 0 {
		body = body[1:]
	}
	if len(body) < 3 {
		return 0
	}
	body = body[1:]
	n := int(body[0])<<8 | int(body[1])
	if len(body) < 2+n+1 {
		return 0
	}
	return body[2+n]
}

// publishBody returns a framed PUBLISH's body (after the fixed header) and
// its QoS.
func publishBody(p []byte) (body []byte, qos byte) {
	body = p[1:]
	for len(body) > 0 && body[0]&0x80 != 0 {
		body = body[1:]
	}
	return body[min(1, len(body)):], p[0] >> 1 & 3
}

// canaryPublishProps is CanaryCrash's table of the PUBLISH properties a
// Client may send, by identifier: each returns its value's length. An
// identifier past the table or without an entry is the bug's index out of
// range or nil call.
var canaryPublishProps = [0x27]func(v []byte) int{
	0x01: func([]byte) int { return 1 },            // Payload Format Indicator
	0x02: func([]byte) int { return 4 },            // Message Expiry Interval
	0x03: func(v []byte) int { return 2 + u16(v) }, // Content Type
	0x08: func(v []byte) int { return 2 + u16(v) }, // Response Topic
	0x09: func(v []byte) int { return 2 + u16(v) }, // Correlation Data
	0x23: func(v []byte) int { // Topic Alias: its slot, counted from 1
		var slots [8]string
		_ = slots[(u16(v)-1)%len(slots)]
		return 2
	},
	0x26: func(v []byte) int { // User Property: two strings
		k := 2 + u16(v)
		return k + 2 + u16(v[k:])
	},
}

// u16 reads a two-byte integer (the canaries' bug: without a bound).
func u16(b []byte) int { return int(b[0])<<8 | int(b[1]) }

// walkPublishProps is CanaryCrash's property walker of a framed 5.0
// PUBLISH, with its bug: it trusts every length and identifier it reads.
func walkPublishProps(p []byte) {
	body, qos := publishBody(p)
	rest := body[2+u16(body):]
	if qos > 0 {
		rest = rest[2:]
	}
	n, k := 0, 0
	for mult := 1; ; mult *= 128 {
		n += int(rest[k]&0x7f) * mult
		k++
		if rest[k-1]&0x80 == 0 {
			break
		}
	}
	props := rest[k : k+n]
	for len(props) > 0 {
		props = props[1+canaryPublishProps[props[0]](props[1:]):]
	}
}

// framedCanary reports whether the canary reads packets before the engine.
func framedCanary(name string) bool {
	return name == CanaryCrash || name == CanaryAckFirst || name == CanaryWildcard
}

// canaryPacket applies the framing canaries to one whole packet of bc,
// before the engine reads it; it returns the bytes the engine gets.
func (b *Broker) canaryPacket(bc *brokerConn, p []byte) []byte {
	if packet.Type(p[0]>>4) != packet.PUBLISH || !bc.framer.connected {
		return p
	}
	switch b.opts.Canary {
	case CanaryCrash:
		if bc.framer.version == 5 {
			walkPublishProps(p) // the bug: panics on what it cannot read
		}
	case CanaryAckFirst:
		body, qos := publishBody(p)
		if qos == 1 || qos == 2 {
			if len(body) >= 2 {
				if off := 2 + u16(body); len(body) >= off+2 {
					ack := []byte{0x40, 2, body[off], body[off+1]}
					if qos == 2 {
						ack[0] = 0x50
					}
					_ = bc.c.SetWriteDeadline(time.Now().Add(IOTimeout))
					_, _ = bc.c.Write(ack)
				}
			}
		}
	case CanaryWildcard:
		body, _ := publishBody(p)
		if len(body) >= 2 {
			hdr := len(p) - len(body)
			for i := hdr + 2; i < hdr+2+u16(body) && i < len(p); i++ {
				if p[i] == '+' || p[i] == '#' {
					p[i] = '_'
				}
			}
		}
	}
	return p
}

// canaryReceived hands data to the framing canaries; it returns what the
// engine reads now.
func (b *Broker) canaryReceived(bc *brokerConn, data []byte) []byte {
	if bc.framer == nil {
		bc.framer = &canaryFramer{}
	}
	pkts, raw := bc.framer.frames(data)
	var out []byte
	for _, p := range pkts {
		if cf := bc.framer; packet.Type(p[0]>>4) == packet.CONNECT && !cf.connected {
			cf.connected, cf.version = true, connectLevel(p)
		}
		out = append(out, b.canaryPacket(bc, p)...)
	}
	return append(out, raw...)
}

// canaryActions applies the canaries that change what the engine does with
// one event's actions.
func (b *Broker) canaryActions(acts []engine.Action) []engine.Action {
	if b.opts.Canary != CanaryDropAck {
		return acts
	}
	delivered := map[engine.ConnID]bool{}
	for _, a := range acts {
		if s, ok := a.(engine.Send); ok && s.Packet.Type() == packet.PUBLISH {
			delivered[s.Conn] = true
		}
	}
	out := acts[:0:0]
	for _, a := range acts {
		if s, ok := a.(engine.Send); ok && s.Packet.Type() == packet.PUBACK && delivered[s.Conn] {
			continue // the bug: the delivery took the ack's slot
		}
		out = append(out, a)
	}
	return out
}

// canarySend applies the canaries to one packet the engine sends: it
// returns the packet and bytes to send.
func (b *Broker) canarySend(a engine.Send) engine.Send {
	switch p := a.Packet.(type) {
	case *packet.Disconnect:
		if b.opts.Canary == CanaryWillReason && p.Reason >= 0x80 {
			i := 1 // the Reason Code follows the fixed header
			for i < len(a.Data) && a.Data[i]&0x80 != 0 {
				i++
			}
			if i+1 < len(a.Data) {
				d := *p
				d.Reason = 0x04
				a.Packet, a.Data = &d, append([]byte(nil), a.Data...)
				a.Data[i+1] = 0x04
			}
		}
	case *packet.Pubcomp:
		if b.opts.Canary == CanaryHang && p.Reason == 0x92 {
			<-b.unhang // the bug: waits for a QoS 2 message that never comes
		}
	}
	return a
}

// canaryOpened applies the canaries of an accepted connection.
func (b *Broker) canaryOpened(c net.Conn) {
	if b.opts.Canary != CanaryLeakFD {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		if f, err := tc.File(); err == nil {
			b.leaked = append(b.leaked, f) // the bug: never closed
		}
	}
}
