package packet

import "errors"

// Sentinel errors. Every *Error unwraps to exactly one of ErrMalformed,
// ErrProtocol or ErrTooLarge, chosen by its reason code, so callers can test
// the class with errors.Is and get the reason code with errors.As.
var (
	// ErrMalformed is the class of reason 0x81 Malformed Packet.
	ErrMalformed = errors.New("packet: malformed packet")
	// ErrProtocol is the class of reason 0x82 Protocol Error and of every
	// other refusal reason (0x84, 0x8F, 0x90, 0x94, ...).
	ErrProtocol = errors.New("packet: protocol error")
	// ErrTooLarge is the class of reason 0x95 Packet Too Large.
	ErrTooLarge = errors.New("packet: packet too large")
	// ErrIncomplete is returned by Decode and DecodePublish when the buffer
	// holds less than one whole packet. It is not an *Error: read more bytes.
	ErrIncomplete = errors.New("packet: incomplete packet")
)

// Error is a refusal by the codec: the packet breaks the rule named by Rule
// (a normative id such as "MQTT-3.3.2-2", or a section such as "§2.2.3" where
// the standard states the rule without an id). Reason is the v5 reason code
// the receiver answers with (in a CONNACK before the session, a DISCONNECT
// after it).
type Error struct {
	Rule   string
	Reason ReasonCode
	Msg    string
}

// Error formats the error as "[rule] message".
func (e *Error) Error() string { return "[" + e.Rule + "] " + e.Msg }

// Unwrap returns the sentinel of the error's class: ErrMalformed for 0x81,
// ErrTooLarge for 0x95, ErrProtocol for every other reason.
func (e *Error) Unwrap() error {
	switch e.Reason {
	case MalformedPacket:
		return ErrMalformed
	case PacketTooLarge:
		return ErrTooLarge
	default:
		return ErrProtocol
	}
}

// malformed returns a 0x81 Malformed Packet error.
func malformed(rule, msg string) error {
	return &Error{Rule: rule, Reason: MalformedPacket, Msg: msg}
}

// protocol returns a 0x82 Protocol Error.
func protocol(rule, msg string) error {
	return &Error{Rule: rule, Reason: ProtocolError, Msg: msg}
}

// refuse returns an error with an explicit reason code.
func refuse(rule string, reason ReasonCode, msg string) error {
	return &Error{Rule: rule, Reason: reason, Msg: msg}
}

// rule picks the rule id of the version: 3.1.1 and 5.0 number many of the same
// rules differently.
func rule(v Version, v311, v5 string) string {
	if v == V5 {
		return v5
	}
	return v311
}
