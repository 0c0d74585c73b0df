package packet

import (
	"math/bits"
	"strconv"
)

// propKind is the wire type of a property value (5.0 §2.2.2.2).
type propKind uint8

const (
	kindNone propKind = iota
	kindByte
	kindU16
	kindU32
	kindVBI
	kindStr
	kindBin
	kindPair
)

// propOrder lists every property identifier in ascending order: the order the
// encoder writes them.
var propOrder = [...]PropID{
	PropPayloadFormat, PropMessageExpiry, PropContentType, PropResponseTopic,
	PropCorrelationData, PropSubscriptionID, PropSessionExpiry, PropAssignedClientID,
	PropServerKeepAlive, PropAuthMethod, PropAuthData, PropRequestProblemInfo,
	PropWillDelay, PropRequestResponseInfo, PropResponseInfo, PropServerReference,
	PropReasonString, PropReceiveMaximum, PropTopicAliasMaximum, PropTopicAlias,
	PropMaximumQoS, PropRetainAvailable, PropUserProperty, PropMaximumPacketSize,
	PropWildcardSubAvailable, PropSubIDAvailable, PropSharedSubAvailable,
}

// kindOf returns the wire type of id, kindNone for an unknown identifier.
func kindOf(id PropID) propKind {
	switch id {
	case PropPayloadFormat, PropRequestProblemInfo, PropRequestResponseInfo, PropMaximumQoS,
		PropRetainAvailable, PropWildcardSubAvailable, PropSubIDAvailable, PropSharedSubAvailable:
		return kindByte
	case PropServerKeepAlive, PropReceiveMaximum, PropTopicAliasMaximum, PropTopicAlias:
		return kindU16
	case PropMessageExpiry, PropSessionExpiry, PropWillDelay, PropMaximumPacketSize:
		return kindU32
	case PropSubscriptionID:
		return kindVBI
	case PropContentType, PropResponseTopic, PropAssignedClientID, PropAuthMethod,
		PropResponseInfo, PropServerReference, PropReasonString:
		return kindStr
	case PropCorrelationData, PropAuthData:
		return kindBin
	case PropUserProperty:
		return kindPair
	}
	return kindNone
}

// propCtx is where a property list appears; each allows its own properties.
type propCtx uint8

const (
	ctxConnect propCtx = iota
	ctxConnack
	ctxPublish
	ctxWill
	ctxAck // PUBACK, PUBREC, PUBREL, PUBCOMP
	ctxSubscribe
	ctxSuback
	ctxUnsubscribe
	ctxUnsuback
	ctxDisconnect
	ctxAuth
)

var ctxNames = [...]string{"CONNECT", "CONNACK", "PUBLISH", "Will Properties", "PUBACK/PUBREC/PUBREL/PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "DISCONNECT", "AUTH"}

func set(ids ...PropID) PropSet {
	var s PropSet
	for _, id := range ids {
		s = s.With(id)
	}
	return s
}

// allowedProps is the 5.0 §2.2.2.2 table: which properties each packet may carry.
var allowedProps = [...]PropSet{
	ctxConnect: set(PropSessionExpiry, PropAuthMethod, PropAuthData, PropRequestProblemInfo,
		PropRequestResponseInfo, PropReceiveMaximum, PropTopicAliasMaximum, PropUserProperty, PropMaximumPacketSize),
	ctxConnack: set(PropSessionExpiry, PropAssignedClientID, PropServerKeepAlive, PropAuthMethod, PropAuthData,
		PropResponseInfo, PropServerReference, PropReasonString, PropReceiveMaximum, PropTopicAliasMaximum,
		PropMaximumQoS, PropRetainAvailable, PropUserProperty, PropMaximumPacketSize, PropWildcardSubAvailable,
		PropSubIDAvailable, PropSharedSubAvailable),
	ctxPublish: set(PropPayloadFormat, PropMessageExpiry, PropContentType, PropResponseTopic, PropCorrelationData,
		PropSubscriptionID, PropTopicAlias, PropUserProperty),
	ctxWill: set(PropPayloadFormat, PropMessageExpiry, PropContentType, PropResponseTopic, PropCorrelationData,
		PropWillDelay, PropUserProperty),
	ctxAck:         set(PropReasonString, PropUserProperty),
	ctxSubscribe:   set(PropSubscriptionID, PropUserProperty),
	ctxSuback:      set(PropReasonString, PropUserProperty),
	ctxUnsubscribe: set(PropUserProperty),
	ctxUnsuback:    set(PropReasonString, PropUserProperty),
	ctxDisconnect:  set(PropSessionExpiry, PropServerReference, PropReasonString, PropUserProperty),
	ctxAuth:        set(PropAuthMethod, PropAuthData, PropReasonString, PropUserProperty),
}

// listProps are the properties kept as lists rather than Present bits.
var listProps = set(PropSubscriptionID, PropUserProperty)

// isEmpty reports whether no property is present.
func (p *Properties) isEmpty() bool {
	return p.Present == 0 && len(p.SubscriptionIDs) == 0 && len(p.User) == 0
}

// decodeProps reads a v5 property list (length then properties) into p.
func decodeProps(r *reader, ctx propCtx, p *Properties) error {
	if r.off < len(r.b) && r.b[r.off] == 0 {
		r.off++ // Property Length 0: the usual packet, nothing to read
		return nil
	}
	n, err := r.vbi("property length")
	if err != nil {
		return err
	}
	if r.left() < n {
		return r.short("properties")
	}
	pr := reader{v: r.v, b: r.b[:r.off+n], off: r.off}
	r.off += n
	for pr.left() > 0 {
		c, _ := pr.byte1("property identifier")
		id := PropID(c)
		if kindOf(id) == kindNone {
			// 5.0 §2.2.2.2: an unknown Property Identifier is a Malformed Packet.
			return malformed("§2.2.2.2", "unknown property identifier 0x"+strconv.FormatUint(uint64(c), 16))
		}
		if !allowedProps[ctx].Has(id) {
			// 5.0 §2.2.2.2: "A Control Packet which contains an Identifier which
			// is not valid for its packet type ... is a Malformed Packet."
			return malformed("§2.2.2.2", id.String()+" not allowed in "+ctxNames[ctx])
		}
		switch {
		case id == PropUserProperty || (id == PropSubscriptionID && ctx == ctxPublish):
			// lists: any number, kept in wire order
		case id == PropSubscriptionID:
			if len(p.SubscriptionIDs) > 0 {
				// 5.0 §3.8.2.1.2: Subscription Identifier more than once in SUBSCRIBE is a Protocol Error.
				return protocol("§3.8.2.1.2", id.String()+" included more than once in "+ctxNames[ctx])
			}
		default:
			if p.Present.Has(id) {
				// 5.0 §2.2.2.2 and each property's text: included more than once is a Protocol Error.
				return protocol("§2.2.2.2", id.String()+" included more than once in "+ctxNames[ctx])
			}
			p.Present = p.Present.With(id)
		}
		if err := decodeProp(&pr, id, p); err != nil {
			return err
		}
	}
	return nil
}

// decodeProp reads the value of one property into p.
func decodeProp(r *reader, id PropID, p *Properties) error {
	name := id.String()
	var err error
	switch id {
	case PropPayloadFormat:
		p.PayloadFormat, err = r.byte1(name)
	case PropMessageExpiry:
		p.MessageExpiry, err = r.u32(name)
	case PropContentType:
		p.ContentType, err = r.str(name)
	case PropResponseTopic:
		p.ResponseTopic, err = r.str(name)
	case PropCorrelationData:
		p.CorrelationData, err = r.bin(name)
	case PropSubscriptionID:
		var n int
		n, err = r.vbi(name)
		p.SubscriptionIDs = append(p.SubscriptionIDs, uint32(n))
	case PropSessionExpiry:
		p.SessionExpiry, err = r.u32(name)
	case PropAssignedClientID:
		p.AssignedClientID, err = r.str(name)
	case PropServerKeepAlive:
		p.ServerKeepAlive, err = r.u16(name)
	case PropAuthMethod:
		p.AuthMethod, err = r.str(name)
	case PropAuthData:
		p.AuthData, err = r.bin(name)
	case PropRequestProblemInfo:
		p.RequestProblemInfo, err = r.byte1(name)
	case PropWillDelay:
		p.WillDelay, err = r.u32(name)
	case PropRequestResponseInfo:
		p.RequestResponseInfo, err = r.byte1(name)
	case PropResponseInfo:
		p.ResponseInfo, err = r.str(name)
	case PropServerReference:
		p.ServerReference, err = r.str(name)
	case PropReasonString:
		p.ReasonString, err = r.str(name)
	case PropReceiveMaximum:
		p.ReceiveMaximum, err = r.u16(name)
	case PropTopicAliasMaximum:
		p.TopicAliasMaximum, err = r.u16(name)
	case PropTopicAlias:
		p.TopicAlias, err = r.u16(name)
	case PropMaximumQoS:
		p.MaximumQoS, err = r.byte1(name)
	case PropRetainAvailable:
		p.RetainAvailable, err = r.byte1(name)
	case PropUserProperty:
		var u UserProperty
		if u.Key, err = r.str("User Property name"); err == nil {
			u.Value, err = r.str("User Property value")
		}
		p.User = append(p.User, u)
	case PropMaximumPacketSize:
		p.MaximumPacketSize, err = r.u32(name)
	case PropWildcardSubAvailable:
		p.WildcardSubAvail, err = r.byte1(name)
	case PropSubIDAvailable:
		p.SubIDAvailable, err = r.byte1(name)
	case PropSharedSubAvailable:
		p.SharedSubAvailable, err = r.byte1(name)
	}
	return err
}

// checkProps enforces the value rules of the properties present in p; the
// encoder and the decoder share it.
func checkProps(ctx propCtx, p *Properties) error {
	if p.isEmpty() {
		return nil
	}
	s := p.Present
	if err := checkPropBytes(ctx, p); err != nil {
		return err
	}
	if s.Has(PropReceiveMaximum) && p.ReceiveMaximum == 0 {
		// 5.0 §3.1.2.11.3 / §3.2.2.3.3: Receive Maximum 0 is a Protocol Error.
		return protocol(inConnack(ctx, "§3.1.2.11.3", "§3.2.2.3.3"), "Receive Maximum is 0")
	}
	if s.Has(PropMaximumPacketSize) && p.MaximumPacketSize == 0 {
		// 5.0 §3.1.2.11.4 / §3.2.2.3.6: Maximum Packet Size 0 is a Protocol Error.
		return protocol(inConnack(ctx, "§3.1.2.11.4", "§3.2.2.3.6"), "Maximum Packet Size is 0")
	}
	if s.Has(PropTopicAlias) && p.TopicAlias == 0 {
		// [MQTT-3.3.2-8] a Topic Alias of 0 is not permitted.
		return refuse("MQTT-3.3.2-8", TopicAliasInvalid, "Topic Alias is 0")
	}
	for _, id := range p.SubscriptionIDs {
		if id == 0 || id > maxRemaining {
			// 5.0 §3.3.2.3.8 (PUBLISH) / §3.8.2.1.2 (SUBSCRIBE): Subscription
			// Identifier 1..268,435,455; 0 is a Protocol Error.
			sec := "§3.8.2.1.2"
			if ctx == ctxPublish {
				sec = "§3.3.2.3.8"
			}
			return protocol(sec, "Subscription Identifier out of range 1..268435455")
		}
	}
	if ctx == ctxSubscribe && len(p.SubscriptionIDs) > 1 {
		// 5.0 §3.8.2.1.2: Subscription Identifier more than once in SUBSCRIBE is a Protocol Error.
		return protocol("§3.8.2.1.2", "Subscription Identifier included more than once in SUBSCRIBE")
	}
	if s.Has(PropAuthData) && !s.Has(PropAuthMethod) {
		// 5.0 §3.1.2.11.10 / §3.2.2.3.18: Authentication Data without Method is a Protocol Error.
		return protocol(inConnack(ctx, "§3.1.2.11.10", "§3.2.2.3.18"), "Authentication Data without Authentication Method")
	}
	return checkPropStrings(p)
}

// inConnack picks the section of a CONNECT property rule, or of its CONNACK twin.
func inConnack(ctx propCtx, connect, connack string) string {
	if ctx == ctxConnack {
		return connack
	}
	return connect
}

// checkPropBytes enforces the ranges of the byte properties: each is 0 or 1,
// anything else is a Protocol Error, under the rule of the property's own
// section (byteSection).
func checkPropBytes(ctx propCtx, p *Properties) error {
	// The byte properties present, in ascending order (the first bad one
	// is reported, as a check of each in turn would).
	for ids := p.Present & byteProps; ids != 0; ids &= ids - 1 {
		if id := PropID(bits.TrailingZeros64(uint64(ids))); propInt(p, id) > 1 {
			return protocol(byteSection(ctx, id), id.String()+" is not 0 or 1")
		}
	}
	return nil
}

// byteSection is the 5.0 section that states a byte property's range: "It is
// a Protocol Error to include ... with a value other than 0 or 1" (Maximum
// QoS: "other than 0 or 1"; the Payload Format Indicator's rule stands in
// the Will Properties and the PUBLISH sections).
func byteSection(ctx propCtx, id PropID) string {
	switch id {
	case PropPayloadFormat:
		if ctx == ctxWill {
			return "§3.1.3.2.3"
		}
		return "§3.3.2.3.2"
	case PropRequestResponseInfo:
		return "§3.1.2.11.6"
	case PropRequestProblemInfo:
		return "§3.1.2.11.7"
	case PropMaximumQoS:
		return "§3.2.2.3.4"
	case PropRetainAvailable:
		return "§3.2.2.3.5"
	case PropWildcardSubAvailable:
		return "§3.2.2.3.11"
	case PropSubIDAvailable:
		return "§3.2.2.3.12"
	case PropSharedSubAvailable:
		return "§3.2.2.3.13"
	}
	return "§2.2.2.2"
}

// byteProps are the properties whose value is 0 or 1.
var byteProps = set(PropPayloadFormat, PropRequestProblemInfo, PropRequestResponseInfo, PropMaximumQoS,
	PropRetainAvailable, PropWildcardSubAvailable, PropSubIDAvailable, PropSharedSubAvailable)

// stringProps are the UTF-8 string properties checked as strings only
// (the Response Topic is also a topic name).
var stringProps = set(PropContentType, PropAssignedClientID, PropAuthMethod, PropResponseInfo,
	PropServerReference, PropReasonString)

// checkPropStrings enforces the UTF-8 rules on the string properties, and the
// Topic Name rules on the Response Topic.
func checkPropStrings(p *Properties) error {
	s := p.Present
	if s.Has(PropResponseTopic) {
		// [MQTT-3.3.2-14] the Response Topic MUST NOT contain wildcards.
		if err := checkTopicNameString(V5, p.ResponseTopic, "Response Topic"); err != nil {
			if e, ok := err.(*Error); ok && e.Rule == "MQTT-3.3.2-2" {
				return refuse("MQTT-3.3.2-14", e.Reason, "wildcard in Response Topic")
			}
			return err
		}
	}
	for ids := s & stringProps; ids != 0; ids &= ids - 1 { // ascending, as a check of each in turn
		id := PropID(bits.TrailingZeros64(uint64(ids)))
		if err := checkUTF8String(V5, propStr(p, id), id.String()); err != nil {
			return err
		}
	}
	for _, u := range p.User {
		if err := checkUTF8String(V5, u.Key, "User Property name"); err != nil {
			return err
		}
		if err := checkUTF8String(V5, u.Value, "User Property value"); err != nil {
			return err
		}
	}
	return nil
}

// checkPropsEncode refuses what the encoder could not write faithfully:
// properties not allowed here, list identifiers in Present, values set without
// their Present bit, and fields too long for their length prefix.
func checkPropsEncode(v Version, ctx propCtx, p *Properties) error {
	if p.isEmpty() && !p.anyValue() {
		return nil // nothing present, no stray value: every rule below holds
	}
	if v != V5 {
		if !p.isEmpty() || p.stray() != 0 {
			// 3.1.1 has no properties.
			return protocol("§2.2.2.2", "properties in a 3.1.1 packet")
		}
		return nil
	}
	allowed := allowedProps[ctx]
	if p.Present&listProps != 0 {
		return protocol("§2.2.2.2", "Present names a list property: fill SubscriptionIDs or User instead")
	}
	// 5.0 §2.2.2.2: a property not valid for the packet type makes it a
	// Malformed Packet; the encoder refuses to write one.
	if bad := p.Present &^ allowed; bad != 0 {
		return malformed("§2.2.2.2", "property not allowed in "+ctxNames[ctx]+": "+lowestID(bad).String())
	}
	if len(p.SubscriptionIDs) > 0 && !allowed.Has(PropSubscriptionID) {
		return malformed("§2.2.2.2", "Subscription Identifier not allowed in "+ctxNames[ctx])
	}
	if len(p.User) > 0 && !allowed.Has(PropUserProperty) {
		return malformed("§2.2.2.2", "User Property not allowed in "+ctxNames[ctx])
	}
	if id := p.stray(); id != 0 {
		return protocol("§2.2.2.2", id.String()+" has a value but no Present bit")
	}
	for _, n := range [...]int{len(p.ContentType), len(p.ResponseTopic), len(p.CorrelationData),
		len(p.AssignedClientID), len(p.AuthMethod), len(p.AuthData), len(p.ResponseInfo),
		len(p.ServerReference), len(p.ReasonString)} {
		if err := checkLen(V5, n, "property"); err != nil {
			return err
		}
	}
	for _, u := range p.User {
		if err := checkLen(V5, max(len(u.Key), len(u.Value)), "User Property"); err != nil {
			return err
		}
	}
	return checkProps(ctx, p)
}

// lowestID returns the lowest identifier in s.
func lowestID(s PropSet) PropID {
	for i := 0; i < 64; i++ {
		if s&(1<<i) != 0 {
			return PropID(i)
		}
	}
	return 0
}

// stray returns the first property whose value is set (non-zero) while its
// Present bit is not, or 0.
func (p *Properties) stray() PropID {
	if p.Present == 0 && !p.anyValue() {
		return 0
	}
	s := p.Present
	switch {
	case p.PayloadFormat != 0 && !s.Has(PropPayloadFormat):
		return PropPayloadFormat
	case p.MessageExpiry != 0 && !s.Has(PropMessageExpiry):
		return PropMessageExpiry
	case p.ContentType != "" && !s.Has(PropContentType):
		return PropContentType
	case p.ResponseTopic != "" && !s.Has(PropResponseTopic):
		return PropResponseTopic
	case len(p.CorrelationData) != 0 && !s.Has(PropCorrelationData):
		return PropCorrelationData
	case p.SessionExpiry != 0 && !s.Has(PropSessionExpiry):
		return PropSessionExpiry
	case p.AssignedClientID != "" && !s.Has(PropAssignedClientID):
		return PropAssignedClientID
	case p.ServerKeepAlive != 0 && !s.Has(PropServerKeepAlive):
		return PropServerKeepAlive
	case p.AuthMethod != "" && !s.Has(PropAuthMethod):
		return PropAuthMethod
	case len(p.AuthData) != 0 && !s.Has(PropAuthData):
		return PropAuthData
	case p.RequestProblemInfo != 0 && !s.Has(PropRequestProblemInfo):
		return PropRequestProblemInfo
	case p.WillDelay != 0 && !s.Has(PropWillDelay):
		return PropWillDelay
	case p.RequestResponseInfo != 0 && !s.Has(PropRequestResponseInfo):
		return PropRequestResponseInfo
	case p.ResponseInfo != "" && !s.Has(PropResponseInfo):
		return PropResponseInfo
	case p.ServerReference != "" && !s.Has(PropServerReference):
		return PropServerReference
	case p.ReasonString != "" && !s.Has(PropReasonString):
		return PropReasonString
	case p.ReceiveMaximum != 0 && !s.Has(PropReceiveMaximum):
		return PropReceiveMaximum
	case p.TopicAliasMaximum != 0 && !s.Has(PropTopicAliasMaximum):
		return PropTopicAliasMaximum
	case p.TopicAlias != 0 && !s.Has(PropTopicAlias):
		return PropTopicAlias
	case p.MaximumQoS != 0 && !s.Has(PropMaximumQoS):
		return PropMaximumQoS
	case p.RetainAvailable != 0 && !s.Has(PropRetainAvailable):
		return PropRetainAvailable
	case p.MaximumPacketSize != 0 && !s.Has(PropMaximumPacketSize):
		return PropMaximumPacketSize
	case p.WildcardSubAvail != 0 && !s.Has(PropWildcardSubAvailable):
		return PropWildcardSubAvailable
	case p.SubIDAvailable != 0 && !s.Has(PropSubIDAvailable):
		return PropSubIDAvailable
	case p.SharedSubAvailable != 0 && !s.Has(PropSharedSubAvailable):
		return PropSharedSubAvailable
	}
	return 0
}

// anyValue reports whether any single-valued property field is non-zero.
func (p *Properties) anyValue() bool {
	bytes := p.PayloadFormat | p.RequestProblemInfo | p.RequestResponseInfo | p.MaximumQoS |
		p.RetainAvailable | p.WildcardSubAvail | p.SubIDAvailable | p.SharedSubAvailable
	ints := p.MessageExpiry | p.SessionExpiry | p.WillDelay | p.MaximumPacketSize |
		uint32(p.ServerKeepAlive|p.ReceiveMaximum|p.TopicAliasMaximum|p.TopicAlias)
	lens := len(p.ContentType) | len(p.ResponseTopic) | len(p.CorrelationData) | len(p.AssignedClientID) |
		len(p.AuthMethod) | len(p.AuthData) | len(p.ResponseInfo) | len(p.ServerReference) | len(p.ReasonString)
	return bytes != 0 || ints != 0 || lens != 0
}

// propsLen is the encoded size of the properties, without their length prefix.
func propsLen(p *Properties) int {
	if p.isEmpty() {
		return 0
	}
	n := 0
	for ids := writtenProps(p); ids != 0; ids &= ids - 1 {
		switch id := PropID(bits.TrailingZeros64(uint64(ids))); id {
		case PropSubscriptionID:
			for _, sid := range p.SubscriptionIDs {
				n += 1 + vbiLen(int(sid))
			}
		case PropUserProperty:
			for _, u := range p.User {
				n += 5 + len(u.Key) + len(u.Value)
			}
		default:
			switch kindOf(id) {
			case kindByte:
				n += 2
			case kindU16:
				n += 3
			case kindU32:
				n += 5
			case kindStr:
				n += 3 + len(propStr(p, id))
			case kindBin:
				n += 3 + len(propBin(p, id))
			}
		}
	}
	return n
}

// knownProps is every property identifier of propOrder.
var knownProps = set(propOrder[:]...)

// writtenProps is the set of identifiers p writes, in the ascending order
// of their bits (propOrder's): its known Present ones, and the two lists
// when they are not empty.
func writtenProps(p *Properties) PropSet {
	ids := p.Present & knownProps &^ listProps
	if len(p.SubscriptionIDs) > 0 {
		ids = ids.With(PropSubscriptionID)
	}
	if len(p.User) > 0 {
		ids = ids.With(PropUserProperty)
	}
	return ids
}

// propBin returns the value of a binary property.
func propBin(p *Properties, id PropID) []byte {
	if id == PropAuthData {
		return p.AuthData
	}
	return p.CorrelationData
}

// propStr returns the value of a string property.
func propStr(p *Properties, id PropID) string {
	switch id {
	case PropContentType:
		return p.ContentType
	case PropResponseTopic:
		return p.ResponseTopic
	case PropAssignedClientID:
		return p.AssignedClientID
	case PropAuthMethod:
		return p.AuthMethod
	case PropResponseInfo:
		return p.ResponseInfo
	case PropServerReference:
		return p.ServerReference
	case PropReasonString:
		return p.ReasonString
	}
	return ""
}

// propInt returns the value of a byte or integer property.
func propInt(p *Properties, id PropID) uint32 {
	switch id {
	case PropPayloadFormat:
		return uint32(p.PayloadFormat)
	case PropMessageExpiry:
		return p.MessageExpiry
	case PropSessionExpiry:
		return p.SessionExpiry
	case PropServerKeepAlive:
		return uint32(p.ServerKeepAlive)
	case PropRequestProblemInfo:
		return uint32(p.RequestProblemInfo)
	case PropWillDelay:
		return p.WillDelay
	case PropRequestResponseInfo:
		return uint32(p.RequestResponseInfo)
	case PropReceiveMaximum:
		return uint32(p.ReceiveMaximum)
	case PropTopicAliasMaximum:
		return uint32(p.TopicAliasMaximum)
	case PropTopicAlias:
		return uint32(p.TopicAlias)
	case PropMaximumQoS:
		return uint32(p.MaximumQoS)
	case PropRetainAvailable:
		return uint32(p.RetainAvailable)
	case PropMaximumPacketSize:
		return p.MaximumPacketSize
	case PropWildcardSubAvailable:
		return uint32(p.WildcardSubAvail)
	case PropSubIDAvailable:
		return uint32(p.SubIDAvailable)
	case PropSharedSubAvailable:
		return uint32(p.SharedSubAvailable)
	}
	return 0
}

// appendProps appends the property length n (from propsLen) and the
// properties, in ascending identifier order.
func appendProps(dst []byte, p *Properties, n int) []byte {
	dst = appendVBI(dst, n)
	if n == 0 {
		return dst
	}
	for ids := writtenProps(p); ids != 0; ids &= ids - 1 {
		switch id := PropID(bits.TrailingZeros64(uint64(ids))); id {
		case PropSubscriptionID:
			for _, sid := range p.SubscriptionIDs {
				dst = appendVBI(append(dst, byte(id)), int(sid))
			}
		case PropUserProperty:
			for _, u := range p.User {
				dst = appendStr(appendStr(append(dst, byte(id)), u.Key), u.Value)
			}
		default:
			dst = append(dst, byte(id))
			switch kindOf(id) {
			case kindByte:
				dst = append(dst, byte(propInt(p, id)))
			case kindU16:
				dst = appendU16(dst, uint16(propInt(p, id)))
			case kindU32:
				dst = appendU32(dst, propInt(p, id))
			case kindStr:
				dst = appendStr(dst, propStr(p, id))
			case kindBin:
				dst = appendBin(dst, propBin(p, id))
			}
		}
	}
	return dst
}
