package model

import (
	"fmt"
	"slices"
)

// aliasConn is a client's connections as checkTopicAlias sees them: the
// Topic Alias Maximum the current one's CONNECT announced, and the aliases
// the broker set, on this connection or an earlier one.
type aliasConn struct {
	max       uint16
	conn      int32 // the connection's number: 1 + CONNECTs before it
	connectAt int   // step of its CONNECT
	set       []aliasSet
}

// aliasSet is where an alias was last set: the connection and the step
// (0 with conn 0: never).
type aliasSet struct {
	conn int32
	step int
}

// topicAliasEvents are the events checkTopicAlias reads.
var topicAliasEvents = eventSet{
	sent:     typeBits(CONNECT),
	received: typeBits(PUBLISH),
}.codes()

// CheckTopicAlias checks the broker's Topic Aliases as each client received
// them (MQTT 5.0 §3.3.2.3.4). An alias is at most the Topic Alias Maximum the
// client announced in the CONNECT of that connection [MQTT-3.3.2-11]
// [MQTT-3.1.2-26], and none comes when it announced none [MQTT-3.1.2-27]; a
// PUBLISH with an alias and an empty Topic Name names an alias an earlier
// PUBLISH on the same connection set: mappings are never carried from one
// connection to the next [MQTT-3.3.2-7]. A client's Sent CONNECT carries in
// Packet.TopicAlias the maximum it announced, a PUBLISH its alias.
func CheckTopicAlias(h *History) []Violation { return checkTopicAlias(newIndex(h)) }

// checkTopicAlias reads the recorded history (x.orig), where an alias sent
// alone still has its empty Topic.

func checkTopicAlias(x *index) []Violation {
	conns := make([]aliasConn, len(x.nodes))
	var out []Violation
	for i, k := range x.kinds {
		if !topicAliasEvents.has(k) {
			continue
		}
		d := &x.ev[i]
		if d.node == brokerID || d.node == emptyID {
			continue
		}
		e := &x.orig.Events[i]
		c := &conns[d.node]
		if e.Kind == Sent {
			c.newConnection(e.Packet.TopicAlias, i)
			continue
		}
		if v, ok := c.receive(i, e); !ok {
			out = append(out, v)
		}
	}
	return out
}

// newConnection starts a connection whose CONNECT (step at) announced max:
// the aliases set so far belong to earlier connections.
func (c *aliasConn) newConnection(max uint16, at int) {
	c.conn++
	c.max, c.connectAt = max, at
}

// receive judges PUBLISH e (step i) from the broker and records the alias it
// sets. It reports the violation when the alias is out of range or unset.
func (c *aliasConn) receive(i int, e *Event) (Violation, bool) {
	a := e.Packet.TopicAlias
	if a == 0 || c.conn == 0 {
		return Violation{}, true // no alias, or a connection whose CONNECT the history lacks
	}
	switch {
	case a > c.max && c.max == 0:
		return NewViolation(TopicAlias, i, BrokerNode, fmt.Sprintf(
			"PUBLISH to %s carries Topic Alias %d, but its CONNECT (step %d) announced no Topic Alias Maximum [MQTT-3.1.2-27]",
			e.Node, a, c.connectAt), c.connectAt), false
	case a > c.max:
		return NewViolation(TopicAlias, i, BrokerNode, fmt.Sprintf(
			"PUBLISH to %s carries Topic Alias %d, above the Topic Alias Maximum %d of its CONNECT (step %d) [MQTT-3.3.2-11] [MQTT-3.1.2-26]",
			e.Node, a, c.max, c.connectAt), c.connectAt), false
	case e.Packet.Topic != "":
		for len(c.set) < int(a) {
			c.set = append(c.set, aliasSet{})
		}
		c.set[a-1] = aliasSet{conn: c.conn, step: i}
		return Violation{}, true
	}
	var s aliasSet
	if int(a) <= len(c.set) {
		s = c.set[a-1]
	}
	switch {
	case s.conn == c.conn:
		return Violation{}, true
	case s.conn > 0:
		return NewViolation(TopicAlias, i, BrokerNode, fmt.Sprintf(
			"PUBLISH to %s names Topic Alias %d alone, set only on an earlier connection (step %d): mappings are not carried forward [MQTT-3.3.2-7]",
			e.Node, a, s.step), s.step, c.connectAt), false
	}
	return NewViolation(TopicAlias, i, BrokerNode, fmt.Sprintf(
		"PUBLISH to %s names Topic Alias %d alone, which no PUBLISH on this connection (from step %d) set (§3.3.2.3.4)",
		e.Node, a, c.connectAt), c.connectAt), false
}

// aliasKey names one side's view of the Topic Aliases of one direction of a
// client's connection: the node keeping it, the other end, and whether the
// node sends (true) or receives the PUBLISHes.
type aliasKey struct {
	node, other int32
	sends       bool
}

// resolveAliases returns a copy of the history in which every PUBLISH that
// names its topic by a Topic Alias alone carries the topic the alias maps
// on that connection, as its receiver resolves it (MQTT 5.0 §3.3.2.3.4), so
// the checks that read topics (routing, Retransmit) see the topic; an alias
// with no mapping leaves the Topic empty (TopicAlias reports it). Each side
// keeps its own mappings per direction, from its view of the connection: a
// client's start with its Sent CONNECT, the broker's with its Received
// CONNECT from that client (a broker still writing on a connection the
// client already left keeps resolving by that connection's mappings). The recorded history is left as it was
// (x.orig): TopicAlias judges the wire.
func (x *index) resolveAliases() *History {
	h := &History{Events: slices.Clone(x.orig.Events)}
	tables := map[aliasKey][]string{}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != Sent && e.Kind != Received {
			continue
		}
		d := &x.ev[i]
		p := &e.Packet
		switch {
		case p.Type == CONNECT:
			// A new connection: the side that sees its CONNECT (the client
			// sending it, the broker receiving it) starts its views of it
			// empty; the other side may still be on the old one.
			delete(tables, aliasKey{d.node, d.peer, true})
			delete(tables, aliasKey{d.node, d.peer, false})
		case p.Type == PUBLISH && p.TopicAlias != 0:
			k := aliasKey{d.node, d.peer, e.Kind == Sent}
			t := tables[k]
			a := int(p.TopicAlias)
			if p.Topic != "" {
				for len(t) < a {
					t = append(t, "")
				}
				t[a-1] = p.Topic
				tables[k] = t
			} else if a <= len(t) {
				p.Topic = t[a-1]
			}
		}
	}
	return h
}
