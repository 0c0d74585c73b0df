package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// withSubIDs returns p, the copy m of a message for session s, carrying the
// Subscription Identifiers of the subscriptions it was sent for. A shared
// subscription's copy goes to this member alone and for that subscription:
// it carries that subscription's identifier [MQTT-3.3.4-5]. The session's
// ordinary copy (the broker sends one per session) carries the identifier of
// every ordinary subscription of s that matches its topic, in filter order
// [MQTT-3.3.4-3] [MQTT-3.3.4-4]. Without identifiers (the usual case, and
// every 3.1.1 session) it returns p, the copy shared with other sessions;
// otherwise a copy of its own, since another session's copy carries other
// identifiers.
func (b *Broker) withSubIDs(c *brokerConn, s *brokerSession, m *brokerOut, p *packet.Publish) *packet.Publish {
	if !b.cfg.SubscriptionIDs || c.version != packet.V5 || s == nil || !s.hasSubIDs {
		return p
	}
	var ids []uint32
	if key := b.shareKeyOf(m); key != "" {
		if id := s.subs[key].SubID; id != 0 {
			ids = append(ids, id)
		}
	} else if m.share == 0 {
		ids = b.ordinarySubIDs(s, p.Topic)
	}
	if len(ids) == 0 {
		return p
	}
	q := *p
	q.Props.SubscriptionIDs = ids
	return &q
}

// ordinarySubIDs returns the identifiers of s's ordinary (not shared)
// subscriptions that match topic, in filter order: all of them, or the
// first alone under the canary MutSubIDsFirstOnly.
func (b *Broker) ordinarySubIDs(s *brokerSession, topic []byte) []uint32 {
	var ids []uint32
	for _, f := range sortedKeys(s.subs) {
		if o := s.subs[f]; o.SubID != 0 && !sharedSub(s, f) && filterMatches(f, topic) {
			ids = append(ids, o.SubID)
			if b.pol.Mutations&MutSubIDsFirstOnly != 0 {
				break // the canary: the first matching subscription's only
			}
		}
	}
	return ids
}
