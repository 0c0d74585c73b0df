package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Will is a client's will message: CONNECT carries it, and the broker
// publishes it when the connection ends without a DISCONNECT 0x00
// [MQTT-3.1.2-8] (after the v5 Will Delay Interval, or when the session
// ends if that is sooner [MQTT-3.1.3-9]); a normal DISCONNECT discards it
// [MQTT-3.1.2-10] [MQTT-3.14.4-3].
type Will struct {
	Topic   string     // a topic name: non-empty, no wildcards [MQTT-3.1.3-11]
	Payload []byte     // the will payload (may be empty)
	QoS     packet.QoS // 0, 1 or 2 [MQTT-3.1.2-12]
	Retain  bool       // publish it as a retained message [MQTT-3.1.2-15]
	// Delay is the v5 Will Delay Interval in seconds (0: publish at once).
	// It must be 0 in 3.1.1.
	Delay uint32
}

// validate reports the first problem of a will for protocol version v.
func (w *Will) validate(v packet.Version) error {
	switch {
	case w.Topic == "" || len(w.Topic) > 65535 || !utf8.ValidString(w.Topic):
		return fmt.Errorf("will topic %q is not a valid topic name", w.Topic)
	case strings.ContainsAny(w.Topic, "+#\x00"):
		return fmt.Errorf("will topic %q holds a wildcard or NUL [MQTT-3.1.3-11]", w.Topic)
	case w.QoS > 2:
		return fmt.Errorf("will QoS %d is not 0, 1 or 2 [MQTT-3.1.2-12]", w.QoS)
	case v != packet.V5 && w.Delay != 0:
		return fmt.Errorf("will delay %d needs Version 5", w.Delay)
	}
	return nil
}

// willPacket is the CONNECT will of w (nil for none): the Will Flag, QoS and
// Retain from it [MQTT-3.1.2-9] [MQTT-3.1.2-11] [MQTT-3.1.2-14], and in v5
// the Will Delay Interval property when it is not 0.
func willPacket(v packet.Version, w *Will) *packet.Will {
	if w == nil {
		return nil
	}
	p := &packet.Will{QoS: w.QoS, Retain: w.Retain, Topic: w.Topic, Payload: w.Payload}
	if v == packet.V5 && w.Delay != 0 {
		p.Props.Present = p.Props.Present.With(packet.PropWillDelay)
		p.Props.WillDelay = w.Delay
	}
	return p
}
