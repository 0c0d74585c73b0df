package properties

import (
	"bytes"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// The generators below know the v5 property table and the reason-code tables
// independently of the codec, so a codec that refuses a valid packet fails
// RoundTrip.

var (
	// textRunes mixes ASCII, multi-byte UTF-8 and the MQTT-significant '+',
	// '#' and '/' for free-text strings (client ids, properties, ...).
	textRunes = []rune("abcxyzAZ09 -_.$+#/é€世😀\u0001\u007f\uFEFF")
	// levelRunes are the characters of topic levels: no wildcard, no '/'.
	levelRunes = []rune("abcxyzAZ09 -_.$é€世😀")
)

func text(maxLen int) *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom(textRunes), 0, maxLen, -1)
}

func level() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom(levelRunes), 0, 6, -1)
}

func data(maxLen int) *rapid.Generator[[]byte] {
	return rapid.SliceOfN(rapid.Byte(), 0, maxLen)
}

// TopicNameGen generates valid Topic Names: one or more levels, no wildcards,
// at least one character.
func TopicNameGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		levels := rapid.SliceOfN(level(), 1, 4).Draw(t, "levels")
		name := strings.Join(levels, "/")
		if name == "" {
			name = "t"
		}
		return name
	})
}

// TopicFilterGen generates valid Topic Filters of version v: levels, '+'
// levels, an optional final '#', and in v5 optionally a $share/ prefix. It
// reports whether the filter is shared.
func TopicFilterGen(v packet.Version) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(1, 4).Draw(t, "levels")
		parts := make([]string, n)
		for i := range parts {
			parts[i] = rapid.OneOf(level(), rapid.Just("+")).Draw(t, "level")
		}
		if rapid.Bool().Draw(t, "hash") {
			parts[n-1] = "#"
		}
		f := strings.Join(parts, "/")
		if f == "" {
			f = "f"
		}
		if v == packet.V5 && rapid.IntRange(0, 4).Draw(t, "share") == 0 {
			name := rapid.StringOfN(rapid.RuneFrom([]rune("gG1é")), 1, 4, -1).Draw(t, "shareName")
			f = "$share/" + name + "/" + f
		}
		return f
	})
}

// propSpec is where properties appear and which ones may.
type propSpec struct {
	ids     []packet.PropID
	subIDs  int // maximum number of Subscription Identifiers
	connect bool
}

var (
	specConnect = propSpec{ids: []packet.PropID{packet.PropSessionExpiry, packet.PropAuthMethod, packet.PropAuthData,
		packet.PropRequestProblemInfo, packet.PropRequestResponseInfo, packet.PropReceiveMaximum,
		packet.PropTopicAliasMaximum, packet.PropUserProperty, packet.PropMaximumPacketSize}}
	specConnack = propSpec{ids: []packet.PropID{packet.PropSessionExpiry, packet.PropAssignedClientID,
		packet.PropServerKeepAlive, packet.PropAuthMethod, packet.PropAuthData, packet.PropResponseInfo,
		packet.PropServerReference, packet.PropReasonString, packet.PropReceiveMaximum, packet.PropTopicAliasMaximum,
		packet.PropMaximumQoS, packet.PropRetainAvailable, packet.PropUserProperty, packet.PropMaximumPacketSize,
		packet.PropWildcardSubAvailable, packet.PropSubIDAvailable, packet.PropSharedSubAvailable}}
	specPublish = propSpec{ids: []packet.PropID{packet.PropPayloadFormat, packet.PropMessageExpiry,
		packet.PropContentType, packet.PropResponseTopic, packet.PropCorrelationData, packet.PropSubscriptionID,
		packet.PropTopicAlias, packet.PropUserProperty}, subIDs: 3}
	specWill = propSpec{ids: []packet.PropID{packet.PropPayloadFormat, packet.PropMessageExpiry,
		packet.PropContentType, packet.PropResponseTopic, packet.PropCorrelationData, packet.PropWillDelay,
		packet.PropUserProperty}}
	specAck        = propSpec{ids: []packet.PropID{packet.PropReasonString, packet.PropUserProperty}}
	specSubscribe  = propSpec{ids: []packet.PropID{packet.PropSubscriptionID, packet.PropUserProperty}, subIDs: 1}
	specUnsub      = propSpec{ids: []packet.PropID{packet.PropUserProperty}}
	specDisconnect = propSpec{ids: []packet.PropID{packet.PropSessionExpiry, packet.PropServerReference,
		packet.PropReasonString, packet.PropUserProperty}}
	specAuth = propSpec{ids: []packet.PropID{packet.PropAuthMethod, packet.PropAuthData, packet.PropReasonString,
		packet.PropUserProperty}}
)

// propsGen generates valid v5 properties for spec (the zero value in 3.1.1).
func propsGen(t *rapid.T, v packet.Version, spec propSpec, label string) packet.Properties {
	var p packet.Properties
	if v != packet.V5 || !rapid.Bool().Draw(t, label+"?") {
		return p
	}
	for _, id := range spec.ids {
		if !rapid.Bool().Draw(t, label+" "+id.String()) {
			continue
		}
		drawProp(t, &p, id, spec)
	}
	if p.Present.Has(packet.PropAuthData) && !p.Present.Has(packet.PropAuthMethod) {
		drawProp(t, &p, packet.PropAuthMethod, spec) // Authentication Data needs a Method
	}
	return p
}

// drawProp draws a valid value for property id into p.
func drawProp(t *rapid.T, p *packet.Properties, id packet.PropID, spec propSpec) {
	bit := rapid.Uint8Range(0, 1)
	u16 := rapid.Uint16Range(1, 65535)
	switch id {
	case packet.PropSubscriptionID:
		p.SubscriptionIDs = rapid.SliceOfN(rapid.Uint32Range(1, 268_435_455), 1, spec.subIDs).Draw(t, "subIDs")
		return
	case packet.PropUserProperty:
		p.User = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) packet.UserProperty {
			return packet.UserProperty{Key: text(6).Draw(t, "key"), Value: text(6).Draw(t, "value")}
		}), 1, 3).Draw(t, "user")
		return
	case packet.PropPayloadFormat:
		p.PayloadFormat = bit.Draw(t, "pfi")
	case packet.PropMessageExpiry:
		p.MessageExpiry = rapid.Uint32().Draw(t, "expiry")
	case packet.PropContentType:
		p.ContentType = text(8).Draw(t, "contentType")
	case packet.PropResponseTopic:
		p.ResponseTopic = TopicNameGen().Draw(t, "responseTopic")
	case packet.PropCorrelationData:
		p.CorrelationData = data(8).Draw(t, "correlation")
	case packet.PropSessionExpiry:
		p.SessionExpiry = rapid.Uint32().Draw(t, "sessionExpiry")
	case packet.PropAssignedClientID:
		p.AssignedClientID = text(8).Draw(t, "assigned")
	case packet.PropServerKeepAlive:
		p.ServerKeepAlive = rapid.Uint16().Draw(t, "serverKeepAlive")
	case packet.PropAuthMethod:
		p.AuthMethod = text(8).Draw(t, "authMethod")
	case packet.PropAuthData:
		p.AuthData = data(8).Draw(t, "authData")
	case packet.PropRequestProblemInfo:
		p.RequestProblemInfo = bit.Draw(t, "rpi")
	case packet.PropWillDelay:
		p.WillDelay = rapid.Uint32().Draw(t, "willDelay")
	case packet.PropRequestResponseInfo:
		p.RequestResponseInfo = bit.Draw(t, "rri")
	case packet.PropResponseInfo:
		p.ResponseInfo = text(8).Draw(t, "responseInfo")
	case packet.PropServerReference:
		p.ServerReference = text(8).Draw(t, "serverRef")
	case packet.PropReasonString:
		p.ReasonString = text(8).Draw(t, "reasonString")
	case packet.PropReceiveMaximum:
		p.ReceiveMaximum = u16.Draw(t, "receiveMax")
	case packet.PropTopicAliasMaximum:
		p.TopicAliasMaximum = rapid.Uint16().Draw(t, "aliasMax")
	case packet.PropTopicAlias:
		p.TopicAlias = u16.Draw(t, "alias")
	case packet.PropMaximumQoS:
		p.MaximumQoS = bit.Draw(t, "maxQoS")
	case packet.PropRetainAvailable:
		p.RetainAvailable = bit.Draw(t, "retainAvail")
	case packet.PropMaximumPacketSize:
		p.MaximumPacketSize = rapid.Uint32Min(1).Draw(t, "maxPacket")
	case packet.PropWildcardSubAvailable:
		p.WildcardSubAvail = bit.Draw(t, "wildcardAvail")
	case packet.PropSubIDAvailable:
		p.SubIDAvailable = bit.Draw(t, "subIDAvail")
	case packet.PropSharedSubAvailable:
		p.SharedSubAvailable = bit.Draw(t, "sharedAvail")
	}
	p.Present = p.Present.With(id)
}

// The v5 reason codes each packet allows.
var (
	connackReasons = []packet.ReasonCode{0x00, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
		0x8A, 0x8C, 0x90, 0x95, 0x97, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9F}
	pubackReasons     = []packet.ReasonCode{0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99}
	pubrelReasons     = []packet.ReasonCode{0x00, 0x92}
	subackReasons     = []packet.ReasonCode{0x00, 0x01, 0x02, 0x80, 0x83, 0x87, 0x8F, 0x91, 0x97, 0x9E, 0xA1, 0xA2}
	unsubackReasons   = []packet.ReasonCode{0x00, 0x11, 0x80, 0x83, 0x87, 0x8F, 0x91}
	disconnectReasons = []packet.ReasonCode{0x00, 0x04, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8D, 0x8E,
		0x8F, 0x90, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2}
	v311ConnackCodes = []packet.ReasonCode{0, 1, 2, 3, 4, 5}
	v311SubackCodes  = []packet.ReasonCode{0, 1, 2, 0x80}
)

// PacketGen generates valid packets of version v, of every type the version
// has. Each one must encode, and decode back to an Equal value.
func PacketGen(v packet.Version) *rapid.Generator[packet.Packet] {
	types := []packet.Type{packet.CONNECT, packet.CONNACK, packet.PUBLISH, packet.PUBACK, packet.PUBREC,
		packet.PUBREL, packet.PUBCOMP, packet.SUBSCRIBE, packet.SUBACK, packet.UNSUBSCRIBE, packet.UNSUBACK,
		packet.PINGREQ, packet.PINGRESP, packet.DISCONNECT}
	if v == packet.V5 {
		types = append(types, packet.AUTH)
	}
	return rapid.Custom(func(t *rapid.T) packet.Packet {
		return drawPacket(t, v, rapid.SampledFrom(types).Draw(t, "type"))
	})
}

// reason draws from the v5 table, or returns 0 in 3.1.1.
func reason(t *rapid.T, v packet.Version, codes []packet.ReasonCode) packet.ReasonCode {
	if v != packet.V5 {
		return 0
	}
	return rapid.SampledFrom(codes).Draw(t, "reason")
}

func packetID(t *rapid.T) uint16 { return rapid.Uint16Min(1).Draw(t, "packetID") }

// drawPacket draws one valid packet of type typ.
func drawPacket(t *rapid.T, v packet.Version, typ packet.Type) packet.Packet {
	switch typ {
	case packet.CONNECT:
		return drawConnect(t, v)
	case packet.CONNACK:
		c := &packet.Connack{Props: propsGen(t, v, specConnack, "props")}
		if v == packet.V5 {
			c.Reason = reason(t, v, connackReasons)
		} else {
			c.Reason = rapid.SampledFrom(v311ConnackCodes).Draw(t, "code")
		}
		c.SessionPresent = c.Reason == 0 && rapid.Bool().Draw(t, "sp")
		return c
	case packet.PUBLISH:
		return drawPublish(t, v)
	case packet.PUBACK:
		return &packet.Puback{PacketID: packetID(t), Reason: reason(t, v, pubackReasons), Props: propsGen(t, v, specAck, "props")}
	case packet.PUBREC:
		return &packet.Pubrec{PacketID: packetID(t), Reason: reason(t, v, pubackReasons), Props: propsGen(t, v, specAck, "props")}
	case packet.PUBREL:
		return &packet.Pubrel{PacketID: packetID(t), Reason: reason(t, v, pubrelReasons), Props: propsGen(t, v, specAck, "props")}
	case packet.PUBCOMP:
		return &packet.Pubcomp{PacketID: packetID(t), Reason: reason(t, v, pubrelReasons), Props: propsGen(t, v, specAck, "props")}
	case packet.SUBSCRIBE:
		return drawSubscribe(t, v)
	case packet.SUBACK:
		codes := subackReasons
		if v != packet.V5 {
			codes = v311SubackCodes
		}
		return &packet.Suback{PacketID: packetID(t), Props: propsGen(t, v, specAck, "props"),
			Reasons: rapid.SliceOfN(rapid.SampledFrom(codes), 1, 4).Draw(t, "reasons")}
	case packet.UNSUBSCRIBE:
		return &packet.Unsubscribe{PacketID: packetID(t), Props: propsGen(t, v, specUnsub, "props"),
			Filters: rapid.SliceOfN(TopicFilterGen(v), 1, 3).Draw(t, "filters")}
	case packet.UNSUBACK:
		u := &packet.Unsuback{PacketID: packetID(t), Props: propsGen(t, v, specAck, "props")}
		if v == packet.V5 {
			u.Reasons = rapid.SliceOfN(rapid.SampledFrom(unsubackReasons), 1, 4).Draw(t, "reasons")
		}
		return u
	case packet.PINGREQ:
		return &packet.Pingreq{}
	case packet.PINGRESP:
		return &packet.Pingresp{}
	case packet.DISCONNECT:
		return &packet.Disconnect{Reason: reason(t, v, disconnectReasons), Props: propsGen(t, v, specDisconnect, "props")}
	default:
		return drawAuth(t)
	}
}

func drawConnect(t *rapid.T, v packet.Version) *packet.Connect {
	c := &packet.Connect{
		Version:    v,
		ClientID:   text(12).Draw(t, "clientID"),
		CleanStart: rapid.Bool().Draw(t, "clean"),
		KeepAlive:  rapid.Uint16().Draw(t, "keepAlive"),
		Props:      propsGen(t, v, specConnect, "props"),
	}
	if rapid.Bool().Draw(t, "will") {
		c.Will = &packet.Will{
			QoS:     packet.QoS(rapid.IntRange(0, 2).Draw(t, "willQoS")),
			Retain:  rapid.Bool().Draw(t, "willRetain"),
			Topic:   TopicNameGen().Draw(t, "willTopic"),
			Payload: data(16).Draw(t, "willPayload"),
			Props:   propsGen(t, v, specWill, "willProps"),
		}
	}
	if c.HasUsername = rapid.Bool().Draw(t, "hasUser"); c.HasUsername {
		c.Username = text(8).Draw(t, "user")
	}
	if v == packet.V5 || c.HasUsername { // [MQTT-3.1.2-22] 3.1.1: no password without user name
		if c.HasPassword = rapid.Bool().Draw(t, "hasPassword"); c.HasPassword {
			c.Password = data(8).Draw(t, "password")
		}
	}
	return c
}

func drawPublish(t *rapid.T, v packet.Version) *packet.Publish {
	p := &packet.Publish{
		QoS:     packet.QoS(rapid.IntRange(0, 2).Draw(t, "qos")),
		Retain:  rapid.Bool().Draw(t, "retain"),
		Props:   propsGen(t, v, specPublish, "props"),
		Payload: data(32).Draw(t, "payload"),
	}
	if p.QoS > 0 {
		p.Dup = rapid.Bool().Draw(t, "dup")
		p.PacketID = packetID(t)
	}
	if p.Props.Present.Has(packet.PropTopicAlias) && rapid.Bool().Draw(t, "emptyTopic") {
		p.Topic = nil // the alias stands for the topic
	} else {
		p.Topic = []byte(TopicNameGen().Draw(t, "topic"))
	}
	return p
}

func drawSubscribe(t *rapid.T, v packet.Version) *packet.Subscribe {
	s := &packet.Subscribe{PacketID: packetID(t), Props: propsGen(t, v, specSubscribe, "props")}
	n := rapid.IntRange(1, 3).Draw(t, "subs")
	for range n {
		sub := packet.Subscription{
			Filter: TopicFilterGen(v).Draw(t, "filter"),
			QoS:    packet.QoS(rapid.IntRange(0, 2).Draw(t, "subQoS")),
		}
		if v == packet.V5 {
			// [MQTT-3.8.3-4] no No Local on a shared subscription.
			sub.NoLocal = !strings.HasPrefix(sub.Filter, "$share/") && rapid.Bool().Draw(t, "noLocal")
			sub.RetainAsPublished = rapid.Bool().Draw(t, "rap")
			sub.RetainHandling = rapid.ByteRange(0, 2).Draw(t, "rh")
		}
		s.Subs = append(s.Subs, sub)
	}
	return s
}

func drawAuth(t *rapid.T) *packet.Auth {
	if rapid.IntRange(0, 3).Draw(t, "shortAuth") == 0 {
		return &packet.Auth{} // Success, no properties: Remaining Length 0
	}
	a := &packet.Auth{Reason: rapid.SampledFrom([]packet.ReasonCode{0x00, 0x18, 0x19}).Draw(t, "reason")}
	a.Props = propsGen(t, packet.V5, specAuth, "props")
	if !a.Props.Present.Has(packet.PropAuthMethod) { // 5.0 §3.15.2.2.2: AUTH carries the method
		drawProp(t, &a.Props, packet.PropAuthMethod, specAuth)
	}
	return a
}

// RoundTrip is the codec's round-trip property: any valid packet of either
// version encodes without error, decodes back to an Equal value using all
// its bytes (one-shot and streamed in random chunks), and re-encodes to the
// same bytes.
func RoundTrip(t *rapid.T) {
	v := rapid.SampledFrom([]packet.Version{packet.V311, packet.V5}).Draw(t, "version")
	p := PacketGen(v).Draw(t, "packet")
	prefix := data(4).Draw(t, "prefix")
	chunk := func(n int) int { return rapid.IntRange(1, n).Draw(t, "chunk") }
	if err := roundTrip(v, p, prefix, chunk, nil); err != nil {
		t.Fatal(err)
	}
}

// roundTrip checks one packet. corrupt, when set, alters the wire bytes
// before decoding: the canary test uses it to prove the check catches a codec
// that changes what it carries.
func roundTrip(v packet.Version, p packet.Packet, prefix []byte, chunk func(int) int, corrupt func([]byte)) error {
	buf, err := packet.Append(append([]byte(nil), prefix...), v, p)
	if err != nil {
		return fmt.Errorf("encode %#v: %w", p, err)
	}
	if !bytes.Equal(buf[:len(prefix)], prefix) {
		return fmt.Errorf("Append overwrote the prefix")
	}
	wire := buf[len(prefix):]
	if corrupt != nil {
		corrupt(wire)
	}
	q, n, err := packet.Decode(v, wire, 0)
	if err != nil {
		return fmt.Errorf("decode % x: %w", wire, err)
	}
	if n != len(wire) {
		return fmt.Errorf("decode used %d of %d bytes", n, len(wire))
	}
	if !packet.Equal(p, q) {
		return fmt.Errorf("round trip changed the packet:\n in: %#v\nout: %#v", p, q)
	}
	again, err := packet.Append(nil, v, q)
	if err != nil || !bytes.Equal(again, wire) {
		return fmt.Errorf("re-encode differs: % x vs % x (%v)", again, wire, err)
	}
	streamed, err := streamDecode(v, wire, chunk)
	if err != nil {
		return err
	}
	if !packet.Equal(p, streamed) {
		return fmt.Errorf("streamed decode differs:\n in: %#v\nout: %#v", p, streamed)
	}
	return nil
}

// streamDecode feeds wire to a Decoder in chunks and returns the one packet
// it yields. A CONNECT is decoded with an unknown version, which it sets.
func streamDecode(v packet.Version, wire []byte, chunk func(int) int) (packet.Packet, error) {
	dv := v
	if packet.Type(wire[0]>>4) == packet.CONNECT {
		dv = 0
	}
	d := packet.NewDecoder(dv, 0)
	var got packet.Packet
	for rest := wire; len(rest) > 0; {
		k := chunk(len(rest))
		d.Feed(rest[:k])
		rest = rest[k:]
		p, err := d.Next()
		if err != nil {
			return nil, fmt.Errorf("stream decode: %w", err)
		}
		if p != nil {
			if got != nil || len(rest) > 0 {
				return nil, fmt.Errorf("stream decoder returned a packet before the end")
			}
			got = p
		}
	}
	if got == nil {
		return nil, fmt.Errorf("stream decoder returned nothing")
	}
	if d.Version() != v {
		return nil, fmt.Errorf("decoder version %v, want %v", d.Version(), v)
	}
	return got, nil
}
