package engine

import (
	"slices"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// brokerRetained is the retained message of one topic.
type brokerRetained struct {
	seq uint64
	msg brokerMsg
	qos packet.QoS
}

// handleSubscribe adds or replaces subscriptions [MQTT-3.8.4-3], answers
// SUBACK with one code per filter [MQTT-3.8.4-1] [MQTT-3.8.4-6], then sends
// the matching retained messages as the Retain Handling option asks
// [MQTT-3.3.1-9] [MQTT-3.3.1-10] [MQTT-3.3.1-11].
func (b *Broker) handleSubscribe(c *brokerConn, p *packet.Subscribe) {
	s := c.sess
	v5 := c.version == packet.V5
	var subID uint32
	if v5 && len(p.Props.SubscriptionIDs) > 0 && b.cfg.SubscriptionIDs {
		subID = p.Props.SubscriptionIDs[0] // the codec allows one (§3.8.2.1.2)
	} else if v5 && len(p.Props.SubscriptionIDs) > 0 {
		// CONNACK said Subscription Identifiers Available = 0 (§3.8.2.1.2).
		b.closeWith(c, packet.SubIDsNotSupported, protocolErr(packet.SubIDsNotSupported, "§3.8.2.1.2", "subscription identifiers are not supported"))
		return
	}
	reasons := make([]packet.ReasonCode, len(p.Subs))
	var withRetained []packet.Subscription
	for i, sub := range p.Subs {
		switch {
		case v5 && isShared(sub.Filter) && !b.cfg.SharedSubscriptions:
			reasons[i] = packet.SharedSubsNotSupported
			continue
		case !v5 && isShared(sub.Filter):
			// 3.1.1 has no shared subscriptions: granting "$share/g/f" as
			// the ordinary filter it is there would match no topic a
			// client of a shared subscription means (a grant, then
			// silence); the broker refuses it with the return code 0x80
			// Failure, which 3.1.1 §3.9.3 offers for any filter.
			reasons[i] = packet.V3SubackFailure
			continue
		case !validFilter(sub.Filter):
			reasons[i] = pick(v5, packet.TopicFilterInvalid, packet.V3SubackFailure)
			continue
		case !b.maySubscribe(c, sub.Filter):
			// v5 SUBACK 0x87 Not authorized; 3.1.1 0x80 Failure.
			reasons[i] = pick(v5, packet.NotAuthorized, packet.V3SubackFailure)
			continue
		}
		// §3.8.2.1.2: the identifier is stored with the subscription and
		// replaces an existing one's.
		o := subOptions{QoS: min(sub.QoS, 2), NoLocal: sub.NoLocal, RetainAsPublished: sub.RetainAsPublished,
			RetainHandling: sub.RetainHandling, SubID: subID}
		if !v5 {
			o = subOptions{QoS: o.QoS}
		}
		s.setSub(sub.Filter, o)
		b.saveSub(s, sub.Filter, o)
		reasons[i] = packet.ReasonCode(o.QoS) // granted QoS [MQTT-3.9.3-1]
		if v5 && isShared(sub.Filter) {
			b.shareAdd(sub.Filter, s, o) // no retained messages for a shared subscription (§3.3.1.3)
			continue
		}
		existed := b.tree.add(sub.Filter, s, o)
		if o.RetainHandling == 0 || (o.RetainHandling == 1 && !existed) {
			withRetained = append(withRetained, packet.Subscription{Filter: sub.Filter, QoS: o.QoS})
		}
	}
	b.send(c, &packet.Suback{PacketID: p.PacketID, Reasons: reasons})
	if len(withRetained) == 0 || len(b.retained) == 0 {
		return
	}
	b.resetFan()
	topics := sortedKeys(b.retained)
	for _, sub := range withRetained {
		for _, t := range topics {
			r := b.retained[t]
			if r.msg.expired(b.now) {
				delete(b.retained, t) // [MQTT-3.3.2-5]
				b.delRetained(t)
				continue
			}
			if filterMatches(sub.Filter, r.msg.topic()) && b.mayReceive(s, r.msg.topic()) {
				// [MQTT-3.3.1-8] retained messages go out with RETAIN=1.
				b.enqueue(s, brokerOut{msg: r.msg, qos: b.grantedQoS(r.qos, sub.QoS), retain: true})
			}
		}
	}
	b.fanoutSend()
}

// handleUnsubscribe removes subscriptions and answers UNSUBACK, with a code
// per filter in v5 [MQTT-3.10.4-4] [MQTT-3.11.3-1].
func (b *Broker) handleUnsubscribe(c *brokerConn, p *packet.Unsubscribe) {
	s := c.sess
	var reasons []packet.ReasonCode
	if c.version == packet.V5 {
		reasons = make([]packet.ReasonCode, len(p.Filters))
	}
	for i, f := range p.Filters {
		if b.pol.Mutations&MutKeepUnsubscribed != 0 {
			continue // canary: acknowledged, not removed
		}
		existed := b.unsub(s, f)
		delete(s.subs, f)
		if existed {
			b.delSub(s, f)
		} else if reasons != nil {
			reasons[i] = packet.NoSubscriptionExisted
		}
	}
	b.send(c, &packet.Unsuback{PacketID: p.PacketID, Reasons: reasons})
}

// unsub removes the session's subscription to f from the tree or from its
// shared group, and reports whether it existed.
func (b *Broker) unsub(s *brokerSession, f string) bool {
	if sharedSub(s, f) {
		return b.shareRemove(f, s)
	}
	return b.tree.remove(f, s.id)
}

// storeRetained replaces the retained message of the topic, or deletes it
// when the payload is empty [MQTT-3.3.1-6] (3.1.1 [MQTT-3.3.1-10]).
func (b *Broker) storeRetained(m brokerMsg, qos packet.QoS) {
	t := string(m.topic())
	if len(m.payload()) == 0 && b.pol.Mutations&MutRetainEmptyPayload == 0 { // the canary stores it
		if _, ok := b.retained[t]; ok {
			delete(b.retained, t)
			b.delRetained(t)
		}
		return
	}
	r := &brokerRetained{seq: b.nextSeq(), msg: m, qos: qos}
	b.retained[t] = r
	b.saveRetained(t, r)
}

// grantedQoS is the QoS of a copy of a message published at pub to a
// subscription granted at sub: the lower [MQTT-3.8.4-8].
func (b *Broker) grantedQoS(pub, sub packet.QoS) packet.QoS {
	if b.pol.Mutations&MutIgnoreGrantedQoS != 0 {
		return pub // canary: the publish QoS, whatever was granted
	}
	return min(pub, sub)
}

// sortedKeys returns the keys of a map in order.
func sortedKeys[K string | uint16, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
