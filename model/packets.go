package model

// MQTT control packet types as carried in Packet.Type.
const (
	CONNECT     uint8 = 1
	CONNACK     uint8 = 2
	PUBLISH     uint8 = 3
	PUBACK      uint8 = 4
	PUBREC      uint8 = 5
	PUBREL      uint8 = 6
	PUBCOMP     uint8 = 7
	SUBSCRIBE   uint8 = 8
	SUBACK      uint8 = 9
	UNSUBSCRIBE uint8 = 10
	UNSUBACK    uint8 = 11
	PINGREQ     uint8 = 12
	PINGRESP    uint8 = 13
	DISCONNECT  uint8 = 14
	AUTH        uint8 = 15
)

// BrokerNode is the node name of the broker in a history.
const BrokerNode = "broker"

// reasonFailure is the first v5 reason code that means failure (>= 0x80).
const reasonFailure = 0x80

// packetName returns the packet type's name, e.g. "PUBREL".
func packetName(t uint8) string {
	names := [...]string{"", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC",
		"PUBREL", "PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK",
		"PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}
	if int(t) < len(names) && t > 0 {
		return names[t]
	}
	return "UNKNOWN"
}
