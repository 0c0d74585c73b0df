package packet

import "strconv"

// reasonSet is a set of reason codes.
type reasonSet [4]uint64

func reasons(codes ...ReasonCode) reasonSet {
	var s reasonSet
	for _, c := range codes {
		s[c>>6] |= 1 << (c & 63)
	}
	return s
}

func (s *reasonSet) has(c ReasonCode) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// validReasons lists, per packet type, the v5 reason codes its table allows
// (5.0 §3.2.2.2, §3.4.2.1, §3.5.2.1, §3.6.2.1, §3.7.2.1, §3.9.3, §3.11.3,
// §3.14.2.1, §3.15.2.1).
var validReasons = [16]reasonSet{
	CONNACK: reasons(0x00, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8C,
		0x90, 0x95, 0x97, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9F),
	PUBACK:   reasons(0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99),
	PUBREC:   reasons(0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99),
	PUBREL:   reasons(0x00, 0x92),
	PUBCOMP:  reasons(0x00, 0x92),
	SUBACK:   reasons(0x00, 0x01, 0x02, 0x80, 0x83, 0x87, 0x8F, 0x91, 0x97, 0x9E, 0xA1, 0xA2),
	UNSUBACK: reasons(0x00, 0x11, 0x80, 0x83, 0x87, 0x8F, 0x91),
	DISCONNECT: reasons(0x00, 0x04, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8D, 0x8E, 0x8F,
		0x90, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2),
	AUTH: reasons(0x00, 0x18, 0x19),
}

// v311Reasons are the 3.1.1 codes: CONNACK return codes 0-5 (§3.2.2.3) and
// SUBACK return codes 0, 1, 2 and 0x80 ([MQTT-3.9.3-2]).
var v311Reasons = [16]reasonSet{
	CONNACK: reasons(0x00, 0x01, 0x02, 0x03, 0x04, 0x05),
	SUBACK:  reasons(0x00, 0x01, 0x02, 0x80),
}

// v5ReasonRule is, per packet type, the 5.0 statement that its sender MUST
// use one of the type's Reason Codes.
var v5ReasonRule = [16]string{
	CONNACK:    "MQTT-3.2.2-8",
	PUBACK:     "MQTT-3.4.2-1",
	PUBREC:     "MQTT-3.5.2-1",
	PUBREL:     "MQTT-3.6.2-1",
	PUBCOMP:    "MQTT-3.7.2-1",
	SUBACK:     "MQTT-3.9.3-2",
	UNSUBACK:   "MQTT-3.11.3-2",
	DISCONNECT: "MQTT-3.14.2-1",
	AUTH:       "MQTT-3.15.2-1",
}

// checkReason refuses a reason code the packet type does not define.
func checkReason(v Version, t Type, c ReasonCode) error {
	if v == V5 {
		if !validReasons[t].has(c) {
			// The sender MUST use one of the packet type's Reason Codes
			// (v5ReasonRule names the statement).
			return protocol(v5ReasonRule[t], "reason code 0x"+strconv.FormatUint(uint64(c), 16)+" is not valid in "+t.String())
		}
		return nil
	}
	if t == SUBACK && !v311Reasons[t].has(c) {
		// [MQTT-3.9.3-2] SUBACK return codes other than 0x00, 0x01, 0x02 and 0x80 are reserved.
		return protocol("MQTT-3.9.3-2", "SUBACK return code 0x"+strconv.FormatUint(uint64(c), 16)+" is reserved in 3.1.1")
	}
	if t == CONNACK && !v311Reasons[t].has(c) {
		// 3.1.1 §3.2.2.3: CONNACK return codes 6-255 are reserved.
		return protocol("§3.2.2.3", "CONNACK return code "+strconv.Itoa(int(c))+" is reserved in 3.1.1")
	}
	if t != SUBACK && t != CONNACK && c != 0 {
		// 3.1.1 has no reason codes on this packet.
		return protocol("§3."+strconv.Itoa(int(t)), t.String()+" has no reason code in 3.1.1")
	}
	return nil
}
