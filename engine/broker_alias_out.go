package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// Topic aliases from the broker to the client (MQTT 5.0 §3.3.2.3.4), a
// broker option (BrokerConfig.TopicAliasesOut, off by default).
//
// Policy. On a v5 connection whose CONNECT announced a Topic Alias Maximum
// M > 0, the broker keeps a table of at most min(M, TopicAliasesOut)
// aliases [MQTT-3.1.2-26] [MQTT-3.3.2-11]; with M absent or 0 it sends
// none [MQTT-3.1.2-27]. The first PUBLISH of a topic on the connection
// carries the Topic Name and a fresh alias (the lowest never used); later
// ones carry the alias and an empty Topic Name. When the table is full the
// least recently used alias is given to the new topic, sent with its Topic
// Name, which the receiver takes as the new mapping (§3.3.2.3.4: "A sender
// can modify the Topic Alias mapping by sending another PUBLISH in the same
// Network Connection with the same Topic Alias value and a different non-zero
// length Topic Name"). The table belongs to the connection and dies with it:
// a new connection of the session starts empty [MQTT-3.3.2-7], so a resent
// PUBLISH carries its Topic Name again. A PUBLISH that is not sent (too large
// for the client) changes nothing in the table.

// aliasOut is one connection's table of the aliases the broker assigned:
// entries indexed by alias-1, linked in recency order.
type aliasOut struct {
	max     uint16 // the most aliases to assign: min(client's maximum, TopicAliasesOut)
	byTopic map[string]uint16
	ents    []aliasEnt // ents[a-1] is alias a
	// head is the most recently used alias, tail the least; 0 for none.
	head, tail uint16
}

// aliasEnt is one assigned alias: its topic and its neighbours in recency
// order (0 for none).
type aliasEnt struct {
	topic      string
	prev, next uint16
}

// newAliasOut returns the table of a connection whose CONNECT announced a
// Topic Alias Maximum of clientMax, or nil when the broker may send none.
func (b *Broker) newAliasOut(p *packet.Connect) *aliasOut {
	if b.cfg.TopicAliasesOut == 0 || p.Version != packet.V5 {
		return nil
	}
	clientMax := uint16(0)
	if p.Props.Present.Has(packet.PropTopicAliasMaximum) {
		clientMax = p.Props.TopicAliasMaximum
	}
	n := min(clientMax, b.cfg.TopicAliasesOut)
	if b.pol.Mutations&MutAliasAboveMax != 0 {
		n = b.cfg.TopicAliasesOut // canary: the client's maximum ignored
	}
	if n == 0 {
		return nil // [MQTT-3.1.2-27] absent or 0: no aliases to this client
	}
	return &aliasOut{max: n, byTopic: make(map[string]uint16)}
}

// choose returns the alias for topic and whether the client already maps it
// (send the alias alone) or must be told (send the alias with the topic).
// The table is not changed: see use.
func (t *aliasOut) choose(topic []byte) (alias uint16, known bool) {
	if a, ok := t.byTopic[string(topic)]; ok {
		return a, true
	}
	if len(t.ents) < int(t.max) {
		return uint16(len(t.ents) + 1), false
	}
	return t.tail, false // full: the least recently used one is reassigned
}

// use records that a PUBLISH carrying alias for topic was sent: the alias
// now maps topic and is the most recently used.
func (t *aliasOut) use(topic []byte, alias uint16, known bool) {
	if !known {
		if int(alias) > len(t.ents) {
			t.ents = append(t.ents, aliasEnt{})
		} else {
			delete(t.byTopic, t.ents[alias-1].topic)
		}
		s := string(topic)
		t.ents[alias-1].topic = s
		t.byTopic[s] = alias
	}
	t.unlink(alias)
	e := &t.ents[alias-1]
	e.prev, e.next = 0, t.head
	if t.head != 0 {
		t.ents[t.head-1].prev = alias
	}
	t.head = alias
	if t.tail == 0 {
		t.tail = alias
	}
}

// unlink takes alias out of the recency list, if it is in it.
func (t *aliasOut) unlink(alias uint16) {
	e := &t.ents[alias-1]
	if e.prev != 0 {
		t.ents[e.prev-1].next = e.next
	} else if t.head == alias {
		t.head = e.next
	}
	if e.next != 0 {
		t.ents[e.next-1].prev = e.prev
	} else if t.tail == alias {
		t.tail = e.prev
	}
	e.prev, e.next = 0, 0
}

// sendPubAliased sends p on c with a Topic Alias from c's table: a copy of
// p carrying the alias, with an empty Topic Name when the client already
// maps it. The table changes only when the PUBLISH is sent. One that must
// carry its Topic Name, and is too large for the client's Maximum Packet
// Size with the alias too, goes without the alias when that fits: the
// alias is the broker's choice, and must not make a message the client
// could take too large to send (a resend on a new connection, whose table
// is empty, carries the name where its first send fitted by alias alone)
// [MQTT-3.1.2-25].
func (b *Broker) sendPubAliased(c *brokerConn, p *packet.Publish, checked bool) bool {
	alias, known := c.aliasOut.choose(p.Topic)
	q := b.pkts.pub.get()
	*q = *p
	q.Props.Present = q.Props.Present.With(packet.PropTopicAlias)
	q.Props.TopicAlias = alias // [MQTT-3.3.2-8] never 0; [MQTT-3.3.2-11] within the table
	if known {
		q.Topic = nil // §3.3.2.3.4 the alias alone names the topic
	}
	if !b.sendPubPlain(c, q, checked) {
		return !known && b.sendPubPlain(c, p, checked) // [MQTT-3.1.2-25] by name alone, if that fits
	}
	c.aliasOut.use(p.Topic, alias, known)
	return true
}
