package packet

import "strconv"

// PUBLISH fixed-header flags (3.1.1 and 5.0 §3.3.1).
const (
	pubDup    = 0x08
	pubQoS    = 0x06
	pubRetain = 0x01
)

// checkPublish enforces the PUBLISH rules visible in the decoded value; the
// encoder and the decoder share it.
func checkPublish(v Version, p *Publish) error {
	if err := checkPublishFlags(v, p); err != nil {
		return err
	}
	aliased := false
	if v == V5 && !p.Props.isEmpty() { // checkProps has nothing to check in empty ones
		if err := checkProps(ctxPublish, &p.Props); err != nil {
			return err
		}
		aliased = p.Props.Present.Has(PropTopicAlias)
	}
	// [MQTT-3.3.2-1] the Topic Name MUST be a UTF-8 string; [MQTT-3.3.2-2] no wildcards.
	return checkTopicName(v, p.Topic, aliased, "PUBLISH topic")
}

// checkPublishFlags enforces the PUBLISH rules on QoS, DUP and the Packet
// Identifier.
func checkPublishFlags(v Version, p *Publish) error {
	if p.QoS > 2 {
		// [MQTT-3.3.1-4] a PUBLISH MUST NOT have both QoS bits set to 1.
		return malformed("MQTT-3.3.1-4", "PUBLISH QoS is "+strconv.Itoa(int(p.QoS)))
	}
	if p.QoS == 0 {
		if p.Dup {
			// [MQTT-3.3.1-2] the DUP flag MUST be 0 for all QoS 0 messages.
			return malformed("MQTT-3.3.1-2", "DUP set on a QoS 0 PUBLISH")
		}
		if p.PacketID != 0 {
			// [MQTT-2.3.1-5] / v5 [MQTT-2.2.1-2]: a QoS 0 PUBLISH MUST NOT contain a Packet Identifier.
			return protocol(rule(v, "MQTT-2.3.1-5", "MQTT-2.2.1-2"), "packet identifier on a QoS 0 PUBLISH")
		}
	} else if err := checkID(v, PUBLISH, p.PacketID); err != nil {
		return err
	}
	return nil
}

// appendPublish encodes PUBLISH.
func appendPublish(dst []byte, v Version, p *Publish) ([]byte, error) {
	if err := checkTopicLen(len(p.Topic), "PUBLISH topic"); err != nil {
		return dst, err
	}
	if err := checkPropsEncode(v, ctxPublish, &p.Props); err != nil {
		return dst, err
	}
	if err := checkPublish(v, p); err != nil {
		return dst, err
	}
	return writePublish(dst, v, p)
}

// AppendPublishValid is Append for a PUBLISH whose Topic and Props are known
// to pass Append's checks: those of a PUBLISH (or a CONNECT's Will) that a
// Decoder returned, or a subset of its PUBLISH properties with a Message
// Expiry Interval added. It checks only the protocol version, the QoS, DUP
// and Packet Identifier rules and the lengths, sparing the topic and
// property checks a broker forwarding decoded messages would otherwise
// repeat per copy. When the promise holds it writes what Append writes
// (TestAppendPublishValid); when it does not, the bytes may not decode.
func AppendPublishValid(dst []byte, v Version, p *Publish) ([]byte, error) {
	if v != V311 && v != V5 {
		return Append(dst, v, p) // the refusal, as Append words it
	}
	if p == nil {
		return dst, protocol("§2.1.2", "nil packet")
	}
	if err := checkTopicLen(len(p.Topic), "PUBLISH topic"); err != nil {
		return dst, err
	}
	if err := checkPublishFlags(v, p); err != nil {
		return dst, err
	}
	return writePublish(dst, v, p)
}

// writePublish writes a checked PUBLISH.
func writePublish(dst []byte, v Version, p *Publish) ([]byte, error) {
	n := 2 + len(p.Topic) + len(p.Payload)
	if p.QoS > 0 {
		n += 2
	}
	pn, noProps := 0, p.Props.isEmpty()
	if v == V5 {
		if !noProps {
			pn = propsLen(&p.Props)
		}
		n += vbiLen(pn) + pn
	}
	flags := byte(p.QoS) << 1
	if p.Dup {
		flags |= pubDup
	}
	if p.Retain {
		flags |= pubRetain
	}
	if n < 0x80 {
		dst = append(dst, byte(PUBLISH)<<4|flags, byte(n)) // a one-byte Remaining Length
	} else {
		var err error
		if dst, err = appendHeader(v, dst, PUBLISH, flags, n); err != nil {
			return dst, err
		}
	}
	dst = appendBin(dst, p.Topic)
	if p.QoS > 0 {
		dst = appendU16(dst, p.PacketID)
	}
	if v == V5 {
		if noProps {
			dst = append(dst, 0) // Property Length 0
		} else {
			dst = appendProps(dst, &p.Props, pn)
		}
	}
	return append(dst, p.Payload...), nil
}

// decodePublish decodes a PUBLISH body into p, aliasing body.
func decodePublish(v Version, flags byte, body []byte, p *Publish) error {
	return decodePublishInto(v, flags, body, p, true)
}

// decodePublishInto is decodePublish; resetProps false says p.Props is
// known to be zero already (propsClean), so its reset is skipped.
func decodePublishInto(v Version, flags byte, body []byte, p *Publish, resetProps bool) error {
	// Field by field, not *p = Publish{...}: see Properties.reset.
	p.Dup, p.QoS, p.Retain, p.PacketID = flags&pubDup != 0, QoS(flags&pubQoS>>1), flags&pubRetain != 0, 0
	p.Topic, p.Payload = nil, nil
	if resetProps {
		p.Props.reset()
	}
	if p.QoS == 3 {
		// [MQTT-3.3.1-4] a PUBLISH MUST NOT have both QoS bits set to 1.
		return malformed("MQTT-3.3.1-4", "PUBLISH QoS is 3")
	}
	r := reader{v: v, b: body}
	var err error
	if p.Topic, err = r.bin("Topic Name"); err != nil {
		return err
	}
	if p.QoS > 0 {
		if p.PacketID, err = r.u16("Packet Identifier"); err != nil {
			return err
		}
	}
	if v == V5 {
		if err := decodeProps(&r, ctxPublish, &p.Props); err != nil {
			return err
		}
	}
	p.Payload = body[r.off:]
	return checkPublish(v, p)
}
