package model

import (
	"fmt"
	"strings"
)

// Access control. A broker with an ACL (mosquitto's acl_file) lets a client
// subscribe to a filter only when one of its topic rules covers the filter
// for reading, send it a message only on a topic it may read, and route a
// client's PUBLISH only to a topic the client may write (MQTT 5.0 §5.4.2:
// the server may refuse both). A v5 PUBLISH it refuses gets PUBACK or
// PUBREC 0x87 Not authorized (§3.4.2.1, §3.5.2.1: a reason code >= 0x80,
// so nothing is owed of it, refused.go); a 3.1.1 publisher cannot be told,
// and the broker acknowledges it as usual and drops it [MQTT-3.3.5-2]
// (which refusedMsgs excuses there, and only there). A SUBSCRIBE it
// refuses gets SUBACK 0x87 (v5) or 0x80 (3.1.1), so no Subscribed event.
//
// The history declares the ACL with ACL events (history.go): the broker's
// file lines and each client's user name. The rules are mosquitto's, as
// engine.Access applies them: a client's rules are those of its user's
// section (the anonymous section, before any `user` line, for a client
// without a user name) and every `pattern` rule (%u and %c replaced by its
// user name and client id); a `deny` rule covering the topic wins; else
// some rule must grant the access. A subscription's filter is covered only
// when every topic it can match is (a wildcard of the filter needs one of
// the rule at that level). Without ACL events Access judges nothing.

// aclRule is one topic rule of the declared ACL.
type aclRule struct {
	user    string // its section's user ("" anonymous)
	pattern bool
	topic   string
	read    bool
	write   bool
	deny    bool
}

// aclTab is the declared access control: the rules and each client's user.
type aclTab struct {
	rules []aclRule
	users map[string]string // client -> user name; absent: anonymous
}

// accessTab returns the history's declared ACL, or nil without one.
func (x *index) accessTab() *aclTab {
	if !x.acl {
		return nil
	}
	if x.access != nil {
		return x.access
	}
	t := &aclTab{users: map[string]string{}}
	section := ""
	for i, k := range x.kinds {
		if k.kind != ACL {
			continue
		}
		e := &x.h.Events[i]
		f := strings.Fields(e.Reason)
		if e.Node != BrokerNode {
			if len(f) == 2 && f[0] == "user" {
				t.users[e.Node] = f[1]
			}
			continue
		}
		switch {
		case len(f) == 2 && f[0] == "user":
			section = f[1]
		case len(f) == 3 && (f[0] == "topic" || f[0] == "pattern"):
			r := aclRule{user: section, pattern: f[0] == "pattern", topic: f[2]}
			switch f[1] {
			case "read":
				r.read = true
			case "write":
				r.write = true
			case "readwrite":
				r.read, r.write = true, true
			case "deny":
				r.deny = true
			default:
				continue
			}
			t.rules = append(t.rules, r)
		}
	}
	x.access = t
	return t
}

// allows reports whether client may write (publish to topic, a topic
// name) or read (receive on topic, a name; subscribe to it, a filter when
// filter is set).
func (t *aclTab) allows(client, topic string, write, filter bool) bool {
	user, named := t.users[client]
	granted := false
	for i := range t.rules {
		r := &t.rules[i]
		rt := r.topic
		switch {
		case r.pattern:
			rt = strings.NewReplacer("%u", user, "%c", client).Replace(rt)
		case !named && r.user != "", named && r.user != user:
			continue
		}
		if !aclCovers(rt, topic, filter) {
			continue
		}
		if r.deny {
			return false
		}
		if (write && r.write) || (!write && r.read) {
			granted = true
		}
	}
	return granted
}

// aclCovers reports whether a rule's filter covers topic: a topic name
// when it matches it, a subscription's filter when every topic that can
// match the filter matches the rule (mosquitto_sub_matches_acl).
func aclCovers(rule, topic string, filter bool) bool {
	if !filter {
		return Matches(rule, topic)
	}
	rl, tl := strings.Split(rule, "/"), strings.Split(topic, "/")
	for i, r := range rl {
		if r == "#" {
			return true
		}
		if i >= len(tl) {
			return false
		}
		if r == "+" {
			if tl[i] == "#" {
				return false
			}
			continue
		}
		if r != tl[i] {
			return false
		}
	}
	return len(rl) == len(tl)
}

// CheckAccess checks the broker against its declared ACL.
func CheckAccess(h *History) []Violation { return checkAccess(newIndex(h)) }

func checkAccess(x *index) []Violation {
	t := x.accessTab()
	if t == nil {
		return nil
	}
	var out []Violation
	version := map[string]uint8{}  // client -> protocol level of its last CONNACK
	denied := map[string]int{}     // msg -> the step the broker received a PUBLISH of it its publisher may not write
	pending := map[string][2]int{} // client+id -> that step, for the v5 ack
	for i := range x.h.Events {
		e := &x.h.Events[i]
		p := &e.Packet
		switch {
		case e.Kind == Connected:
			version[e.Node] = e.Version
		case e.Kind == Subscribed:
			if f := aclFilter(e.Filter); !t.allows(e.Node, f, false, true) {
				out = append(out, NewViolation(Access, i, e.Node, fmt.Sprintf(
					"%s was granted the subscription %q, which its ACL read rights do not cover: the broker must refuse it (SUBACK 0x87 in v5, 0x80 in 3.1.1; MQTT 5.0 §5.4.2)", e.Node, e.Filter)))
			}
		case e.Kind == Received && e.Node == BrokerNode && p.Type == PUBLISH && p.Topic != "":
			if t.allows(e.Peer, p.Topic, true, false) {
				continue
			}
			if p.Msg != "" {
				if _, ok := denied[p.Msg]; !ok {
					denied[p.Msg] = i
				}
			}
			if p.QoS > 0 && version[e.Peer] == 5 {
				pending[fmt.Sprintf("%s\x00%d", e.Peer, p.ID)] = [2]int{i, 1}
			}
		case e.Kind == Sent && e.Node == BrokerNode && (p.Type == PUBACK || p.Type == PUBREC):
			k := fmt.Sprintf("%s\x00%d", e.Peer, p.ID)
			pub, ok := pending[k]
			if !ok {
				continue
			}
			delete(pending, k)
			if p.Reason < reasonFailure {
				out = append(out, NewViolation(Access, i, BrokerNode, fmt.Sprintf(
					"the broker answered %s's PUBLISH (id %d), on a topic its ACL does not let it write, with reason 0x%02x: a v5 publication it refuses gets 0x87 Not authorized (MQTT 5.0 §3.4.2.1, §3.5.2.1, §5.4.2)", e.Peer, p.ID, p.Reason), pub[0]))
			}
		case e.Kind == Sent && e.Node == BrokerNode && p.Type == PUBLISH:
			if at, ok := denied[p.Msg]; ok && p.Msg != "" {
				out = append(out, NewViolation(Access, i, BrokerNode, fmt.Sprintf(
					"msg %q sent to %s, but its publisher's ACL does not let it write topic %q: the broker must not route it (MQTT 5.0 §5.4.2; 3.1.1 [MQTT-3.3.5-2])", p.Msg, e.Peer, p.Topic), at))
				continue
			}
			if p.Topic != "" && !t.allows(e.Peer, p.Topic, false, false) {
				out = append(out, NewViolation(Access, i, BrokerNode, fmt.Sprintf(
					"msg %q on topic %q sent to %s, whose ACL does not let it read that topic (MQTT 5.0 §5.4.2)", p.Msg, p.Topic, e.Peer)))
			}
		}
	}
	return out
}

// aclDeniesWrite reports whether x's declared ACL keeps client from
// publishing to topic (false without an ACL, or without a topic).
func (x *index) aclDeniesWrite(client, topic string) bool {
	t := x.accessTab()
	return t != nil && topic != "" && !t.allows(client, topic, true, false)
}

// aclFilter is the filter the ACL judges of a subscription: a shared one's
// without its "$share/<group>/" prefix.
func aclFilter(filter string) string {
	if inner, ok := sharedInner(filter); ok {
		return inner
	}
	return filter
}
