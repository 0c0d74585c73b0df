package findings

import (
	"slices"

	"github.com/mqttlab/mqttlab/model"
)

// Shapes of a lost message's flow to the client that never had it: they
// tell apart the causes one NoLoss reason covers.
const (
	// ShapeNotPublished: the publisher never sent the message to the
	// broker (its application handed it over; no PUBLISH of it reached
	// the broker).
	ShapeNotPublished = "its publisher never sent it to the broker"
	// ShapeNeverSent: the broker sent the client no copy of the message.
	ShapeNeverSent = "broker never sent it to the client"
	// ShapeUnacked: the broker sent a copy the client never acknowledged.
	ShapeUnacked = "sent, never acknowledged by the client"
	// ShapeAcked: the client acknowledged a copy (PUBACK or PUBREC), so it
	// owned the message, and its application never had it.
	ShapeAcked = "acknowledged by the client, never delivered to its application"
)

// shape is the packet pattern of violation v's flow that splits findings
// of one reason: for NoLoss, how far the message got to the client (see
// the Shape constants); "" for the others.
func (g *grouper) shape(v *model.Violation) string {
	if v.Invariant != model.NoLoss || v.Node == "" || v.Node == model.BrokerNode {
		return ""
	}
	if g.ix == nil {
		g.ix = newFlowIndex(g.h)
	}
	msgs := violationMsgs(g.h, v)
	if len(msgs) == 0 {
		return ""
	}
	if !g.reachedBroker(msgs[0]) {
		return ShapeNotPublished
	}
	sent := false
	var ids []uint16
	for _, i := range g.ix.byMsg[msgs[0]] {
		e := &g.h.Events[i]
		if e.Kind == model.Sent && e.Node == model.BrokerNode && e.Peer == v.Node && e.Packet.Type == model.PUBLISH {
			sent = true
			if !slices.Contains(ids, e.Packet.ID) {
				ids = append(ids, e.Packet.ID)
			}
		}
	}
	if !sent {
		return ShapeNeverSent
	}
	if g.acked(v.Node, msgs[0], ids) >= 0 {
		return ShapeAcked
	}
	return ShapeUnacked
}

// acked is the step at which client acknowledged (PUBACK or PUBREC) a copy
// of msg on one of the packet ids ids carried it on, or -1.
func (g *grouper) acked(client, msg string, ids []uint16) int {
	for _, id := range ids {
		carrying := false
		for _, i := range g.ix.byLink[linkID{client, id}] {
			e := &g.h.Events[i]
			if e.Packet.Type == model.PUBLISH {
				carrying = e.Packet.Msg == msg
			}
			if carrying && e.Kind == model.Sent && e.Node == client && (e.Packet.Type == model.PUBACK || e.Packet.Type == model.PUBREC) {
				return i
			}
		}
	}
	return -1
}

// defaultClauses are the statements a finding rests on when its reasons
// cite none (5.0 numbers; Clauses maps them): a subscriber that owned a
// message and lost it broke the receiver's ownership duty, a broker that
// lost one its session owed the session's.
func defaultClauses(f *Finding) string {
	switch f.Invariant {
	case model.NoLoss:
		if f.Subject != model.BrokerNode && len(f.Pattern) > 0 && containsShape(f.Pattern, ShapeAcked) {
			return "[MQTT-4.3.3-8] [MQTT-4.3.2-4]"
		}
		return "[MQTT-4.5.0-1] [MQTT-3.1.2-5]"
	case model.QoS2ExactlyOnce:
		return "[MQTT-4.3.3-10]"
	case model.Order:
		return "[MQTT-4.6.0-5]"
	}
	return ""
}

func containsShape(pattern, shape string) bool {
	return len(pattern) >= len(shape) && pattern[len(pattern)-len(shape)-1:len(pattern)-1] == shape
}

// reachedBroker reports whether a PUBLISH of msg reached the broker.
func (g *grouper) reachedBroker(msg string) bool {
	if g.ix == nil {
		g.ix = newFlowIndex(g.h)
	}
	for _, i := range g.ix.byMsg[msg] {
		if e := &g.h.Events[i]; e.Kind == model.Received && e.Node == model.BrokerNode && e.Packet.Type == model.PUBLISH {
			return true
		}
	}
	return false
}
