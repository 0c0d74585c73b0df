package packet

// checkAck enforces the rules of PUBACK, PUBREC, PUBREL and PUBCOMP visible
// in the decoded value.
func checkAck(v Version, t Type, id uint16, reason ReasonCode, props *Properties) error {
	if err := checkID(v, t, id); err != nil {
		return err
	}
	if err := checkReason(v, t, reason); err != nil {
		return err
	}
	if v == V5 && !props.isEmpty() { // checkProps has nothing to check in empty ones
		return checkProps(ctxAck, props)
	}
	return nil
}

// appendAck encodes PUBACK, PUBREC, PUBREL or PUBCOMP in the shortest form:
// v5 omits the reason code when it is Success and there are no properties,
// and the property length when there are none [5.0 §3.4.2.1].
func appendAck(dst []byte, v Version, t Type, id uint16, reason ReasonCode, props *Properties) ([]byte, error) {
	if err := checkPropsEncode(v, ctxAck, props); err != nil {
		return dst, err
	}
	if err := checkAck(v, t, id, reason, props); err != nil {
		return dst, err
	}
	flags := byte(0)
	if t == PUBREL {
		flags = 2 // [MQTT-3.6.1-1] PUBREL fixed header flags are 0010.
	}
	if v == V311 || (reason == Success && props.isEmpty()) {
		return appendU16(append(dst, byte(t)<<4|flags, 2), id), nil
	}
	if props.isEmpty() {
		return append(appendU16(append(dst, byte(t)<<4|flags, 3), id), byte(reason)), nil
	}
	pn := propsLen(props)
	dst, err := appendHeader(v, dst, t, flags, 3+vbiLen(pn)+pn)
	if err != nil {
		return dst, err
	}
	dst = append(appendU16(dst, id), byte(reason))
	return appendProps(dst, props, pn), nil
}

// decodeAck decodes PUBACK, PUBREC, PUBREL or PUBCOMP into a fresh value.
func decodeAck(v Version, t Type, body []byte) (Packet, error) {
	var a Puback
	if err := decodeAckInto(v, t, body, &a); err != nil {
		return nil, err
	}
	switch t {
	case PUBACK:
		p := a
		return &p, nil
	case PUBREC:
		p := Pubrec(a)
		return &p, nil
	case PUBREL:
		p := Pubrel(a)
		return &p, nil
	default:
		p := Pubcomp(a)
		return &p, nil
	}
}

// decodeAckInto decodes PUBACK, PUBREC, PUBREL or PUBCOMP (the four share
// one layout) into a, overwriting every field.
func decodeAckInto(v Version, t Type, body []byte, a *Puback) error {
	return decodeAckProps(v, t, body, a, true)
}

// decodeAckProps is decodeAckInto; resetProps false says a.Props is known
// to be zero already (propsClean), so its reset is skipped.
func decodeAckProps(v Version, t Type, body []byte, a *Puback, resetProps bool) error {
	a.PacketID, a.Reason = 0, 0 // field by field: see Properties.reset
	if resetProps {
		a.Props.reset()
	}
	if v == V311 {
		if err := fixedLen(v, t, body, 2); err != nil {
			return err
		}
	}
	r := reader{v: v, b: body}
	id, err := r.u16("Packet Identifier")
	if err != nil {
		return err
	}
	a.PacketID = id
	if r.left() > 0 { // 5.0 §3.4.2.1: Remaining Length 2 means Success without properties.
		c, _ := r.byte1("Reason Code")
		a.Reason = ReasonCode(c)
		if r.left() > 0 { // 5.0 §3.4.2.2.1: Remaining Length 3 means no properties.
			if err := decodeProps(&r, ctxAck, &a.Props); err != nil {
				return err
			}
			if err := trailing(&r, t); err != nil {
				return err
			}
		}
	}
	return checkAck(v, t, a.PacketID, a.Reason, &a.Props)
}
