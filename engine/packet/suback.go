package packet

// checkSuback enforces the SUBACK and UNSUBACK rules visible in the decoded
// value.
func checkSuback(v Version, t Type, id uint16, codes []ReasonCode, props *Properties) error {
	if err := checkID(v, t, id); err != nil {
		return err
	}
	if v == V5 {
		if err := checkProps(ctxOf(t), props); err != nil {
			return err
		}
	}
	if v == V311 && t == UNSUBACK {
		if len(codes) != 0 {
			// 3.1.1 §3.11.3: UNSUBACK has no payload.
			return protocol("§3.11.3", "reason codes in a 3.1.1 UNSUBACK")
		}
		return nil
	}
	if len(codes) == 0 {
		r5 := "MQTT-3.8.4-6"
		if t == UNSUBACK {
			r5 = "§3.11.3"
		}
		// [MQTT-3.8.4-5] / v5 [MQTT-3.8.4-6] one code per Topic Filter (5.0 §3.11.3 for UNSUBACK).
		return protocol(rule(v, "MQTT-3.8.4-5", r5), t.String()+" without reason codes")
	}
	for _, c := range codes {
		if err := checkReason(v, t, c); err != nil {
			return err
		}
	}
	return nil
}

func ctxOf(t Type) propCtx {
	if t == SUBACK {
		return ctxSuback
	}
	return ctxUnsuback
}

// appendSuback encodes SUBACK.
func appendSuback(dst []byte, v Version, p *Suback) ([]byte, error) {
	return appendCodes(dst, v, SUBACK, p.PacketID, p.Reasons, &p.Props)
}

// appendUnsuback encodes UNSUBACK.
func appendUnsuback(dst []byte, v Version, p *Unsuback) ([]byte, error) {
	return appendCodes(dst, v, UNSUBACK, p.PacketID, p.Reasons, &p.Props)
}

// appendCodes encodes SUBACK or UNSUBACK.
func appendCodes(dst []byte, v Version, t Type, id uint16, codes []ReasonCode, props *Properties) ([]byte, error) {
	if err := checkPropsEncode(v, ctxOf(t), props); err != nil {
		return dst, err
	}
	if err := checkSuback(v, t, id, codes, props); err != nil {
		return dst, err
	}
	n, pn := 2+len(codes), 0
	if v == V5 {
		pn = propsLen(props)
		n += vbiLen(pn) + pn
	}
	dst, err := appendHeader(v, dst, t, 0, n)
	if err != nil {
		return dst, err
	}
	dst = appendU16(dst, id)
	if v == V5 {
		dst = appendProps(dst, props, pn)
	}
	for _, c := range codes {
		dst = append(dst, byte(c))
	}
	return dst, nil
}

// decodeCodes decodes SUBACK or UNSUBACK.
func decodeCodes(v Version, t Type, body []byte) (id uint16, codes []ReasonCode, props Properties, err error) {
	if v == V311 && t == UNSUBACK {
		if err := fixedLen(v, t, body, 2); err != nil {
			return 0, nil, props, err
		}
	}
	r := &reader{v: v, b: body}
	if id, err = r.u16("Packet Identifier"); err != nil {
		return 0, nil, props, err
	}
	if v == V5 {
		if err := decodeProps(r, ctxOf(t), &props); err != nil {
			return 0, nil, props, err
		}
	}
	if r.left() > 0 {
		codes = make([]ReasonCode, r.left())
		for i, c := range body[r.off:] {
			codes[i] = ReasonCode(c)
		}
	}
	return id, codes, props, checkSuback(v, t, id, codes, &props)
}

// decodeSuback decodes SUBACK.
func decodeSuback(v Version, body []byte) (Packet, error) {
	id, codes, props, err := decodeCodes(v, SUBACK, body)
	if err != nil {
		return nil, err
	}
	return &Suback{PacketID: id, Reasons: codes, Props: props}, nil
}

// decodeUnsuback decodes UNSUBACK.
func decodeUnsuback(v Version, body []byte) (Packet, error) {
	id, codes, props, err := decodeCodes(v, UNSUBACK, body)
	if err != nil {
		return nil, err
	}
	return &Unsuback{PacketID: id, Reasons: codes, Props: props}, nil
}
