package packet

import "unsafe"

// PropID is a v5 property identifier.
type PropID byte

// The v5 property identifiers (MQTT 5.0 §2.2.2.2).
const (
	PropPayloadFormat        PropID = 0x01 // byte
	PropMessageExpiry        PropID = 0x02 // four-byte integer
	PropContentType          PropID = 0x03 // UTF-8 string
	PropResponseTopic        PropID = 0x08 // UTF-8 string
	PropCorrelationData      PropID = 0x09 // binary data
	PropSubscriptionID       PropID = 0x0B // variable byte integer
	PropSessionExpiry        PropID = 0x11 // four-byte integer
	PropAssignedClientID     PropID = 0x12 // UTF-8 string
	PropServerKeepAlive      PropID = 0x13 // two-byte integer
	PropAuthMethod           PropID = 0x15 // UTF-8 string
	PropAuthData             PropID = 0x16 // binary data
	PropRequestProblemInfo   PropID = 0x17 // byte
	PropWillDelay            PropID = 0x18 // four-byte integer
	PropRequestResponseInfo  PropID = 0x19 // byte
	PropResponseInfo         PropID = 0x1A // UTF-8 string
	PropServerReference      PropID = 0x1C // UTF-8 string
	PropReasonString         PropID = 0x1F // UTF-8 string
	PropReceiveMaximum       PropID = 0x21 // two-byte integer
	PropTopicAliasMaximum    PropID = 0x22 // two-byte integer
	PropTopicAlias           PropID = 0x23 // two-byte integer
	PropMaximumQoS           PropID = 0x24 // byte
	PropRetainAvailable      PropID = 0x25 // byte
	PropUserProperty         PropID = 0x26 // UTF-8 string pair
	PropMaximumPacketSize    PropID = 0x27 // four-byte integer
	PropWildcardSubAvailable PropID = 0x28 // byte
	PropSubIDAvailable       PropID = 0x29 // byte
	PropSharedSubAvailable   PropID = 0x2A // byte
)

// PropSet is a set of property identifiers: bit n set means PropID n is
// present. Every property except User Property and Subscription Identifier
// (which are lists) is present exactly when its bit is set; a zero value with
// the bit set is a present zero.
type PropSet uint64

// Has reports whether id is in the set.
func (s PropSet) Has(id PropID) bool { return s&(1<<id) != 0 }

// With returns the set with id added.
func (s PropSet) With(id PropID) PropSet { return s | 1<<id }

// UserProperty is one v5 User Property name/value pair.
type UserProperty struct {
	Key, Value string
}

// Properties holds the v5 properties of a packet or will. It is empty (zero)
// in 3.1.1. Present records which single-valued properties appear;
// SubscriptionIDs and User are present when non-empty, in wire order.
//
// Byte-slice fields alias the decoder's input, like Publish.Topic.
//
// The fields are grouped by size, largest first, so the struct carries no
// padding: every PUBLISH and acknowledgement embeds one.
type Properties struct {
	Present PropSet

	ContentType      string
	ResponseTopic    string
	AssignedClientID string
	AuthMethod       string
	ResponseInfo     string
	ServerReference  string
	ReasonString     string

	CorrelationData []byte
	SubscriptionIDs []uint32
	AuthData        []byte
	User            []UserProperty

	MessageExpiry     uint32
	SessionExpiry     uint32
	WillDelay         uint32
	MaximumPacketSize uint32

	ServerKeepAlive   uint16
	ReceiveMaximum    uint16
	TopicAliasMaximum uint16
	TopicAlias        uint16

	PayloadFormat       byte
	RequestProblemInfo  byte
	RequestResponseInfo byte
	MaximumQoS          byte
	RetainAvailable     byte
	WildcardSubAvail    byte
	SubIDAvailable      byte
	SharedSubAvailable  byte
}

// reset makes p zero. Properties are mostly absent: when p holds no
// pointer (no string, bytes or slice), only its scalar fields are cleared,
// which spares the garbage collector's write barriers on the eleven pointer
// fields a whole-struct zeroing costs while it marks. Used by the decoders
// that re-fill one value per packet.
func (p *Properties) reset() {
	if p.hasPointers() {
		*p = Properties{}
		return
	}
	p.Present = 0
	p.MessageExpiry, p.SessionExpiry, p.WillDelay, p.MaximumPacketSize = 0, 0, 0, 0
	p.ServerKeepAlive, p.ReceiveMaximum, p.TopicAliasMaximum, p.TopicAlias = 0, 0, 0, 0
	p.PayloadFormat, p.RequestProblemInfo, p.RequestResponseInfo, p.MaximumQoS = 0, 0, 0, 0
	p.RetainAvailable, p.WildcardSubAvail, p.SubIDAvailable, p.SharedSubAvailable = 0, 0, 0, 0
}

// hasPointers reports whether any string, bytes or slice field of p points
// anywhere (even an empty one).
func (p *Properties) hasPointers() bool {
	return unsafe.StringData(p.ContentType) != nil || unsafe.StringData(p.ResponseTopic) != nil ||
		unsafe.StringData(p.AssignedClientID) != nil || unsafe.StringData(p.AuthMethod) != nil ||
		unsafe.StringData(p.ResponseInfo) != nil || unsafe.StringData(p.ServerReference) != nil ||
		unsafe.StringData(p.ReasonString) != nil ||
		p.CorrelationData != nil || p.SubscriptionIDs != nil || p.AuthData != nil || p.User != nil
}
