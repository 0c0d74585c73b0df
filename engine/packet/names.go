package packet

import "strconv"

var typeNames = [16]string{
	"RESERVED0", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH",
}

// String returns the packet type name as the standard writes it ("PUBLISH").
func (t Type) String() string {
	if t < 16 {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// String returns "3.1.1" or "5.0", or "Version(n)" for other levels.
func (v Version) String() string {
	switch v {
	case V311:
		return "3.1.1"
	case V5:
		return "5.0"
	}
	return "Version(" + strconv.Itoa(int(v)) + ")"
}

var reasonNames = map[ReasonCode]string{
	0x00: "Success",
	0x01: "Granted QoS 1",
	0x02: "Granted QoS 2",
	0x03: "Server unavailable (3.1.1)",
	0x04: "Disconnect with Will Message",
	0x05: "Not authorized (3.1.1)",
	0x10: "No matching subscribers",
	0x11: "No subscription existed",
	0x18: "Continue authentication",
	0x19: "Re-authenticate",
	0x80: "Unspecified error",
	0x81: "Malformed Packet",
	0x82: "Protocol Error",
	0x83: "Implementation specific error",
	0x84: "Unsupported Protocol Version",
	0x85: "Client Identifier not valid",
	0x86: "Bad User Name or Password",
	0x87: "Not authorized",
	0x88: "Server unavailable",
	0x89: "Server busy",
	0x8A: "Banned",
	0x8B: "Server shutting down",
	0x8C: "Bad authentication method",
	0x8D: "Keep Alive timeout",
	0x8E: "Session taken over",
	0x8F: "Topic Filter invalid",
	0x90: "Topic Name invalid",
	0x91: "Packet Identifier in use",
	0x92: "Packet Identifier not found",
	0x93: "Receive Maximum exceeded",
	0x94: "Topic Alias invalid",
	0x95: "Packet too large",
	0x96: "Message rate too high",
	0x97: "Quota exceeded",
	0x98: "Administrative action",
	0x99: "Payload format invalid",
	0x9A: "Retain not supported",
	0x9B: "QoS not supported",
	0x9C: "Use another server",
	0x9D: "Server moved",
	0x9E: "Shared Subscriptions not supported",
	0x9F: "Connection rate exceeded",
	0xA0: "Maximum connect time",
	0xA1: "Subscription Identifiers not supported",
	0xA2: "Wildcard Subscriptions not supported",
}

// String names the reason code as the v5 table does. Codes that share a value
// get the first name (0x00 is "Success", also Normal disconnection and Granted
// QoS 0; 0x01 and 0x02 are also the 3.1.1 CONNACK return codes "unacceptable
// protocol version" and "identifier rejected"; 0x04 is also "bad user name or
// password" in 3.1.1). Unknown codes print as "ReasonCode(0xNN)".
func (r ReasonCode) String() string {
	if s, ok := reasonNames[r]; ok {
		return s
	}
	return "ReasonCode(0x" + strconv.FormatUint(uint64(r)|0x100, 16)[1:] + ")"
}

// propNames is indexed by identifier (an array: the decoder names every
// property it reads, for its error messages).
var propNames = [256]string{
	PropPayloadFormat:        "Payload Format Indicator",
	PropMessageExpiry:        "Message Expiry Interval",
	PropContentType:          "Content Type",
	PropResponseTopic:        "Response Topic",
	PropCorrelationData:      "Correlation Data",
	PropSubscriptionID:       "Subscription Identifier",
	PropSessionExpiry:        "Session Expiry Interval",
	PropAssignedClientID:     "Assigned Client Identifier",
	PropServerKeepAlive:      "Server Keep Alive",
	PropAuthMethod:           "Authentication Method",
	PropAuthData:             "Authentication Data",
	PropRequestProblemInfo:   "Request Problem Information",
	PropWillDelay:            "Will Delay Interval",
	PropRequestResponseInfo:  "Request Response Information",
	PropResponseInfo:         "Response Information",
	PropServerReference:      "Server Reference",
	PropReasonString:         "Reason String",
	PropReceiveMaximum:       "Receive Maximum",
	PropTopicAliasMaximum:    "Topic Alias Maximum",
	PropTopicAlias:           "Topic Alias",
	PropMaximumQoS:           "Maximum QoS",
	PropRetainAvailable:      "Retain Available",
	PropUserProperty:         "User Property",
	PropMaximumPacketSize:    "Maximum Packet Size",
	PropWildcardSubAvailable: "Wildcard Subscription Available",
	PropSubIDAvailable:       "Subscription Identifier Available",
	PropSharedSubAvailable:   "Shared Subscription Available",
}

// String names the property as the v5 standard does; unknown identifiers
// print as "PropID(0xNN)".
func (id PropID) String() string {
	if s := propNames[id]; s != "" {
		return s
	}
	return "PropID(0x" + strconv.FormatUint(uint64(id)|0x100, 16)[1:] + ")"
}
