package packet

// checkDisconnect enforces the DISCONNECT rules visible in the decoded value.
func checkDisconnect(v Version, p *Disconnect) error {
	if err := checkReason(v, DISCONNECT, p.Reason); err != nil {
		return err
	}
	if v == V5 {
		return checkProps(ctxDisconnect, &p.Props)
	}
	return nil
}

// appendDisconnect encodes DISCONNECT in the shortest form (5.0 §3.14.2.1:
// Remaining Length 0 means Normal disconnection without properties).
func appendDisconnect(dst []byte, v Version, p *Disconnect) ([]byte, error) {
	if err := checkPropsEncode(v, ctxDisconnect, &p.Props); err != nil {
		return dst, err
	}
	if err := checkDisconnect(v, p); err != nil {
		return dst, err
	}
	return appendReasonProps(dst, DISCONNECT, p.Reason, &p.Props, true)
}

// appendReasonProps writes a packet made of an optional reason code and
// optional properties (DISCONNECT, AUTH). oneByte allows the one-byte form
// (reason without property length), which AUTH does not have.
func appendReasonProps(dst []byte, t Type, reason ReasonCode, props *Properties, oneByte bool) ([]byte, error) {
	empty := props.isEmpty()
	switch {
	case reason == 0 && empty:
		return append(dst, byte(t)<<4, 0), nil
	case empty && oneByte:
		return append(dst, byte(t)<<4, 1, byte(reason)), nil
	}
	pn := propsLen(props)
	dst, err := appendHeader(V5, dst, t, 0, 1+vbiLen(pn)+pn)
	if err != nil {
		return dst, err
	}
	return appendProps(append(dst, byte(reason)), props, pn), nil
}

// decodeDisconnect decodes DISCONNECT.
func decodeDisconnect(v Version, body []byte) (Packet, error) {
	p := &Disconnect{}
	if v == V311 {
		return p, fixedLen(v, DISCONNECT, body, 0)
	}
	r := &reader{v: v, b: body}
	if r.left() > 0 { // 5.0 §3.14.2.1: Remaining Length 0 means reason 0x00.
		c, _ := r.byte1("Reason Code")
		p.Reason = ReasonCode(c)
		if r.left() > 0 { // 5.0 §3.14.2.2.1: Remaining Length 1 means no properties.
			if err := decodeProps(r, ctxDisconnect, &p.Props); err != nil {
				return nil, err
			}
			if err := trailing(r, DISCONNECT); err != nil {
				return nil, err
			}
		}
	}
	return p, checkDisconnect(v, p)
}

// checkAuth enforces the AUTH rules visible in the decoded value.
func checkAuth(v Version, p *Auth) error {
	if err := checkV5Only(v, AUTH); err != nil {
		return err
	}
	if err := checkReason(v, AUTH, p.Reason); err != nil {
		return err
	}
	if p.Reason == Success && p.Props.isEmpty() {
		return nil // 5.0 §3.15.2.1: the short form, Remaining Length 0.
	}
	if !p.Props.Present.Has(PropAuthMethod) {
		// 5.0 §3.15.2.2.2: omitting the Authentication Method is a Protocol Error.
		return protocol("§3.15.2.2.2", "AUTH without Authentication Method")
	}
	return checkProps(ctxAuth, &p.Props)
}

// appendAuth encodes AUTH in the shortest form.
func appendAuth(dst []byte, v Version, p *Auth) ([]byte, error) {
	if err := checkV5Only(v, AUTH); err != nil {
		return dst, err
	}
	if err := checkPropsEncode(v, ctxAuth, &p.Props); err != nil {
		return dst, err
	}
	if err := checkAuth(v, p); err != nil {
		return dst, err
	}
	return appendReasonProps(dst, AUTH, p.Reason, &p.Props, false)
}

// decodeAuth decodes AUTH.
func decodeAuth(v Version, body []byte) (Packet, error) {
	p := &Auth{}
	r := &reader{v: v, b: body}
	if r.left() > 0 { // 5.0 §3.15.2.1: Remaining Length 0 means Success, no properties.
		c, _ := r.byte1("Reason Code")
		p.Reason = ReasonCode(c)
		if err := decodeProps(r, ctxAuth, &p.Props); err != nil {
			return nil, err
		}
		if err := trailing(r, AUTH); err != nil {
			return nil, err
		}
	}
	return p, checkAuth(v, p)
}
