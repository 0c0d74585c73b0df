package packet

// Version is the MQTT protocol level carried in CONNECT.
type Version byte

// Protocol levels this codec speaks.
const (
	V311 Version = 4 // MQTT 3.1.1
	V5   Version = 5 // MQTT 5.0
)

// Type is the MQTT control packet type (the high nibble of the fixed header).
type Type byte

// The fifteen control packet types.
const (
	CONNECT     Type = 1
	CONNACK     Type = 2
	PUBLISH     Type = 3
	PUBACK      Type = 4
	PUBREC      Type = 5
	PUBREL      Type = 6
	PUBCOMP     Type = 7
	SUBSCRIBE   Type = 8
	SUBACK      Type = 9
	UNSUBSCRIBE Type = 10
	UNSUBACK    Type = 11
	PINGREQ     Type = 12
	PINGRESP    Type = 13
	DISCONNECT  Type = 14
	AUTH        Type = 15
)

// QoS is a quality-of-service level: 0, 1 or 2.
type QoS byte

// Packet is one decoded MQTT control packet. The concrete types are the
// pointer types of this package (*Connect, *Publish, ...).
type Packet interface {
	// Type reports the control packet type.
	Type() Type
}

// Connect is the CONNECT packet. Version is read from and written to the
// protocol level byte.
type Connect struct {
	Version     Version
	ClientID    string
	CleanStart  bool // CleanSession in 3.1.1
	KeepAlive   uint16
	HasUsername bool
	Username    string
	HasPassword bool
	Password    []byte
	Will        *Will // nil when the Will Flag is 0
	Props       Properties
}

// Will is the will message carried by CONNECT.
type Will struct {
	QoS     QoS
	Retain  bool
	Topic   string
	Payload []byte
	Props   Properties // v5 will properties
}

// Connack is the CONNACK packet. In 3.1.1 Reason holds the return code (0-5).
type Connack struct {
	SessionPresent bool
	Reason         ReasonCode
	Props          Properties
}

// Publish is the PUBLISH packet. After decoding, Topic and Payload (and the
// byte-slice properties) alias the decoder's input: they are valid only until
// the input buffer is reused. Copy them to keep them.
type Publish struct {
	Dup      bool
	QoS      QoS
	Retain   bool
	PacketID uint16 // zero for QoS 0
	Topic    []byte
	Props    Properties
	Payload  []byte
}

// Puback is the PUBACK packet (QoS 1 acknowledgement).
type Puback struct {
	PacketID uint16
	Reason   ReasonCode // v5 only; 0 in 3.1.1
	Props    Properties
}

// Pubrec is the PUBREC packet (QoS 2, part 1).
type Pubrec struct {
	PacketID uint16
	Reason   ReasonCode
	Props    Properties
}

// Pubrel is the PUBREL packet (QoS 2, part 2).
type Pubrel struct {
	PacketID uint16
	Reason   ReasonCode
	Props    Properties
}

// Pubcomp is the PUBCOMP packet (QoS 2, part 3).
type Pubcomp struct {
	PacketID uint16
	Reason   ReasonCode
	Props    Properties
}

// Subscription is one topic filter of a SUBSCRIBE with its options.
type Subscription struct {
	Filter            string
	QoS               QoS
	NoLocal           bool // v5
	RetainAsPublished bool // v5
	RetainHandling    byte // v5: 0, 1 or 2
}

// Subscribe is the SUBSCRIBE packet.
type Subscribe struct {
	PacketID uint16
	Subs     []Subscription
	Props    Properties
}

// Suback is the SUBACK packet. Reasons holds one code per subscription: the
// granted QoS (0-2) or a failure code (0x80 and up).
type Suback struct {
	PacketID uint16
	Reasons  []ReasonCode
	Props    Properties
}

// Unsubscribe is the UNSUBSCRIBE packet.
type Unsubscribe struct {
	PacketID uint16
	Filters  []string
	Props    Properties
}

// Unsuback is the UNSUBACK packet. Reasons is empty in 3.1.1.
type Unsuback struct {
	PacketID uint16
	Reasons  []ReasonCode
	Props    Properties
}

// Pingreq is the PINGREQ packet.
type Pingreq struct{}

// Pingresp is the PINGRESP packet.
type Pingresp struct{}

// Disconnect is the DISCONNECT packet. Reason and Props exist in v5 only.
type Disconnect struct {
	Reason ReasonCode
	Props  Properties
}

// Auth is the v5 AUTH packet.
type Auth struct {
	Reason ReasonCode
	Props  Properties
}

// Type implements Packet.
func (*Connect) Type() Type { return CONNECT }

// Type implements Packet.
func (*Connack) Type() Type { return CONNACK }

// Type implements Packet.
func (*Publish) Type() Type { return PUBLISH }

// Type implements Packet.
func (*Puback) Type() Type { return PUBACK }

// Type implements Packet.
func (*Pubrec) Type() Type { return PUBREC }

// Type implements Packet.
func (*Pubrel) Type() Type { return PUBREL }

// Type implements Packet.
func (*Pubcomp) Type() Type { return PUBCOMP }

// Type implements Packet.
func (*Subscribe) Type() Type { return SUBSCRIBE }

// Type implements Packet.
func (*Suback) Type() Type { return SUBACK }

// Type implements Packet.
func (*Unsubscribe) Type() Type { return UNSUBSCRIBE }

// Type implements Packet.
func (*Unsuback) Type() Type { return UNSUBACK }

// Type implements Packet.
func (*Pingreq) Type() Type { return PINGREQ }

// Type implements Packet.
func (*Pingresp) Type() Type { return PINGRESP }

// Type implements Packet.
func (*Disconnect) Type() Type { return DISCONNECT }

// Type implements Packet.
func (*Auth) Type() Type { return AUTH }
