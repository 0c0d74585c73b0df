package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// withSubIDs returns p carrying the Subscription Identifier of every
// subscription of s that matches its topic, in filter order: the broker sends
// one copy per session, so it includes them all [MQTT-3.3.4-3]. Without such
// subscriptions (the usual case, and every 3.1.1 session) it returns p, the
// copy shared with other sessions; otherwise a copy of its own, since
// another session's copy carries other identifiers.
func (b *Broker) withSubIDs(c *brokerConn, s *brokerSession, p *packet.Publish) *packet.Publish {
	if !b.cfg.SubscriptionIDs || c.version != packet.V5 || s == nil || !s.hasSubIDs {
		return p
	}
	var ids []uint32
	for _, f := range sortedKeys(s.subs) {
		if o := s.subs[f]; o.SubID != 0 && filterMatches(f, p.Topic) {
			ids = append(ids, o.SubID)
		}
	}
	if len(ids) == 0 {
		return p
	}
	q := *p
	q.Props.SubscriptionIDs = ids
	return &q
}
