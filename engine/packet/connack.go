package packet

// checkConnack enforces the CONNACK rules visible in the decoded value.
func checkConnack(v Version, c *Connack) error {
	if err := checkReason(v, CONNACK, c.Reason); err != nil {
		return err
	}
	if c.SessionPresent && c.Reason != 0 {
		// [MQTT-3.2.2-4] / v5 [MQTT-3.2.2-6]: a non-zero code MUST come with Session Present 0.
		return protocol(rule(v, "MQTT-3.2.2-4", "MQTT-3.2.2-6"), "Session Present with a non-zero CONNACK code")
	}
	if v == V5 {
		return checkProps(ctxConnack, &c.Props)
	}
	return nil
}

// appendConnack encodes CONNACK.
func appendConnack(dst []byte, v Version, c *Connack) ([]byte, error) {
	if err := checkPropsEncode(v, ctxConnack, &c.Props); err != nil {
		return dst, err
	}
	if err := checkConnack(v, c); err != nil {
		return dst, err
	}
	n, pn := 2, 0
	if v == V5 {
		pn = propsLen(&c.Props)
		n += vbiLen(pn) + pn
	}
	dst, err := appendHeader(v, dst, CONNACK, 0, n)
	if err != nil {
		return dst, err
	}
	sp := byte(0)
	if c.SessionPresent {
		sp = 1
	}
	dst = append(dst, sp, byte(c.Reason))
	if v == V5 {
		dst = appendProps(dst, &c.Props, pn)
	}
	return dst, nil
}

// decodeConnack decodes CONNACK.
func decodeConnack(v Version, body []byte) (Packet, error) {
	if v == V311 {
		if err := fixedLen(v, CONNACK, body, 2); err != nil {
			return nil, err
		}
	}
	r := &reader{v: v, b: body}
	flags, err := r.byte1("Connect Acknowledge Flags")
	if err != nil {
		return nil, err
	}
	if flags&0xFE != 0 {
		// 3.1.1 §3.2.2.1 / v5 [MQTT-3.2.2-1]: bits 7-1 of the flags are reserved, 0.
		return nil, malformed(rule(v, "§3.2.2.1", "MQTT-3.2.2-1"), "CONNACK reserved flag bits set")
	}
	c := &Connack{SessionPresent: flags&1 != 0}
	code, err := r.byte1("Reason Code")
	if err != nil {
		return nil, err
	}
	c.Reason = ReasonCode(code)
	if v == V5 {
		if err := decodeProps(r, ctxConnack, &c.Props); err != nil {
			return nil, err
		}
		if err := trailing(r, CONNACK); err != nil {
			return nil, err
		}
	}
	return c, checkConnack(v, c)
}
