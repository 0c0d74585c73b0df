package packet

import "strconv"

// CONNECT flag bits (3.1.1 §3.1.2.3, 5.0 §3.1.2.3).
const (
	flagReserved   = 0x01
	flagCleanStart = 0x02
	flagWill       = 0x04
	flagWillQoS    = 0x18
	flagWillRetain = 0x20
	flagPassword   = 0x40
	flagUsername   = 0x80
)

// protocolName is the Protocol Name of CONNECT.
const protocolName = "MQTT"

// checkConnect enforces the CONNECT rules visible in the decoded value; the
// encoder and the decoder share it.
func checkConnect(v Version, c *Connect) error {
	if err := checkUTF8String(v, c.ClientID, "Client Identifier"); err != nil {
		return err // [MQTT-3.1.3-4] the Client Identifier MUST be a UTF-8 string.
	}
	if w := c.Will; w != nil {
		if w.QoS > 2 {
			// [MQTT-3.1.2-14] / v5 [MQTT-3.1.2-12]: Will QoS MUST NOT be 3.
			return malformed(rule(v, "MQTT-3.1.2-14", "MQTT-3.1.2-12"), "Will QoS is "+strconv.Itoa(int(w.QoS)))
		}
		// [MQTT-3.1.3-10] / v5 [MQTT-3.1.3-11] the Will Topic MUST be a UTF-8 string (and a Topic Name).
		if err := checkTopicNameString(v, w.Topic, "Will Topic"); err != nil {
			return err
		}
		if v == V5 {
			if err := checkProps(ctxWill, &w.Props); err != nil {
				return err
			}
		}
	}
	if c.HasUsername {
		// [MQTT-3.1.3-11] / v5 [MQTT-3.1.3-12] the User Name MUST be a UTF-8 string.
		if err := checkUTF8String(v, c.Username, "User Name"); err != nil {
			return err
		}
	}
	if v == V311 && c.HasPassword && !c.HasUsername {
		// [MQTT-3.1.2-22] if the User Name Flag is 0, the Password Flag MUST be 0.
		return malformed("MQTT-3.1.2-22", "password without user name in 3.1.1")
	}
	if v == V5 {
		return checkProps(ctxConnect, &c.Props)
	}
	return nil
}

// appendConnect encodes CONNECT.
func appendConnect(dst []byte, v Version, c *Connect) ([]byte, error) {
	if c.Version != 0 && c.Version != v {
		return dst, refuse("MQTT-3.1.2-2", UnsupportedProtocolVersion, "Connect.Version "+c.Version.String()+" differs from "+v.String())
	}
	if err := checkConnectEncode(v, c); err != nil {
		return dst, err
	}
	if err := checkConnect(v, c); err != nil {
		return dst, err
	}
	n := 2 + len(protocolName) + 1 + 1 + 2 + 2 + len(c.ClientID)
	flags := byte(0)
	if c.CleanStart {
		flags |= flagCleanStart
	}
	var pn, wpn int
	if v == V5 {
		pn = propsLen(&c.Props)
		n += vbiLen(pn) + pn
	}
	if w := c.Will; w != nil {
		flags |= flagWill | byte(w.QoS)<<3
		if w.Retain {
			flags |= flagWillRetain
		}
		n += 4 + len(w.Topic) + len(w.Payload)
		if v == V5 {
			wpn = propsLen(&w.Props)
			n += vbiLen(wpn) + wpn
		}
	}
	if c.HasUsername {
		flags |= flagUsername
		n += 2 + len(c.Username)
	}
	if c.HasPassword {
		flags |= flagPassword
		n += 2 + len(c.Password)
	}
	dst, err := appendHeader(v, dst, CONNECT, 0, n)
	if err != nil {
		return dst, err
	}
	dst = appendStr(dst, protocolName)
	dst = append(dst, byte(v), flags)
	dst = appendU16(dst, c.KeepAlive)
	if v == V5 {
		dst = appendProps(dst, &c.Props, pn)
	}
	dst = appendStr(dst, c.ClientID)
	if w := c.Will; w != nil {
		if v == V5 {
			dst = appendProps(dst, &w.Props, wpn)
		}
		dst = appendStr(dst, w.Topic)
		dst = appendBin(dst, w.Payload)
	}
	if c.HasUsername {
		dst = appendStr(dst, c.Username)
	}
	if c.HasPassword {
		dst = appendBin(dst, c.Password)
	}
	return dst, nil
}

// checkConnectEncode refuses values the wire cannot carry.
func checkConnectEncode(v Version, c *Connect) error {
	if c.Username != "" && !c.HasUsername {
		// [MQTT-3.1.2-18] / v5 [MQTT-3.1.2-16]: no User Name without its flag.
		return malformed(rule(v, "MQTT-3.1.2-18", "MQTT-3.1.2-16"), "Username set but HasUsername false")
	}
	if len(c.Password) != 0 && !c.HasPassword {
		// [MQTT-3.1.2-20] / v5 [MQTT-3.1.2-18]: no Password without its flag.
		return malformed(rule(v, "MQTT-3.1.2-20", "MQTT-3.1.2-18"), "Password set but HasPassword false")
	}
	for _, n := range [...]int{len(c.ClientID), len(c.Username), len(c.Password)} {
		if err := checkLen(v, n, "CONNECT field"); err != nil {
			return err
		}
	}
	if err := checkPropsEncode(v, ctxConnect, &c.Props); err != nil {
		return err
	}
	if w := c.Will; w != nil {
		if err := checkLen(v, max(len(w.Topic), len(w.Payload)), "Will field"); err != nil {
			return err
		}
		return checkPropsEncode(v, ctxWill, &w.Props)
	}
	return nil
}

// decodeConnect decodes CONNECT; its protocol level sets the version.
func decodeConnect(body []byte) (Packet, error) {
	r := &reader{v: V311, b: body}
	name, err := r.bin("Protocol Name")
	if err != nil {
		return nil, err
	}
	if string(name) != protocolName {
		// [MQTT-3.1.2-1] the Protocol Name is "MQTT" (else 0x84 / 3.1.1 return code 0x01).
		return nil, refuse("MQTT-3.1.2-1", UnsupportedProtocolVersion, "protocol name is "+strconv.Quote(string(name))+", not \"MQTT\"")
	}
	level, err := r.byte1("Protocol Level")
	if err != nil {
		return nil, err
	}
	v := Version(level)
	if v != V311 && v != V5 {
		// [MQTT-3.1.2-2] unsupported Protocol Level: 0x84 (3.1.1 return code 0x01).
		return nil, refuse("MQTT-3.1.2-2", UnsupportedProtocolVersion, "unsupported protocol level "+strconv.Itoa(int(level)))
	}
	r.v = v
	flags, err := r.byte1("Connect Flags")
	if err != nil {
		return nil, err
	}
	if err := checkConnectFlags(v, flags); err != nil {
		return nil, err
	}
	c := &Connect{Version: v, CleanStart: flags&flagCleanStart != 0,
		HasUsername: flags&flagUsername != 0, HasPassword: flags&flagPassword != 0}
	if c.KeepAlive, err = r.u16("Keep Alive"); err != nil {
		return nil, err
	}
	if v == V5 {
		if err := decodeProps(r, ctxConnect, &c.Props); err != nil {
			return nil, err
		}
	}
	if c.ClientID, err = r.str("Client Identifier"); err != nil {
		return nil, err
	}
	if flags&flagWill != 0 {
		if c.Will, err = decodeWill(r, flags); err != nil {
			return nil, err
		}
	}
	if err := decodeCredentials(r, c); err != nil {
		return nil, err
	}
	if err := trailing(r, CONNECT); err != nil {
		return nil, err
	}
	return c, checkConnect(v, c)
}

// checkConnectFlags enforces the rules on the Connect Flags byte alone.
func checkConnectFlags(v Version, flags byte) error {
	if flags&flagReserved != 0 {
		// [MQTT-3.1.2-3] the reserved flag MUST be 0.
		return malformed("MQTT-3.1.2-3", "CONNECT reserved flag is set")
	}
	if flags&flagWill == 0 {
		if flags&flagWillQoS != 0 {
			// [MQTT-3.1.2-11] [MQTT-3.1.2-13] / v5 [MQTT-3.1.2-11]: no Will, so Will QoS MUST be 0.
			return malformed(rule(v, "MQTT-3.1.2-13", "MQTT-3.1.2-11"), "Will QoS set without the Will Flag")
		}
		if flags&flagWillRetain != 0 {
			// [MQTT-3.1.2-15] / v5 [MQTT-3.1.2-13]: no Will, so Will Retain MUST be 0.
			return malformed(rule(v, "MQTT-3.1.2-15", "MQTT-3.1.2-13"), "Will Retain set without the Will Flag")
		}
	}
	return nil
}

// decodeWill reads the Will Properties, Topic and Payload.
func decodeWill(r *reader, flags byte) (*Will, error) {
	w := &Will{QoS: QoS(flags & flagWillQoS >> 3), Retain: flags&flagWillRetain != 0}
	if r.v == V5 {
		if err := decodeProps(r, ctxWill, &w.Props); err != nil {
			return nil, err
		}
	}
	var err error
	if w.Topic, err = r.str("Will Topic"); err != nil {
		return nil, err
	}
	if w.Payload, err = r.bin("Will Payload"); err != nil {
		return nil, err
	}
	return w, nil
}

// decodeCredentials reads the User Name and Password announced by the flags.
func decodeCredentials(r *reader, c *Connect) error {
	var err error
	if c.HasUsername {
		// [MQTT-3.1.2-19] / v5 [MQTT-3.1.2-17]: the flag says a User Name is present.
		if c.Username, err = r.str("User Name"); err != nil {
			return err
		}
	}
	if c.HasPassword {
		// [MQTT-3.1.2-21] / v5 [MQTT-3.1.2-19]: the flag says a Password is present.
		if c.Password, err = r.bin("Password"); err != nil {
			return err
		}
	}
	return nil
}
