package packet

import "strconv"

// Subscription Options bits (3.1.1 §3.8.3.1, 5.0 §3.8.3.1).
const (
	optQoS      = 0x03
	optNoLocal  = 0x04
	optRAP      = 0x08
	optRetainHd = 0x30
)

// checkSubscription enforces the rules on one subscription of a SUBSCRIBE.
func checkSubscription(v Version, s *Subscription) error {
	if v == V311 {
		if s.QoS > 2 {
			// [MQTT-3.8.3-4] (3.1.1; printed "MQTT-3-8.3-4" in the standard) QoS other than 0, 1 or 2 makes the SUBSCRIBE malformed.
			return malformed("MQTT-3.8.3-4", "subscription QoS is "+strconv.Itoa(int(s.QoS)))
		}
		if s.NoLocal || s.RetainAsPublished || s.RetainHandling != 0 {
			// [MQTT-3.8.3-4] (3.1.1; printed "MQTT-3-8.3-4" in the standard) the upper six option bits are reserved in 3.1.1.
			return malformed("MQTT-3.8.3-4", "v5 subscription options in a 3.1.1 SUBSCRIBE")
		}
	} else {
		if s.QoS > 2 {
			// 5.0 §3.8.3.1: Maximum QoS 3 is a Protocol Error.
			return protocol("§3.8.3.1", "subscription Maximum QoS is "+strconv.Itoa(int(s.QoS)))
		}
		if s.RetainHandling > 2 {
			// 5.0 §3.8.3.1: Retain Handling 3 is a Protocol Error.
			return protocol("§3.8.3.1", "Retain Handling is "+strconv.Itoa(int(s.RetainHandling)))
		}
	}
	// [MQTT-3.8.3-1] the Topic Filter MUST be a UTF-8 string; wildcards: [MQTT-4.7.1-2]
	// [MQTT-4.7.1-3] / v5 [MQTT-4.7.1-1] [MQTT-4.7.1-2] (checkFilter).
	shared, err := checkFilter(v, s.Filter)
	if err != nil {
		return err
	}
	if shared && s.NoLocal {
		// [MQTT-3.8.3-4] No Local 1 on a Shared Subscription is a Protocol Error.
		return protocol("MQTT-3.8.3-4", "No Local on shared subscription "+strconv.Quote(s.Filter))
	}
	return nil
}

// checkSubscribe enforces the SUBSCRIBE rules visible in the decoded value.
func checkSubscribe(v Version, p *Subscribe) error {
	if err := checkID(v, SUBSCRIBE, p.PacketID); err != nil {
		return err
	}
	if v == V5 {
		if err := checkProps(ctxSubscribe, &p.Props); err != nil {
			return err
		}
	}
	if len(p.Subs) == 0 {
		// [MQTT-3.8.3-3] / v5 [MQTT-3.8.3-2]: at least one Topic Filter.
		return protocol(rule(v, "MQTT-3.8.3-3", "MQTT-3.8.3-2"), "SUBSCRIBE without topic filters")
	}
	for i := range p.Subs {
		if err := checkSubscription(v, &p.Subs[i]); err != nil {
			return err
		}
	}
	return nil
}

// subOptions packs the Subscription Options byte.
func subOptions(s *Subscription) byte {
	b := byte(s.QoS) | s.RetainHandling<<4
	if s.NoLocal {
		b |= optNoLocal
	}
	if s.RetainAsPublished {
		b |= optRAP
	}
	return b
}

// appendSubscribe encodes SUBSCRIBE.
func appendSubscribe(dst []byte, v Version, p *Subscribe) ([]byte, error) {
	if err := checkPropsEncode(v, ctxSubscribe, &p.Props); err != nil {
		return dst, err
	}
	if err := checkSubscribe(v, p); err != nil {
		return dst, err
	}
	n, pn := 2, 0
	if v == V5 {
		pn = propsLen(&p.Props)
		n += vbiLen(pn) + pn
	}
	for i := range p.Subs {
		if err := checkTopicLen(len(p.Subs[i].Filter), "topic filter"); err != nil {
			return dst, err
		}
		n += 3 + len(p.Subs[i].Filter)
	}
	dst, err := appendHeader(v, dst, SUBSCRIBE, 2, n) // [MQTT-3.8.1-1] flags 0010.
	if err != nil {
		return dst, err
	}
	dst = appendU16(dst, p.PacketID)
	if v == V5 {
		dst = appendProps(dst, &p.Props, pn)
	}
	for i := range p.Subs {
		dst = append(appendStr(dst, p.Subs[i].Filter), subOptions(&p.Subs[i]))
	}
	return dst, nil
}

// decodeSubscribe decodes SUBSCRIBE.
func decodeSubscribe(v Version, body []byte) (Packet, error) {
	r := &reader{v: v, b: body}
	p := &Subscribe{}
	var err error
	if p.PacketID, err = r.u16("Packet Identifier"); err != nil {
		return nil, err
	}
	if v == V5 {
		if err := decodeProps(r, ctxSubscribe, &p.Props); err != nil {
			return nil, err
		}
	}
	for r.left() > 0 {
		var s Subscription
		if s.Filter, err = r.str("Topic Filter"); err != nil {
			return nil, err
		}
		o, err := r.byte1("Subscription Options")
		if err != nil {
			return nil, err
		}
		if v == V311 && o&^optQoS != 0 {
			// [MQTT-3.8.3-4] (3.1.1; printed "MQTT-3-8.3-4" in the standard) reserved bits of the requested QoS byte MUST be 0.
			return nil, malformed("MQTT-3.8.3-4", "reserved subscription option bits set")
		}
		if o&0xC0 != 0 {
			// [MQTT-3.8.3-5] bits 6 and 7 of the Subscription Options are reserved.
			return nil, malformed("MQTT-3.8.3-5", "reserved subscription option bits set")
		}
		s.QoS, s.NoLocal, s.RetainAsPublished = QoS(o&optQoS), o&optNoLocal != 0, o&optRAP != 0
		s.RetainHandling = o & optRetainHd >> 4
		p.Subs = append(p.Subs, s)
	}
	return p, checkSubscribe(v, p)
}

// checkUnsubscribe enforces the UNSUBSCRIBE rules visible in the decoded value.
func checkUnsubscribe(v Version, p *Unsubscribe) error {
	if err := checkID(v, UNSUBSCRIBE, p.PacketID); err != nil {
		return err
	}
	if v == V5 {
		if err := checkProps(ctxUnsubscribe, &p.Props); err != nil {
			return err
		}
	}
	if len(p.Filters) == 0 {
		// [MQTT-3.10.3-2] the Payload MUST contain at least one Topic Filter.
		return protocol("MQTT-3.10.3-2", "UNSUBSCRIBE without topic filters")
	}
	for _, f := range p.Filters {
		// [MQTT-3.10.3-1] Topic Filters MUST be UTF-8 strings; wildcards as in SUBSCRIBE (checkFilter).
		if _, err := checkFilter(v, f); err != nil {
			return err
		}
	}
	return nil
}

// appendUnsubscribe encodes UNSUBSCRIBE.
func appendUnsubscribe(dst []byte, v Version, p *Unsubscribe) ([]byte, error) {
	if err := checkPropsEncode(v, ctxUnsubscribe, &p.Props); err != nil {
		return dst, err
	}
	if err := checkUnsubscribe(v, p); err != nil {
		return dst, err
	}
	n, pn := 2, 0
	if v == V5 {
		pn = propsLen(&p.Props)
		n += vbiLen(pn) + pn
	}
	for _, f := range p.Filters {
		if err := checkTopicLen(len(f), "topic filter"); err != nil {
			return dst, err
		}
		n += 2 + len(f)
	}
	dst, err := appendHeader(v, dst, UNSUBSCRIBE, 2, n) // [MQTT-3.10.1-1] flags 0010.
	if err != nil {
		return dst, err
	}
	dst = appendU16(dst, p.PacketID)
	if v == V5 {
		dst = appendProps(dst, &p.Props, pn)
	}
	for _, f := range p.Filters {
		dst = appendStr(dst, f)
	}
	return dst, nil
}

// decodeUnsubscribe decodes UNSUBSCRIBE.
func decodeUnsubscribe(v Version, body []byte) (Packet, error) {
	r := &reader{v: v, b: body}
	p := &Unsubscribe{}
	var err error
	if p.PacketID, err = r.u16("Packet Identifier"); err != nil {
		return nil, err
	}
	if v == V5 {
		if err := decodeProps(r, ctxUnsubscribe, &p.Props); err != nil {
			return nil, err
		}
	}
	for r.left() > 0 {
		f, err := r.str("Topic Filter")
		if err != nil {
			return nil, err
		}
		p.Filters = append(p.Filters, f)
	}
	return p, checkUnsubscribe(v, p)
}
