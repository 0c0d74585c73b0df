package brokerfuzz

import (
	"errors"
	"strings"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// expect is what the spec requires of a broker that receives the case: the
// codec's verdict on each connection's byte stream, read as a Server reads a
// Client's (engine/packet's strict stream decoder, version unknown until the
// CONNECT), plus the one stateful rule a stream decoder cannot see (a second
// CONNECT). It depends on the case alone, never on a broker.
type expect struct {
	conns map[int]*connExpect
	// sent marks the steps the executor writes: none after a connection's
	// refused packet or its DISCONNECT (nothing after them is judged).
	sent []bool
	// valid holds the markers that a packet the codec accepted carries (a
	// PUBLISH of any QoS, a CONNECT's will) on any connection. A watched
	// copy of such a marker is not evidence that a refused packet was
	// routed: byte damage that shortens a payload lets the next packet's
	// first byte complete it into another step's marker, and a case may
	// send one marker twice.
	valid map[string]bool
}

// connExpect is one connection's verdict.
type connExpect struct {
	version byte
	// refused is the index of the step whose bytes the codec refused (-1:
	// none), with the rule, the v5 reason code, the refused packet's type and
	// (best effort, from its raw bytes) packet id.
	refused int
	rule    string
	reason  packet.ReasonCode
	msg     string
	typ     packet.Type
	id      uint16
	idOK    bool
	marker  string // the refused step's PUBLISH or will marker, if any
	// whole: the refused packet's bytes were all sent (or its fixed header
	// is itself malformed). A broker cannot be held to refuse a packet it
	// has only the start of: it may wait for the rest before reading it.
	whole bool
	// bridge: the refused packet is a CONNECT of protocol level 0x83 or
	// 0x84, the levels mosquitto and brokers after it document for a
	// bridge (the 3.1/3.1.1 level with bit 7 set). [MQTT-3.1.2-2] makes a
	// broker that accepts them non-conforming, but the extension is
	// documented, so the oracles do not judge it.
	bridge bool
	// requests are the valid packets before the refusal that the spec
	// requires an answer to.
	requests []request
	// disconnected: the client sent a valid DISCONNECT, at step discStep.
	disconnected bool
	discStep     int
	// pubs are the valid QoS 0 and 1 PUBLISH packets before the refusal
	// whose marker the watching subscriber of "#" gets once the broker
	// routed them: what the executor awaits before the next step.
	pubs []published
}

// published is a valid PUBLISH of step step carrying marker.
type published struct {
	step   int
	marker string
}

// request is a valid packet that must be answered with a packet of type
// want (and packet id id, where the type has one).
type request struct {
	step int
	want packet.Type
	id   uint16
}

// expectOf judges a case with the codec.
func expectOf(c Case) *expect {
	e := &expect{conns: map[int]*connExpect{}, sent: make([]bool, len(c.Steps)), valid: map[string]bool{}}
	decs := map[int]*packet.Decoder{}
	streams := map[int][]byte{} // each connection's bytes so far
	used := map[int]int{}       // the bytes its decoded packets took
	connected := map[int]bool{}
	for i, st := range c.Steps {
		ce := e.conns[st.Conn]
		if ce == nil {
			ce = &connExpect{version: st.Version, refused: -1}
			e.conns[st.Conn] = ce
			decs[st.Conn] = packet.NewDecoder(0, 0)
		}
		if ce.refused >= 0 || ce.disconnected {
			continue
		}
		e.sent[i] = true
		d := decs[st.Conn]
		d.Feed(st.Data)
		streams[st.Conn] = append(streams[st.Conn], st.Data...)
		for {
			p, err := d.Next()
			if err != nil {
				ce.refuse(i, streams[st.Conn][used[st.Conn]:], err)
				break
			}
			if p == nil {
				break
			}
			if _, ok := p.(*packet.Connect); ok && connected[st.Conn] {
				ce.refuse(i, streams[st.Conn][used[st.Conn]:], &packet.Error{Rule: "MQTT-3.1.0-2", Reason: packet.ProtocolError, Msg: "a second CONNECT on one connection"})
				break
			}
			used[st.Conn] += d.LastSize()
			e.noteValid(p)
			if cp, ok := p.(*packet.Connect); ok {
				connected[st.Conn] = true
				ce.version = byte(cp.Version) // the broker answers in the CONNECT's version, whatever the step meant
			}
			if ce.want(i, p) {
				break // DISCONNECT: nothing after it is sent
			}
		}
	}
	return e
}

// noteValid records the marker that p, a packet the codec accepted, carries.
func (e *expect) noteValid(p packet.Packet) {
	switch p := p.(type) {
	case *packet.Publish:
		if m := markerIn(p.Payload); m != "" {
			e.valid[m] = true
		}
	case *packet.Connect:
		if p.Will != nil {
			if m := markerIn(p.Will.Payload); m != "" {
				e.valid[m] = true
			}
		}
	}
}

// attributable reports whether a watched copy of the refused packet's
// marker could only have come from the refused packet: it has a marker
// and no packet the codec accepted carries the same one.
func (e *expect) attributable(ce *connExpect) bool {
	return ce.marker != "" && !e.valid[ce.marker]
}

// refuse records the codec's refusal at step i of the packet that starts
// data (the connection's bytes from the refused packet on).
func (ce *connExpect) refuse(i int, data []byte, err error) {
	ce.refused = i
	var pe *packet.Error
	if errors.As(err, &pe) {
		ce.rule, ce.reason, ce.msg = pe.Rule, pe.Reason, pe.Msg
	} else {
		ce.rule, ce.reason, ce.msg = "§2", packet.MalformedPacket, err.Error()
	}
	if len(data) > 0 {
		ce.typ = packet.Type(data[0] >> 4)
	}
	ce.whole = wholePacket(data)
	ce.bridge = ce.rule == "MQTT-3.1.2-2" && bridgeLevel(data)
	ce.id, ce.idOK = rawID(data)
	for _, r := range ce.requests { // an id another request uses cannot name this one's answer
		if r.id == ce.id {
			ce.idOK = false
		}
	}
	ce.marker = markerIn(data)
}

// want records the answer p requires; it reports a DISCONNECT.
func (ce *connExpect) want(i int, p packet.Packet) bool {
	add := func(t packet.Type, id uint16) { ce.requests = append(ce.requests, request{step: i, want: t, id: id}) }
	switch p := p.(type) {
	case *packet.Connect:
		add(packet.CONNACK, 0)
	case *packet.Publish:
		switch p.QoS {
		case 1:
			add(packet.PUBACK, p.PacketID)
		case 2:
			add(packet.PUBREC, p.PacketID)
		}
		// A QoS 2 copy may be routed only at the PUBREL; a "$" topic
		// does not match "#" [MQTT-4.7.2-1]; an empty topic is an alias's.
		if m := markerIn(p.Payload); m != "" && p.QoS < 2 && len(p.Topic) > 0 && p.Topic[0] != '$' {
			ce.pubs = append(ce.pubs, published{step: i, marker: m})
		}
	case *packet.Pubrel:
		add(packet.PUBCOMP, p.PacketID)
	case *packet.Subscribe:
		add(packet.SUBACK, p.PacketID)
	case *packet.Unsubscribe:
		add(packet.UNSUBACK, p.PacketID)
	case *packet.Pingreq:
		add(packet.PINGRESP, 0)
	case *packet.Disconnect:
		ce.disconnected, ce.discStep = true, i
		return true
	}
	return false
}

// judged reports whether the oracles judge the broker's handling of the
// refused packet: the codec cites a normative statement, the whole packet
// was sent, and it is not a documented bridge CONNECT.
func (ce *connExpect) judged() bool {
	return ce.refused >= 0 && normative(ce.rule) && ce.whole && !ce.bridge
}

// bridgeLevel reports whether data starts with a CONNECT whose protocol
// level is 0x83 or 0x84 (a bridge's), read from the raw bytes.
func bridgeLevel(data []byte) bool {
	if len(data) < 2 || packet.Type(data[0]>>4) != packet.CONNECT {
		return false
	}
	i := 1
	for i < len(data) && i < 5 && data[i]&0x80 != 0 { // the Remaining Length
		i++
	}
	i++
	if i+2 > len(data) {
		return false
	}
	i += 2 + (int(data[i])<<8 | int(data[i+1])) // the protocol name
	return i < len(data) && (data[i] == 0x83 || data[i] == 0x84)
}

// wholePacket reports whether data holds the whole packet that starts it
// (fixed header and the body its Remaining Length announces), or a fixed
// header that is malformed in itself (four continuation bytes: a fifth
// Remaining Length byte is refused from the header alone).
func wholePacket(data []byte) bool {
	n, mult := 0, 1
	for i := 1; i < len(data) && i <= 4; i++ {
		n += int(data[i]&0x7f) * mult
		mult *= 128
		if data[i]&0x80 == 0 {
			return len(data) >= 1+i+n
		}
	}
	return len(data) >= 5
}

// rawID reads the packet id of the packet that starts data from its raw
// bytes, as the generator wrote it (no validation: the packet may be
// malformed). ok is false where the type has no id or the bytes are short.
func rawID(data []byte) (id uint16, ok bool) {
	if len(data) < 2 {
		return 0, false
	}
	body := data[1:]
	for len(body) > 0 && body[0]&0x80 != 0 { // skip the Remaining Length
		body = body[1:]
	}
	if len(body) == 0 {
		return 0, false
	}
	body = body[1:]
	switch packet.Type(data[0] >> 4) {
	case packet.PUBLISH:
		if data[0]&0x06 == 0 || len(body) < 2 {
			return 0, false
		}
		n := int(body[0])<<8 | int(body[1])
		if len(body) < 2+n+2 {
			return 0, false
		}
		return uint16(body[2+n])<<8 | uint16(body[3+n]), true
	case packet.PUBACK, packet.PUBREC, packet.PUBREL, packet.PUBCOMP, packet.SUBSCRIBE, packet.UNSUBSCRIBE:
		if len(body) < 2 {
			return 0, false
		}
		return uint16(body[0])<<8 | uint16(body[1]), true
	}
	return 0, false
}

// markerIn returns the first marker in data ("" if none).
func markerIn(data []byte) string {
	s := string(data)
	i := strings.Index(s, markerPrefix)
	if i < 0 {
		return ""
	}
	j := i + len(markerPrefix)
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'f' || s[j] == '-') {
		j++
	}
	return s[i:j]
}

// closeRule is the statement that a Server closes the connection on a
// packet it refuses, in the numbering of version v.
func closeRule(v byte) string {
	if v == 5 {
		return "MQTT-4.13.1-1"
	}
	return "MQTT-4.8.0-1"
}

// answerRule is the statement that requires answering a request with want.
func answerRule(v byte, want packet.Type) string {
	v5 := v == 5
	switch want {
	case packet.PUBACK:
		if v5 {
			return "MQTT-4.3.2-4"
		}
		return "MQTT-4.3.2-2"
	case packet.PUBREC:
		if v5 {
			return "MQTT-4.3.3-8"
		}
		return "MQTT-4.3.3-2"
	case packet.PUBCOMP:
		if v5 {
			return "MQTT-4.3.3-11"
		}
		return "MQTT-4.3.3-2"
	case packet.SUBACK:
		return "MQTT-3.8.4-1"
	case packet.UNSUBACK:
		return "MQTT-3.10.4-4"
	case packet.PINGRESP:
		return "MQTT-3.12.4-1"
	}
	return "§3.1.4"
}
