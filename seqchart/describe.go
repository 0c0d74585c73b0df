package seqchart

import (
	"fmt"

	"github.com/mqttlab/mqttlab/model"
)

// Words for events, packets and crash points.

// pointName names a crash point.
func pointName(p model.CrashPoint) string {
	switch p {
	case model.CrashBetweenSteps:
		return "between steps"
	case model.CrashBeforeAction:
		return "before an action"
	case model.CrashAfterAction:
		return "after an action"
	case model.CrashInCallbackPre:
		return "in the app callback, before its write"
	case model.CrashInCallbackPost:
		return "in the app callback, after its write"
	case model.CrashStop:
		return "at a clean stop"
	}
	return fmt.Sprintf("at point %d", p)
}

// packetType names an MQTT packet type.
func packetType(t uint8) string {
	names := [...]string{"", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC",
		"PUBREL", "PUBCOMP", "SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK",
		"PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}
	if int(t) < len(names) && t > 0 {
		return names[t]
	}
	return fmt.Sprintf("type %d", t)
}

// describe says what an event is, in a line.
func describe(e *model.Event) string {
	switch e.Kind {
	case model.Sent:
		return fmt.Sprintf("%s sent %s to %s", e.Node, packetText(&e.Packet), e.Peer)
	case model.Received:
		return fmt.Sprintf("%s received %s from %s", e.Node, packetText(&e.Packet), e.Peer)
	case model.Accepted:
		return fmt.Sprintf("%s accepted %s (topic %q, QoS %d)", e.Node, e.Msg, e.Topic, e.QoS)
	case model.Acknowledged:
		return fmt.Sprintf("%s: %s acknowledged", e.Node, e.Msg)
	case model.Delivered:
		return fmt.Sprintf("%s delivered %s (QoS %d)", e.Node, e.Msg, e.QoS)
	case model.Subscribed:
		return fmt.Sprintf("%s subscribed to %q at QoS %d", e.Node, e.Filter, e.QoS)
	case model.Connected:
		return fmt.Sprintf("%s connected, session present %v", e.Node, e.SessionPresent)
	case model.Crash:
		return fmt.Sprintf("%s crashed %s", e.Node, pointName(e.Point))
	case model.LivenessStart:
		return "the liveness phase began (faults off)"
	case model.Stuck:
		return "stuck: " + e.Reason
	case model.Cutoff:
		return "cut, unfinished: " + e.Reason
	case model.Failed:
		return e.Node + " failed: " + e.Reason
	case model.Dropped:
		return fmt.Sprintf("the broker dropped its copy of %s for %s: %s", e.Msg, e.Peer, e.Reason)
	case model.ACL:
		return fmt.Sprintf("%s declared its access control: %s", e.Node, e.Reason)
	case model.Refused:
		return fmt.Sprintf("%s's codec refused its %s: %s", e.Node, packetType(e.Packet.Type), e.Reason)
	}
	return fmt.Sprintf("%s %s %s", kindName(e.Kind), e.Node, e.Peer)
}

// packetText is a packet in a few words: "PUBLISH id 3 QoS 2 DUP msg p1-4".
func packetText(p *model.Packet) string {
	s := packetType(p.Type)
	if p.ID != 0 {
		s += fmt.Sprintf(" id %d", p.ID)
	}
	if p.Type == model.PUBLISH {
		s += fmt.Sprintf(" QoS %d", p.QoS)
		if p.Dup {
			s += " DUP"
		}
		s += " msg " + p.Msg
	}
	switch {
	case p.Type == model.SUBACK && p.Reason < 0x80:
		s += fmt.Sprintf(" granted QoS %d", p.Reason)
	case p.Reason != 0:
		s += fmt.Sprintf(" reason 0x%02x", p.Reason)
	}
	return s
}

// kindName names an event kind.
func kindName(k model.Kind) string {
	names := map[model.Kind]string{model.Acknowledged: "Acknowledged", model.Unsubscribed: "Unsubscribed",
		model.ConnOpened: "ConnOpened", model.ConnClosed: "ConnClosed", model.Restart: "Restart", model.StateLost: "StateLost",
		model.Partition: "Partition", model.Heal: "Heal", model.Quiescent: "Quiescent", model.Cut: "Cut"}
	if n, ok := names[k]; ok {
		return n
	}
	return fmt.Sprintf("Kind(%d)", k)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
