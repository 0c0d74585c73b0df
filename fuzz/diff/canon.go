package diff

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	paho "github.com/eclipse/paho.golang/packets"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Ours decodes the first packet of b as MQTT 5.0 with engine/packet and
// returns its canonical form and its length.
func Ours(b []byte) (canon string, n int, p packet.Packet, err error) {
	p, n, err = packet.Decode(packet.V5, b, 0)
	if err != nil {
		return "", 0, nil, err
	}
	return CanonOurs(p), n, p, nil
}

// Peer decodes the first packet of b with paho.golang's packets.ReadPacket.
// A panic of the peer's decoder is returned as an error wrapping ErrPeerPanic.
func Peer(b []byte) (canon string, cp *paho.ControlPacket, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPeerPanic, r)
		}
	}()
	cp, err = paho.ReadPacket(bytes.NewReader(b))
	if err != nil {
		return "", nil, err
	}
	return CanonPeer(cp), cp, nil
}

// ErrPeerPanic marks a panic of the peer's codec.
var ErrPeerPanic = errors.New("diff: the peer codec panicked")

// PeerEncode re-encodes a packet the peer decoded, with the peer's encoder.
func PeerEncode(cp *paho.ControlPacket) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPeerPanic, r)
		}
	}()
	var buf bytes.Buffer
	if _, err := cp.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// canon accumulates "key=value" fields separated by spaces.
type canon struct{ strings.Builder }

func (c *canon) f(key string, v any) {
	if c.Len() > 0 {
		c.WriteByte(' ')
	}
	c.WriteString(key)
	c.WriteByte('=')
	switch x := v.(type) {
	case string:
		c.WriteString(strconv.Quote(x))
	case []byte:
		c.WriteString(strconv.Quote(string(x)))
	default:
		fmt.Fprint(c, x)
	}
}

// CanonOurs renders a packet decoded by engine/packet.
func CanonOurs(p packet.Packet) string {
	var c canon
	c.f("type", int(p.Type()))
	switch p := p.(type) {
	case *packet.Connect:
		c.f("version", int(p.Version))
		c.f("clean", p.CleanStart)
		c.f("keepalive", p.KeepAlive)
		c.f("id", p.ClientID)
		if p.Will != nil {
			c.f("will", true)
			c.f("willqos", int(p.Will.QoS))
			c.f("willretain", p.Will.Retain)
			c.f("willtopic", p.Will.Topic)
			c.f("willpayload", p.Will.Payload)
			ourProps(&c, "will.", &p.Will.Props)
		}
		if p.HasUsername {
			c.f("username", p.Username)
		}
		if p.HasPassword {
			c.f("password", p.Password)
		}
		ourProps(&c, "", &p.Props)
	case *packet.Connack:
		c.f("sp", p.SessionPresent)
		c.f("reason", int(p.Reason))
		ourProps(&c, "", &p.Props)
	case *packet.Publish:
		c.f("dup", p.Dup)
		c.f("qos", int(p.QoS))
		c.f("retain", p.Retain)
		c.f("pid", p.PacketID)
		c.f("topic", p.Topic)
		c.f("payload", p.Payload)
		ourProps(&c, "", &p.Props)
	case *packet.Puback:
		ourAck(&c, p.PacketID, p.Reason, &p.Props)
	case *packet.Pubrec:
		ourAck(&c, p.PacketID, p.Reason, &p.Props)
	case *packet.Pubrel:
		ourAck(&c, p.PacketID, p.Reason, &p.Props)
	case *packet.Pubcomp:
		ourAck(&c, p.PacketID, p.Reason, &p.Props)
	case *packet.Subscribe:
		c.f("pid", p.PacketID)
		for _, s := range p.Subs {
			c.f("sub", fmt.Sprintf("%q/%d/%t/%t/%d", s.Filter, s.QoS, s.NoLocal, s.RetainAsPublished, s.RetainHandling))
		}
		ourProps(&c, "", &p.Props)
	case *packet.Suback:
		c.f("pid", p.PacketID)
		for _, r := range p.Reasons {
			c.f("code", int(r))
		}
		ourProps(&c, "", &p.Props)
	case *packet.Unsubscribe:
		c.f("pid", p.PacketID)
		for _, f := range p.Filters {
			c.f("filter", f)
		}
		ourProps(&c, "", &p.Props)
	case *packet.Unsuback:
		c.f("pid", p.PacketID)
		for _, r := range p.Reasons {
			c.f("code", int(r))
		}
		ourProps(&c, "", &p.Props)
	case *packet.Disconnect:
		c.f("reason", int(p.Reason))
		ourProps(&c, "", &p.Props)
	case *packet.Auth:
		c.f("reason", int(p.Reason))
		ourProps(&c, "", &p.Props)
	}
	return c.String()
}

func ourAck(c *canon, id uint16, r packet.ReasonCode, p *packet.Properties) {
	c.f("pid", id)
	c.f("reason", int(r))
	ourProps(c, "", p)
}

// ourProps renders the properties present, in identifier order.
func ourProps(c *canon, prefix string, p *packet.Properties) {
	has := p.Present.Has
	if has(packet.PropPayloadFormat) {
		c.f(prefix+"p1", int(p.PayloadFormat))
	}
	if has(packet.PropMessageExpiry) {
		c.f(prefix+"p2", p.MessageExpiry)
	}
	if has(packet.PropContentType) {
		c.f(prefix+"p3", p.ContentType)
	}
	if has(packet.PropResponseTopic) {
		c.f(prefix+"p8", p.ResponseTopic)
	}
	if has(packet.PropCorrelationData) {
		c.f(prefix+"p9", p.CorrelationData)
	}
	for _, id := range p.SubscriptionIDs {
		c.f(prefix+"p11", id)
	}
	if has(packet.PropSessionExpiry) {
		c.f(prefix+"p17", p.SessionExpiry)
	}
	if has(packet.PropAssignedClientID) {
		c.f(prefix+"p18", p.AssignedClientID)
	}
	if has(packet.PropServerKeepAlive) {
		c.f(prefix+"p19", p.ServerKeepAlive)
	}
	if has(packet.PropAuthMethod) {
		c.f(prefix+"p21", p.AuthMethod)
	}
	if has(packet.PropAuthData) {
		c.f(prefix+"p22", p.AuthData)
	}
	if has(packet.PropRequestProblemInfo) {
		c.f(prefix+"p23", int(p.RequestProblemInfo))
	}
	if has(packet.PropWillDelay) {
		c.f(prefix+"p24", p.WillDelay)
	}
	if has(packet.PropRequestResponseInfo) {
		c.f(prefix+"p25", int(p.RequestResponseInfo))
	}
	if has(packet.PropResponseInfo) {
		c.f(prefix+"p26", p.ResponseInfo)
	}
	if has(packet.PropServerReference) {
		c.f(prefix+"p28", p.ServerReference)
	}
	if has(packet.PropReasonString) {
		c.f(prefix+"p31", p.ReasonString)
	}
	if has(packet.PropReceiveMaximum) {
		c.f(prefix+"p33", p.ReceiveMaximum)
	}
	if has(packet.PropTopicAliasMaximum) {
		c.f(prefix+"p34", p.TopicAliasMaximum)
	}
	if has(packet.PropTopicAlias) {
		c.f(prefix+"p35", p.TopicAlias)
	}
	if has(packet.PropMaximumQoS) {
		c.f(prefix+"p36", int(p.MaximumQoS))
	}
	if has(packet.PropRetainAvailable) {
		c.f(prefix+"p37", int(p.RetainAvailable))
	}
	for _, u := range p.User {
		c.f(prefix+"p38", u.Key+"\x00"+u.Value)
	}
	if has(packet.PropMaximumPacketSize) {
		c.f(prefix+"p39", p.MaximumPacketSize)
	}
	if has(packet.PropWildcardSubAvailable) {
		c.f(prefix+"p40", int(p.WildcardSubAvail))
	}
	if has(packet.PropSubIDAvailable) {
		c.f(prefix+"p41", int(p.SubIDAvailable))
	}
	if has(packet.PropSharedSubAvailable) {
		c.f(prefix+"p42", int(p.SharedSubAvailable))
	}
}

// CanonPeer renders a packet decoded by the peer, field for field as
// CanonOurs does.
func CanonPeer(cp *paho.ControlPacket) string {
	var c canon
	c.f("type", int(cp.Type))
	switch p := cp.Content.(type) {
	case *paho.Connect:
		c.f("version", int(p.ProtocolVersion))
		c.f("clean", p.CleanStart)
		c.f("keepalive", p.KeepAlive)
		c.f("id", p.ClientID)
		if p.WillFlag {
			c.f("will", true)
			c.f("willqos", int(p.WillQOS))
			c.f("willretain", p.WillRetain)
			c.f("willtopic", p.WillTopic)
			c.f("willpayload", p.WillMessage)
			peerProps(&c, "will.", p.WillProperties)
		}
		if p.UsernameFlag {
			c.f("username", p.Username)
		}
		if p.PasswordFlag {
			c.f("password", p.Password)
		}
		peerProps(&c, "", p.Properties)
	case *paho.Connack:
		c.f("sp", p.SessionPresent)
		c.f("reason", int(p.ReasonCode))
		peerProps(&c, "", p.Properties)
	case *paho.Publish:
		c.f("dup", p.Duplicate)
		c.f("qos", int(p.QoS))
		c.f("retain", p.Retain)
		c.f("pid", p.PacketID)
		c.f("topic", p.Topic)
		c.f("payload", p.Payload)
		peerProps(&c, "", p.Properties)
	case *paho.Puback:
		peerAck(&c, p.PacketID, p.ReasonCode, p.Properties)
	case *paho.Pubrec:
		peerAck(&c, p.PacketID, p.ReasonCode, p.Properties)
	case *paho.Pubrel:
		peerAck(&c, p.PacketID, p.ReasonCode, p.Properties)
	case *paho.Pubcomp:
		peerAck(&c, p.PacketID, p.ReasonCode, p.Properties)
	case *paho.Subscribe:
		c.f("pid", p.PacketID)
		for _, s := range p.Subscriptions {
			c.f("sub", fmt.Sprintf("%q/%d/%t/%t/%d", s.Topic, s.QoS, s.NoLocal, s.RetainAsPublished, s.RetainHandling))
		}
		peerProps(&c, "", p.Properties)
	case *paho.Suback:
		c.f("pid", p.PacketID)
		for _, r := range p.Reasons {
			c.f("code", int(r))
		}
		peerProps(&c, "", p.Properties)
	case *paho.Unsubscribe:
		c.f("pid", p.PacketID)
		for _, f := range p.Topics {
			c.f("filter", f)
		}
		peerProps(&c, "", p.Properties)
	case *paho.Unsuback:
		c.f("pid", p.PacketID)
		for _, r := range p.Reasons {
			c.f("code", int(r))
		}
		peerProps(&c, "", p.Properties)
	case *paho.Disconnect:
		c.f("reason", int(p.ReasonCode))
		peerProps(&c, "", p.Properties)
	case *paho.Auth:
		c.f("reason", int(p.ReasonCode))
		peerProps(&c, "", p.Properties)
	}
	return c.String()
}

func peerAck(c *canon, id uint16, r byte, p *paho.Properties) {
	c.f("pid", id)
	c.f("reason", int(r))
	peerProps(c, "", p)
}

// peerProps renders the peer's properties in identifier order.
func peerProps(c *canon, prefix string, p *paho.Properties) {
	if p == nil {
		return
	}
	byteP := func(id string, v *byte) {
		if v != nil {
			c.f(prefix+id, int(*v))
		}
	}
	u32 := func(id string, v *uint32) {
		if v != nil {
			c.f(prefix+id, *v)
		}
	}
	u16 := func(id string, v *uint16) {
		if v != nil {
			c.f(prefix+id, *v)
		}
	}
	str := func(id string, v string) {
		if v != "" {
			c.f(prefix+id, v)
		}
	}
	bin := func(id string, v []byte) {
		if v != nil {
			c.f(prefix+id, v)
		}
	}
	byteP("p1", p.PayloadFormat)
	u32("p2", p.MessageExpiry)
	str("p3", p.ContentType)
	str("p8", p.ResponseTopic)
	bin("p9", p.CorrelationData)
	if p.SubscriptionIdentifier != nil {
		c.f(prefix+"p11", *p.SubscriptionIdentifier)
	}
	u32("p17", p.SessionExpiryInterval)
	str("p18", p.AssignedClientID)
	u16("p19", p.ServerKeepAlive)
	str("p21", p.AuthMethod)
	bin("p22", p.AuthData)
	byteP("p23", p.RequestProblemInfo)
	u32("p24", p.WillDelayInterval)
	byteP("p25", p.RequestResponseInfo)
	str("p26", p.ResponseInfo)
	str("p28", p.ServerReference)
	str("p31", p.ReasonString)
	u16("p33", p.ReceiveMaximum)
	u16("p34", p.TopicAliasMaximum)
	u16("p35", p.TopicAlias)
	byteP("p36", p.MaximumQOS)
	byteP("p37", p.RetainAvailable)
	for _, u := range p.User {
		c.f(prefix+"p38", u.Key+"\x00"+u.Value)
	}
	u32("p39", p.MaximumPacketSize)
	byteP("p40", p.WildcardSubAvailable)
	byteP("p41", p.SubIDAvailable)
	byteP("p42", p.SharedSubAvailable)
}
