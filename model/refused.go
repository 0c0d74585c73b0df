package model

import "strings"

// Refused publications. In MQTT 5.0 a receiver that does not accept a
// PUBLISH answers it with a PUBACK (QoS 1) or PUBREC (QoS 2) whose Reason
// Code is 0x80 or more (§3.4.2.1, §3.5.2.1: 0x80 "does not accept the
// publish", 0x83, 0x87 Not authorized, 0x90 Topic Name invalid, 0x97 Quota
// exceeded, 0x99 Payload format invalid): it takes no ownership of the
// message, which it owns only when it answers with success
// [MQTT-4.3.2-4] [MQTT-4.3.3-8]; the sender treats the PUBLISH as
// acknowledged and MUST NOT send it again [MQTT-4.4.0-2], and a QoS 2
// PUBLISH with the same packet identifier after such a PUBREC is a new
// message [MQTT-4.3.3-9]. A refused publication is owed to no subscriber:
// the checks that owe copies (NoLoss, SharedDelivery, FlowResume, Retained)
// owe none of it. 3.1.1 has no reason codes in PUBACK or PUBREC: nothing
// is refused there.
//
// A publisher's own client may refuse it too: a PUBLISH larger than the
// Maximum Packet Size of the broker's CONNACK must not be sent
// [MQTT-3.2.2-15], so an engine fails such a message to its application
// instead (a Refused event citing that rule, after the Accepted when the
// message waited for a connection). Nothing of it reached the broker on
// that connection: it is owed to no one either, unless the broker
// acknowledged a PUBLISH of it with success before (MaxPacketSize judges
// whether the refusal was due).

// refusedEvents are the events refusedMsgs reads.
var refusedEvents = eventSet{kinds: kindBits(Refused), sent: typeBits(PUBLISH, PUBACK, PUBREC), received: typeBits(PUBLISH, PUBACK, PUBREC)}.codes()

// brokerMaxRule is the rule a client cites when it refuses to send a
// packet larger than the broker's Maximum Packet Size.
const brokerMaxRule = "[MQTT-3.2.2-15]"

// refusedTooLarge reports whether e is a client's Refused PUBLISH for the
// broker's Maximum Packet Size [MQTT-3.2.2-15].
func refusedTooLarge(e *Event) bool {
	return e.Kind == Refused && e.Packet.Type == PUBLISH && strings.HasPrefix(e.Reason, brokerMaxRule)
}

// refusedMsgs returns, per message id of x, whether the broker refused
// the message: its declared ACL keeps the publisher from writing its topic
// (access.go), or it answered some PUBLISH of it from a client with a PUBACK
// or PUBREC of reason code >= 0x80, or its publisher's client refused it
// as too large for the broker, and the broker answered none with a code
// below 0x80. One
// success answer is enough for the message to be owed: the broker owned
// it then [MQTT-4.3.2-4] [MQTT-4.3.3-8], whatever it answered a resend
// later. An answer is tied to the last PUBLISH the broker received from
// that client on that packet id; a client's Received PUBACK/PUBREC from
// the broker stands for the broker's Sent one when the recorder missed
// the broker's side. nil when the history holds no refusal.
func refusedMsgs(x *index) []bool {
	const (
		gotRefusal uint8 = 1 << iota
		gotSuccess
		gotACL // its publisher may not write its topic (access.go)
	)
	state := make([]uint8, len(x.msgs)) // msg -> the answers it got
	in := map[uint64]int32{}            // client<<16|id -> the msg of the last PUBLISH the broker received on it
	out := map[uint64]int32{}           // client<<16|id -> the msg of the last PUBLISH the client sent on it
	seen := false                       // some message was refused
	for i, k := range x.kinds {
		if !refusedEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		p := &e.Packet
		var msg int32
		switch {
		case e.Kind == Refused:
			if refusedTooLarge(e) && d.msg != 0 {
				state[d.msg] |= gotRefusal // never sent to the broker [MQTT-3.2.2-15]
				seen = true
			}
			continue
		case p.Type == PUBLISH && e.Kind == Received && d.node == brokerID:
			if d.msg != 0 && x.aclDeniesWrite(e.Peer, p.Topic) {
				// The broker's ACL keeps the publisher from writing the
				// topic: v5 refuses it (0x87, below), 3.1.1 acknowledges it
				// and drops it, having no way to say [MQTT-3.3.5-2].
				state[d.msg] |= gotACL
				seen = true
			}
			if p.QoS == 0 {
				continue
			}
			in[uint64(d.peer)<<16|uint64(p.ID)] = d.msg
			continue
		case p.Type == PUBLISH && p.QoS > 0 && e.Kind == Sent && d.node != brokerID:
			out[uint64(d.node)<<16|uint64(p.ID)] = d.msg
			continue
		case p.Type == PUBLISH:
			continue
		case e.Kind == Sent && d.node == brokerID: // the broker's answer [MQTT-4.3.2-4] [MQTT-4.3.3-8]
			msg = in[uint64(d.peer)<<16|uint64(p.ID)]
		case e.Kind == Received && d.node != brokerID && d.peer == brokerID:
			msg = out[uint64(d.node)<<16|uint64(p.ID)]
		default:
			continue
		}
		switch {
		case msg == 0: // an answer to nothing the history names
		case p.Reason < reasonFailure:
			state[msg] |= gotSuccess // the broker owned it [MQTT-4.3.2-4] [MQTT-4.3.3-8]
		default:
			state[msg] |= gotRefusal // not accepted: owed to no one unless a success owned it (§3.4.2.1, §3.5.2.1) [MQTT-4.4.0-2]
			seen = true
		}
	}
	if !seen {
		return nil
	}
	refused := make([]bool, len(x.msgs))
	for m, s := range state {
		refused[m] = s == gotRefusal || s&gotACL != 0
	}
	return refused
}

// isRefused reports refused[msg] of a refusedMsgs result (nil: none).
func isRefused(refused []bool, msg int32) bool { return refused != nil && refused[msg] }
