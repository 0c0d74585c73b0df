package packet

import (
	"errors"
	"strings"
	"testing"
)

// refusal is one strictness rule: wire bytes the decoder must refuse, the
// rule the error must name and the reason code it must carry.
type refusal struct {
	name   string
	v      Version
	wire   string
	rule   string
	reason ReasonCode
	max    uint32
}

// v4 and v5 CONNECT prefixes up to the Connect Flags.
const (
	c4 = "0004'MQTT' 04"
	c5 = "0004'MQTT' 05"
)

var refusals = []refusal{
	// Fixed header.
	{"v4 PUBACK flags 0001", V311, "41 02 0001", "MQTT-2.2.2-1", MalformedPacket, 0},
	{"v5 PUBREL flags 0000", V5, "60 02 0001", "MQTT-2.1.3-1", MalformedPacket, 0},
	{"v4 SUBSCRIBE flags 0000", V311, "80 06 0001 0001'a' 00", "MQTT-2.2.2-1", MalformedPacket, 0},
	{"v4 UNSUBSCRIBE flags 0000", V311, "A0 05 0001 0001'a'", "MQTT-2.2.2-1", MalformedPacket, 0},
	{"v5 PINGREQ flags 0001", V5, "C1 00", "MQTT-2.1.3-1", MalformedPacket, 0},
	{"v4 CONNECT flags 0010", V311, "12 0D " + c4 + " 02 003C 0001'c'", "MQTT-2.2.2-1", MalformedPacket, 0},
	{"v4 reserved type 0", V311, "00 00", "§2.2.1", MalformedPacket, 0},
	{"v5 reserved type 0", V5, "00 00", "§2.1.2", MalformedPacket, 0},
	{"v4 AUTH does not exist", V311, "F0 00", "§2.2.1", MalformedPacket, 0},
	{"v4 remaining length over 4 bytes", V311, "30 FF FF FF FF 01", "§2.2.3", MalformedPacket, 0},
	{"v5 remaining length over 4 bytes", V5, "30 80 80 80 80 01", "§1.5.5", MalformedPacket, 0},
	{"v5 remaining length not shortest", V5, "C0 80 00", "MQTT-1.5.5-1", MalformedPacket, 0},
	{"v4 topic past the data", V311, "30 02 0005", "§2.2.3", MalformedPacket, 0},
	{"v5 packet id past the data", V5, "32 03 0001't'", "§2.1.4", MalformedPacket, 0},
	{"v4 packet too large", V311, "30 FF FF FF 7F", "§2.2.3", PacketTooLarge, 1024},
	{"v5 packet one byte too large", V5, "30 04 0001't' 00", "MQTT-3.1.2-24", PacketTooLarge, 5},
	{"first packet not CONNECT", 0, "C0 00", "MQTT-3.1.0-1", ProtocolError, 0},

	// CONNECT.
	{"protocol name MQIs", V311, "10 0D 0004'MQIs' 04 02 003C 0001'c'", "MQTT-3.1.2-1", UnsupportedProtocolVersion, 0},
	{"protocol level 3", V311, "10 0D 0004'MQTT' 03 02 003C 0001'c'", "MQTT-3.1.2-2", UnsupportedProtocolVersion, 0},
	{"protocol level 6", 0, "10 0D 0004'MQTT' 06 02 003C 0001'c'", "MQTT-3.1.2-2", UnsupportedProtocolVersion, 0},
	{"v4 CONNECT reserved flag", V311, "10 0D " + c4 + " 03 003C 0001'c'", "MQTT-3.1.2-3", MalformedPacket, 0},
	{"v5 CONNECT reserved flag", V5, "10 0E " + c5 + " 03 003C 00 0001'c'", "MQTT-3.1.2-3", MalformedPacket, 0},
	{"v4 will QoS without will", V311, "10 0D " + c4 + " 0A 003C 0001'c'", "MQTT-3.1.2-13", MalformedPacket, 0},
	{"v5 will QoS without will", V5, "10 0E " + c5 + " 12 003C 00 0001'c'", "MQTT-3.1.2-11", MalformedPacket, 0},
	{"v4 will retain without will", V311, "10 0D " + c4 + " 22 003C 0001'c'", "MQTT-3.1.2-15", MalformedPacket, 0},
	{"v5 will retain without will", V5, "10 0E " + c5 + " 22 003C 00 0001'c'", "MQTT-3.1.2-13", MalformedPacket, 0},
	{"v4 will QoS 3", V311, "10 13 " + c4 + " 1E 003C 0001'c' 0001'w' 0001'x'", "MQTT-3.1.2-14", MalformedPacket, 0},
	{"v5 will QoS 3", V5, "10 15 " + c5 + " 1E 003C 00 0001'c' 00 0001'w' 0001'x'", "MQTT-3.1.2-12", MalformedPacket, 0},
	{"v4 will flag without will topic", V311, "10 0D " + c4 + " 06 003C 0001'c'", "§2.2.3", MalformedPacket, 0},
	{"v4 will topic wildcard", V311, "10 13 " + c4 + " 06 003C 0001'c' 0001'#' 0001'x'", "MQTT-3.3.2-2", TopicNameInvalid, 0},
	{"v4 password without user name", V311, "10 10 " + c4 + " 42 003C 0001'c' 0001'p'", "MQTT-3.1.2-22", MalformedPacket, 0},
	{"v4 user name flag without user name", V311, "10 0D " + c4 + " 82 003C 0001'c'", "§2.2.3", MalformedPacket, 0},
	{"v4 client id invalid UTF-8", V311, "10 0D " + c4 + " 02 003C 0001 FF", "MQTT-1.5.3-1", MalformedPacket, 0},
	{"v4 client id U+0000", V311, "10 0D " + c4 + " 02 003C 0001 00", "MQTT-1.5.3-2", MalformedPacket, 0},
	{"v5 client id surrogate", V5, "10 10 " + c5 + " 02 003C 00 0003 EDA080", "MQTT-1.5.4-1", MalformedPacket, 0},
	{"v5 client id U+0000", V5, "10 0E " + c5 + " 02 003C 00 0001 00", "MQTT-1.5.4-2", MalformedPacket, 0},
	{"v4 user name U+0000", V311, "10 10 " + c4 + " 82 003C 0001'c' 0001 00", "MQTT-1.5.3-2", MalformedPacket, 0},
	{"v4 CONNECT trailing byte", V311, "10 0E " + c4 + " 02 003C 0001'c' 00", "§2.2.3", MalformedPacket, 0},
	{"v5 Receive Maximum 0", V5, "10 11 " + c5 + " 02 003C 03 21 0000 0001'c'", "§3.1.2.11.3", ProtocolError, 0},
	{"v5 Maximum Packet Size 0", V5, "10 13 " + c5 + " 02 003C 05 27 00000000 0001'c'", "§3.1.2.11.4", ProtocolError, 0},
	{"v5 Request Problem Information 2", V5, "10 10 " + c5 + " 02 003C 02 17 02 0001'c'", "§3.1.2.11.7", ProtocolError, 0},
	{"v5 Authentication Data without Method", V5, "10 12 " + c5 + " 02 003C 04 16 0001'd' 0001'c'", "§3.1.2.11.10", ProtocolError, 0},
	{"v5 Session Expiry twice", V5, "10 18 " + c5 + " 02 003C 0A 11 00000001 11 00000002 0001'c'", "§2.2.2.2", ProtocolError, 0},
	{"v5 Topic Alias in CONNECT", V5, "10 11 " + c5 + " 02 003C 03 23 0001 0001'c'", "§2.2.2.2", MalformedPacket, 0},
	{"v5 Will Delay in CONNECT", V5, "10 13 " + c5 + " 02 003C 05 18 00000001 0001'c'", "§2.2.2.2", MalformedPacket, 0},
	{"v5 Session Expiry in Will", V5, "10 1A " + c5 + " 06 003C 00 0001'c' 05 11 00000001 0001'w' 0001'x'", "§2.2.2.2", MalformedPacket, 0},
	{"v5 unknown property", V5, "10 10 " + c5 + " 02 003C 02 05 00 0001'c'", "§2.2.2.2", MalformedPacket, 0},
	{"v5 user property invalid UTF-8", V5, "10 15 " + c5 + " 02 003C 07 26 0001 FF 0001'v' 0001'c'", "MQTT-1.5.4-1", MalformedPacket, 0},

	// CONNACK.
	{"v4 CONNACK reserved flags", V311, "20 02 02 00", "§3.2.2.1", MalformedPacket, 0},
	{"v5 CONNACK reserved flags", V5, "20 03 02 00 00", "MQTT-3.2.2-1", MalformedPacket, 0},
	{"v4 CONNACK return code 6", V311, "20 02 00 06", "§3.2.2.3", ProtocolError, 0},
	{"v4 CONNACK session present with error", V311, "20 02 01 05", "MQTT-3.2.2-4", ProtocolError, 0},
	{"v5 CONNACK session present with error", V5, "20 03 01 80 00", "MQTT-3.2.2-6", ProtocolError, 0},
	{"v5 CONNACK reason 0x10", V5, "20 03 00 10 00", "MQTT-3.2.2-8", ProtocolError, 0},
	{"v4 CONNACK remaining length 3", V311, "20 03 00 00 00", "§3.2.1", MalformedPacket, 0},
	{"v5 CONNACK Maximum QoS 2", V5, "20 05 00 00 02 24 02", "§3.2.2.3.4", ProtocolError, 0},
	{"v5 CONNACK Retain Available 2", V5, "20 05 00 00 02 25 02", "§3.2.2.3.5", ProtocolError, 0},
	{"v5 CONNACK Receive Maximum 0", V5, "20 06 00 00 03 21 0000", "§3.2.2.3.3", ProtocolError, 0},
	{"v5 CONNACK Maximum Packet Size 0", V5, "20 08 00 00 05 27 00000000", "§3.2.2.3.6", ProtocolError, 0},
	{"v5 CONNACK Authentication Data without Method", V5, "20 07 00 00 04 16 0001'd'", "§3.2.2.3.18", ProtocolError, 0},
	{"v5 CONNACK Will Delay", V5, "20 08 00 00 05 18 00000001", "§2.2.2.2", MalformedPacket, 0},

	// PUBLISH.
	{"v4 PUBLISH QoS 3", V311, "36 05 0001't' 0001", "MQTT-3.3.1-4", MalformedPacket, 0},
	{"v5 PUBLISH QoS 3", V5, "36 06 0001't' 0001 00", "MQTT-3.3.1-4", MalformedPacket, 0},
	{"v4 PUBLISH DUP on QoS 0", V311, "38 03 0001't'", "MQTT-3.3.1-2", MalformedPacket, 0},
	{"v4 PUBLISH topic #", V311, "30 03 0001'#'", "MQTT-3.3.2-2", TopicNameInvalid, 0},
	{"v5 PUBLISH topic a/+", V5, "30 06 0003'a/+' 00", "MQTT-3.3.2-2", TopicNameInvalid, 0},
	{"v4 PUBLISH empty topic", V311, "30 02 0000", "MQTT-4.7.3-1", ProtocolError, 0},
	{"v5 PUBLISH empty topic without alias", V5, "30 03 0000 00", "MQTT-4.7.3-1", ProtocolError, 0},
	{"v4 PUBLISH topic invalid UTF-8", V311, "30 03 0001 C0", "MQTT-1.5.3-1", MalformedPacket, 0},
	{"v5 PUBLISH topic U+0000", V5, "30 04 0001 00 00", "MQTT-1.5.4-2", MalformedPacket, 0},
	{"v4 PUBLISH packet id 0", V311, "32 05 0001't' 0000", "MQTT-2.3.1-1", ProtocolError, 0},
	{"v5 PUBLISH packet id 0", V5, "34 06 0001't' 0000 00", "MQTT-2.2.1-3", ProtocolError, 0},
	{"v5 PUBLISH Topic Alias 0", V5, "30 07 0001't' 03 23 0000", "MQTT-3.3.2-8", TopicAliasInvalid, 0},
	{"v5 PUBLISH Payload Format 2", V5, "30 06 0001't' 02 01 02", "§3.3.2.3.2", ProtocolError, 0},
	{"v5 PUBLISH Payload Format twice", V5, "30 08 0001't' 04 01 00 01 00", "§2.2.2.2", ProtocolError, 0},
	{"v5 PUBLISH Session Expiry", V5, "30 09 0001't' 05 11 00000001", "§2.2.2.2", MalformedPacket, 0},
	{"v5 PUBLISH Subscription Identifier 0", V5, "30 06 0001't' 02 0B 00", "§3.3.2.3.8", ProtocolError, 0},
	{"v5 PUBLISH Response Topic wildcard", V5, "30 09 0001't' 05 08 0002'a#'", "MQTT-3.3.2-14", TopicNameInvalid, 0},
	{"v5 PUBLISH Content Type invalid UTF-8", V5, "30 08 0001't' 04 03 0001 FF", "MQTT-1.5.4-1", MalformedPacket, 0},
	{"v5 PUBLISH properties past the data", V5, "30 04 0001't' 05", "§2.1.4", MalformedPacket, 0},
	{"v5 PUBLISH property value past the data", V5, "30 06 0001't' 02 02 00", "§2.1.4", MalformedPacket, 0},
	{"v5 PUBLISH property length not shortest", V5, "30 05 0001't' 80 00", "MQTT-1.5.5-1", MalformedPacket, 0},

	// PUBACK, PUBREC, PUBREL, PUBCOMP.
	{"v4 PUBACK trailing byte", V311, "40 03 0001 00", "§3.4.1", MalformedPacket, 0},
	{"v4 PUBREL trailing byte", V311, "62 03 0001 00", "§3.6.1", MalformedPacket, 0},
	{"v4 PUBACK packet id 0", V311, "40 02 0000", "MQTT-2.3.1-6", ProtocolError, 0},
	{"v4 PUBCOMP packet id 0", V311, "70 02 0000", "§2.3.1", ProtocolError, 0},
	{"v5 PUBACK packet id 0", V5, "40 02 0000", "MQTT-2.2.1-5", ProtocolError, 0},
	{"v5 PUBCOMP packet id 0", V5, "70 02 0000", "MQTT-2.2.1-5", ProtocolError, 0},
	{"v4 PUBREC too short", V311, "50 01 00", "§3.5.1", MalformedPacket, 0},
	{"v5 PUBACK reason 0x92", V5, "40 03 0001 92", "MQTT-3.4.2-1", ProtocolError, 0},
	{"v5 PUBREC reason 0x04", V5, "50 03 0001 04", "MQTT-3.5.2-1", ProtocolError, 0},
	{"v5 PUBREL reason 0x10", V5, "62 03 0001 10", "MQTT-3.6.2-1", ProtocolError, 0},
	{"v5 PUBCOMP reason 0x80", V5, "70 03 0001 80", "MQTT-3.7.2-1", ProtocolError, 0},
	{"v5 PUBACK Payload Format property", V5, "40 06 0001 00 02 01 01", "§2.2.2.2", MalformedPacket, 0},
	{"v5 PUBACK Reason String twice", V5, "40 0C 0001 80 08 1F 0001'a' 1F 0001'b'", "§2.2.2.2", ProtocolError, 0},
	{"v5 PUBACK trailing after properties", V5, "40 05 0001 00 00 00", "§2.1.4", MalformedPacket, 0},

	// SUBSCRIBE.
	{"v4 SUBSCRIBE no filters", V311, "82 02 0001", "MQTT-3.8.3-3", ProtocolError, 0},
	{"v5 SUBSCRIBE no filters", V5, "82 03 0001 00", "MQTT-3.8.3-2", ProtocolError, 0},
	{"v4 SUBSCRIBE packet id 0", V311, "82 06 0000 0001'a' 00", "MQTT-2.3.1-1", ProtocolError, 0},
	{"v4 SUBSCRIBE reserved option bits", V311, "82 06 0001 0001'a' 04", "MQTT-3.8.3-4", MalformedPacket, 0},
	{"v4 SUBSCRIBE QoS 3", V311, "82 06 0001 0001'a' 03", "MQTT-3.8.3-4", MalformedPacket, 0},
	{"v5 SUBSCRIBE reserved option bits", V5, "82 07 0001 00 0001'a' 40", "MQTT-3.8.3-5", MalformedPacket, 0},
	{"v5 SUBSCRIBE QoS 3", V5, "82 07 0001 00 0001'a' 03", "§3.8.3.1", ProtocolError, 0},
	{"v5 SUBSCRIBE Retain Handling 3", V5, "82 07 0001 00 0001'a' 30", "§3.8.3.1", ProtocolError, 0},
	{"v5 SUBSCRIBE No Local on shared", V5, "82 10 0001 00 000A'$share/g/a' 04", "MQTT-3.8.3-4", ProtocolError, 0},
	{"v5 SUBSCRIBE empty ShareName", V5, "82 0F 0001 00 0009'$share//a' 00", "MQTT-4.8.2-1", TopicFilterInvalid, 0},
	{"v5 SUBSCRIBE ShareName with +", V5, "82 10 0001 00 000A'$share/+/a' 00", "MQTT-4.8.2-2", TopicFilterInvalid, 0},
	{"v5 SUBSCRIBE shared without filter", V5, "82 0E 0001 00 0008'$share/g' 00", "MQTT-4.8.2-2", TopicFilterInvalid, 0},
	{"v4 SUBSCRIBE # not last", V311, "82 0A 0001 0005'a/#/b' 00", "MQTT-4.7.1-2", TopicFilterInvalid, 0},
	{"v4 SUBSCRIBE # not a whole level", V311, "82 07 0001 0002'a#' 00", "MQTT-4.7.1-2", TopicFilterInvalid, 0},
	{"v5 SUBSCRIBE + not a whole level", V5, "82 08 0001 00 0002'a+' 00", "MQTT-4.7.1-2", TopicFilterInvalid, 0},
	{"v4 SUBSCRIBE + not a whole level", V311, "82 08 0001 0003'+a/' 00", "MQTT-4.7.1-3", TopicFilterInvalid, 0},
	{"v4 SUBSCRIBE empty filter", V311, "82 05 0001 0000 00", "MQTT-4.7.3-1", TopicFilterInvalid, 0},
	{"v4 SUBSCRIBE filter invalid UTF-8", V311, "82 06 0001 0001 FF 00", "MQTT-1.5.3-1", MalformedPacket, 0},
	{"v4 SUBSCRIBE missing options", V311, "82 05 0001 0001'a'", "§2.2.3", MalformedPacket, 0},
	{"v5 SUBSCRIBE two Subscription Identifiers", V5, "82 0B 0001 04 0B 01 0B 02 0001'a' 00", "§3.8.2.1.2", ProtocolError, 0},
	{"v5 SUBSCRIBE Subscription Identifier 0", V5, "82 09 0001 02 0B 00 0001'a' 00", "§3.8.2.1.2", ProtocolError, 0},
	{"v5 SUBSCRIBE Reason String", V5, "82 0B 0001 04 1F 0001'x' 0001'a' 00", "§2.2.2.2", MalformedPacket, 0},

	// SUBACK, UNSUBSCRIBE, UNSUBACK.
	{"v4 SUBACK return code 3", V311, "90 03 0001 03", "MQTT-3.9.3-2", ProtocolError, 0},
	{"v5 SUBACK reason 0x10", V5, "90 04 0001 00 10", "MQTT-3.9.3-2", ProtocolError, 0},
	{"v4 SUBACK no return codes", V311, "90 02 0001", "MQTT-3.8.4-5", ProtocolError, 0},
	{"v5 SUBACK no reason codes", V5, "90 03 0001 00", "MQTT-3.8.4-6", ProtocolError, 0},
	{"v4 SUBACK packet id 0", V311, "90 03 0000 00", "MQTT-2.3.1-7", ProtocolError, 0},
	{"v5 SUBACK packet id 0", V5, "90 04 0000 00 00", "MQTT-2.2.1-6", ProtocolError, 0},
	{"v4 UNSUBACK packet id 0", V311, "B0 02 0000", "MQTT-2.3.1-7", ProtocolError, 0},
	{"v4 UNSUBSCRIBE no filters", V311, "A2 02 0001", "MQTT-3.10.3-2", ProtocolError, 0},
	{"v5 UNSUBSCRIBE no filters", V5, "A2 03 0001 00", "MQTT-3.10.3-2", ProtocolError, 0},
	{"v4 UNSUBSCRIBE # not last", V311, "A2 07 0001 0003'#/a'", "MQTT-4.7.1-2", TopicFilterInvalid, 0},
	{"v4 UNSUBSCRIBE filter U+0000", V311, "A2 05 0001 0001 00", "MQTT-1.5.3-2", MalformedPacket, 0},
	{"v5 UNSUBSCRIBE Subscription Identifier", V5, "A2 08 0001 02 0B 01 0001'a'", "§2.2.2.2", MalformedPacket, 0},
	{"v4 UNSUBACK trailing byte", V311, "B0 03 0001 00", "§3.11.1", MalformedPacket, 0},
	{"v5 UNSUBACK no reason codes", V5, "B0 03 0001 00", "§3.11.3", ProtocolError, 0},
	{"v5 UNSUBACK reason 0x92", V5, "B0 04 0001 00 92", "MQTT-3.11.3-2", ProtocolError, 0},

	// PINGREQ, PINGRESP, DISCONNECT, AUTH.
	{"v4 PINGREQ trailing byte", V311, "C0 01 00", "§3.12.1", MalformedPacket, 0},
	{"v5 PINGRESP trailing byte", V5, "D0 01 00", "§3.13.1", MalformedPacket, 0},
	{"v4 DISCONNECT trailing byte", V311, "E0 01 00", "§3.14.1", MalformedPacket, 0},
	{"v5 DISCONNECT reason 0x92", V5, "E0 01 92", "MQTT-3.14.2-1", ProtocolError, 0},
	{"v5 DISCONNECT Topic Alias", V5, "E0 05 00 03 23 0001", "§2.2.2.2", MalformedPacket, 0},
	{"v5 AUTH reason 0x01", V5, "F0 02 01 00", "MQTT-3.15.2-1", ProtocolError, 0},
	{"v5 AUTH without Authentication Method", V5, "F0 02 18 00", "§3.15.2.2.2", ProtocolError, 0},
	{"v5 AUTH without property length", V5, "F0 01 18", "§2.1.4", MalformedPacket, 0},
	{"v5 AUTH Authentication Data without Method", V5, "F0 06 18 04 16 0001'd'", "§3.15.2.2.2", ProtocolError, 0},
}

func TestRefusals(t *testing.T) {
	for _, tc := range refusals {
		_, _, err := Decode(tc.v, h(t, tc.wire), tc.max)
		checkErr(t, tc.name, err, tc.rule, tc.reason)
		// The stream decoder refuses it the same way, and keeps refusing.
		d := NewDecoder(tc.v, tc.max)
		d.Feed(h(t, tc.wire))
		_, err = d.Next()
		checkErr(t, tc.name+" (stream)", err, tc.rule, tc.reason)
		d.Feed(h(t, "C0 00"))
		if _, err2 := d.Next(); err2 != err {
			t.Errorf("%s: after an error Next returned %v", tc.name, err2)
		}
	}
}

// TestTooLargeBySide: an oversized packet names the rule of its sender's
// side. A decoder that starts with the version unknown reads a Client's
// stream: a v5 Client's packet over the limit breaks [MQTT-3.2.2-15], its
// CONNECT (sent before any limit was announced) only the receiver's own
// limit (§2.2.3); a decoder that starts knowing v5 reads a Server's, whose
// oversized packet breaks [MQTT-3.1.2-24] (TestRefusals).
func TestTooLargeBySide(t *testing.T) {
	connect := "10 0E " + c5 + " 02 003C 00 0001'c'"
	d := NewDecoder(0, 20)
	d.Feed(h(t, connect+" 30 14 0001't' 00 "+strings.Repeat("78", 16)))
	if _, err := d.Next(); err != nil {
		t.Fatalf("CONNECT: %v", err)
	}
	_, err := d.Next()
	checkErr(t, "v5 Client's PUBLISH over the limit", err, "MQTT-3.2.2-15", PacketTooLarge)
	d.Reset(0, 10)
	d.Feed(h(t, connect))
	_, err = d.Next()
	checkErr(t, "CONNECT over the limit", err, "§2.2.3", PacketTooLarge)
}

// checkErr asserts err is an *Error naming rule, with reason, unwrapping to
// the matching sentinel.
func checkErr(t *testing.T, name string, err error, rule string, reason ReasonCode) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want an *Error", name, err)
		return
	}
	if e.Rule != rule || !strings.HasPrefix(err.Error(), "["+rule+"] ") {
		t.Errorf("%s: %q names rule %s, want %s", name, err, e.Rule, rule)
	}
	if e.Reason != reason {
		t.Errorf("%s: %q has reason %#x (%v), want %#x", name, err, byte(e.Reason), e.Reason, byte(reason))
	}
	want := ErrProtocol
	switch reason {
	case MalformedPacket:
		want = ErrMalformed
	case PacketTooLarge:
		want = ErrTooLarge
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: %q does not unwrap to %v", name, err, want)
	}
}

// encodeRefusal is a packet Append must refuse.
type encodeRefusal struct {
	name   string
	v      Version
	p      Packet
	rule   string
	reason ReasonCode
}

var encodeRefusals = []encodeRefusal{
	{"version 3", 3, &Pingreq{}, "MQTT-3.1.2-2", UnsupportedProtocolVersion},
	{"nil packet", V5, nil, "§2.1.2", ProtocolError},
	{"nil *Publish", V5, (*Publish)(nil), "§2.1.2", ProtocolError},
	{"nil *Connect", V311, (*Connect)(nil), "§2.1.2", ProtocolError},
	{"PUBLISH QoS 3", V311, &Publish{QoS: 3, Topic: b("t"), PacketID: 1}, "MQTT-3.3.1-4", MalformedPacket},
	{"PUBLISH DUP on QoS 0", V5, &Publish{Dup: true, Topic: b("t")}, "MQTT-3.3.1-2", MalformedPacket},
	{"PUBLISH wildcard", V311, &Publish{Topic: b("a/#")}, "MQTT-3.3.2-2", TopicNameInvalid},
	{"PUBLISH empty topic", V5, &Publish{}, "MQTT-4.7.3-1", ProtocolError},
	{"PUBLISH packet id 0", V311, &Publish{QoS: 1, Topic: b("t")}, "MQTT-2.3.1-1", ProtocolError},
	{"v5 PUBLISH packet id 0", V5, &Publish{QoS: 2, Topic: b("t")}, "MQTT-2.2.1-3", ProtocolError},
	{"PUBLISH QoS 0 with packet id", V311, &Publish{Topic: b("t"), PacketID: 3}, "MQTT-2.3.1-5", ProtocolError},
	{"PUBLISH topic too long", V311, &Publish{Topic: make([]byte, 65536)}, "MQTT-4.7.3-3", MalformedPacket},
	{"v4 CONNECT client id too long", V311, &Connect{ClientID: strings.Repeat("c", 65536)}, "§1.5.3", MalformedPacket},
	{"v5 CONNECT client id too long", V5, &Connect{ClientID: strings.Repeat("c", 65536)}, "§1.5.4", MalformedPacket},
	{"SUBSCRIBE filter too long", V5, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: strings.Repeat("c", 65536)}}}, "MQTT-4.7.3-3", MalformedPacket},
	{"PUBLISH invalid UTF-8", V311, &Publish{Topic: []byte{0xFF}}, "MQTT-1.5.3-1", MalformedPacket},
	{"v4 PUBLISH with properties", V311, &Publish{Topic: b("t"), Props: Properties{User: []UserProperty{{"a", "b"}}}}, "§2.2.2.2", ProtocolError},
	{"v4 PUBLISH with stray property value", V311, &Publish{Topic: b("t"), Props: Properties{ContentType: "x"}}, "§2.2.2.2", ProtocolError},
	{"v5 PUBLISH property not allowed", V5, &Publish{Topic: b("t"), Props: Properties{Present: props(PropSessionExpiry)}}, "§2.2.2.2", MalformedPacket},
	{"v5 PUBLISH value without Present bit", V5, &Publish{Topic: b("t"), Props: Properties{ContentType: "x"}}, "§2.2.2.2", ProtocolError},
	{"v5 PUBLISH list bit in Present", V5, &Publish{Topic: b("t"), Props: Properties{Present: props(PropUserProperty)}}, "§2.2.2.2", ProtocolError},
	{"v5 PUBLISH Topic Alias 0", V5, &Publish{Topic: b("t"), Props: Properties{Present: props(PropTopicAlias)}}, "MQTT-3.3.2-8", TopicAliasInvalid},
	{"v5 PUBLISH Payload Format 2", V5, &Publish{Topic: b("t"), Props: Properties{Present: props(PropPayloadFormat), PayloadFormat: 2}}, "§3.3.2.3.2", ProtocolError},
	{"v5 SUBSCRIBE Subscription Identifier 0", V5, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a"}}, Props: Properties{SubscriptionIDs: []uint32{0}}}, "§3.8.2.1.2", ProtocolError},
	{"v5 SUBSCRIBE two Subscription Identifiers", V5, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a"}}, Props: Properties{SubscriptionIDs: []uint32{1, 2}}}, "§3.8.2.1.2", ProtocolError},
	{"CONNECT version mismatch", V311, &Connect{Version: V5, ClientID: "c"}, "MQTT-3.1.2-2", UnsupportedProtocolVersion},
	{"v4 CONNECT password without user name", V311, &Connect{ClientID: "c", HasPassword: true}, "MQTT-3.1.2-22", MalformedPacket},
	{"CONNECT user name without flag", V5, &Connect{ClientID: "c", Username: "u"}, "MQTT-3.1.2-16", MalformedPacket},
	{"CONNECT password without flag", V311, &Connect{ClientID: "c", Password: b("p")}, "MQTT-3.1.2-20", MalformedPacket},
	{"v4 CONNECT will QoS 3", V311, &Connect{ClientID: "c", Will: &Will{QoS: 3, Topic: "w"}}, "MQTT-3.1.2-14", MalformedPacket},
	{"v5 CONNECT will QoS 3", V5, &Connect{ClientID: "c", Will: &Will{QoS: 3, Topic: "w"}}, "MQTT-3.1.2-12", MalformedPacket},
	{"CONNECT client id U+0000", V5, &Connect{ClientID: "\x00"}, "MQTT-1.5.4-2", MalformedPacket},
	{"v5 CONNECT Receive Maximum 0", V5, &Connect{Props: Properties{Present: props(PropReceiveMaximum)}}, "§3.1.2.11.3", ProtocolError},
	{"v5 CONNECT Authentication Data without Method", V5, &Connect{Props: Properties{Present: props(PropAuthData)}}, "§3.1.2.11.10", ProtocolError},
	{"CONNACK code 6", V311, &Connack{Reason: 6}, "§3.2.2.3", ProtocolError},
	{"CONNACK session present with error", V5, &Connack{SessionPresent: true, Reason: NotAuthorized}, "MQTT-3.2.2-6", ProtocolError},
	{"v5 CONNACK Maximum QoS 2", V5, &Connack{Props: Properties{Present: props(PropMaximumQoS), MaximumQoS: 2}}, "§3.2.2.3.4", ProtocolError},
	{"v4 PUBACK with reason", V311, &Puback{PacketID: 1, Reason: NotAuthorized}, "§3.4", ProtocolError},
	{"v5 PUBREL reason 0x80", V5, &Pubrel{PacketID: 1, Reason: UnspecifiedError}, "MQTT-3.6.2-1", ProtocolError},
	{"PUBCOMP packet id 0", V311, &Pubcomp{}, "§2.3.1", ProtocolError},
	{"v5 PUBCOMP packet id 0", V5, &Pubcomp{}, "MQTT-2.2.1-5", ProtocolError},
	{"SUBSCRIBE empty", V311, &Subscribe{PacketID: 1}, "MQTT-3.8.3-3", ProtocolError},
	{"v4 SUBSCRIBE No Local", V311, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a", NoLocal: true}}}, "MQTT-3.8.3-4", MalformedPacket},
	{"v5 SUBSCRIBE No Local shared", V5, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "$share/g/a", NoLocal: true}}}, "MQTT-3.8.3-4", ProtocolError},
	{"v5 SUBSCRIBE Retain Handling 3", V5, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a", RetainHandling: 3}}}, "§3.8.3.1", ProtocolError},
	{"SUBSCRIBE bad filter", V5, &Subscribe{PacketID: 1, Subs: []Subscription{{Filter: "a/#/b"}}}, "MQTT-4.7.1-1", TopicFilterInvalid},
	{"v4 SUBACK code 0x87", V311, &Suback{PacketID: 1, Reasons: []ReasonCode{NotAuthorized}}, "MQTT-3.9.3-2", ProtocolError},
	{"v5 SUBACK empty", V5, &Suback{PacketID: 1}, "MQTT-3.8.4-6", ProtocolError},
	{"UNSUBSCRIBE empty", V5, &Unsubscribe{PacketID: 1}, "MQTT-3.10.3-2", ProtocolError},
	{"v4 UNSUBACK with reasons", V311, &Unsuback{PacketID: 1, Reasons: []ReasonCode{Success}}, "§3.11.3", ProtocolError},
	{"v4 DISCONNECT with reason", V311, &Disconnect{Reason: DisconnectWithWill}, "§3.14", ProtocolError},
	{"v5 DISCONNECT reason 0x92", V5, &Disconnect{Reason: PacketIdentifierNotFound}, "MQTT-3.14.2-1", ProtocolError},
	{"v4 AUTH", V311, &Auth{}, "§2.2.1", MalformedPacket},
	{"v5 AUTH without method", V5, &Auth{Reason: ReAuthenticate}, "§3.15.2.2.2", ProtocolError},
}

func TestEncodeRefusals(t *testing.T) {
	for _, tc := range encodeRefusals {
		dst := []byte("keep")
		out, err := Append(dst, tc.v, tc.p)
		checkErr(t, tc.name, err, tc.rule, tc.reason)
		if string(out) != "keep" {
			t.Errorf("%s: Append changed dst to % x on error", tc.name, out)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{Rule: "MQTT-3.3.2-2", Reason: TopicNameInvalid, Msg: "wildcard in PUBLISH topic"}
	if e.Error() != "[MQTT-3.3.2-2] wildcard in PUBLISH topic" {
		t.Errorf("Error() = %q", e.Error())
	}
	if errors.Is(e, ErrMalformed) || !errors.Is(e, ErrProtocol) {
		t.Errorf("0x90 must unwrap to ErrProtocol only")
	}
}
