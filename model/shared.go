package model

import (
	"fmt"
	"slices"
	"strings"
)

// sharePrefix starts a shared subscription's filter (MQTT 5.0 §4.8.2).
const sharePrefix = "$share/"

// sharedInner returns the filter of a shared subscription
// "$share/{ShareName}/{filter}", or false for any other filter.
func sharedInner(f string) (string, bool) {
	rest, ok := strings.CutPrefix(f, sharePrefix)
	if !ok {
		return "", false
	}
	_, inner, ok := strings.Cut(rest, "/")
	return inner, ok && inner != ""
}

// CheckShared checks shared subscriptions (MQTT 5.0 §4.8.2): a group is the
// sessions subscribed to one "$share/{ShareName}/{filter}", and each
// message goes to one of them instead of to all.
//
//   - Every message a publisher accepted at QoS>=1 whose topic matches the
//     group's filter, routed while a member held the subscription (as
//     NoLoss counts a subscription: persistent, QoS>=1, in effect when the
//     broker received the message), is delivered to at least one member:
//     none is lost when members crash, leave or end their sessions (the
//     broker hands a member's messages on), except a QoS 2 message sent to
//     a member whose session then ended: it may go to no other member
//     [MQTT-4.8.2-5]. The broker's choice of member shows in no packet
//     when it never sends, so none is owed by a group a node joined at
//     QoS 0 (that member's copy goes at QoS 0, at most once, §4.3.1), no
//     QoS 2 one when a joined node it never sent it to then connected
//     with Clean Start (cleanedUnsent), and none whose Message Expiry ran
//     out unsent while a joined node could not be sent to (lossexpiry.go)
//     [MQTT-3.3.2-5]; nor one the broker refused with a PUBACK or
//     PUBREC of reason code >= 0x80 (refused.go); nor one whose copy for a
//     joined node the broker dropped as its declared limits allow
//     (droplimits.go).
//   - A QoS 2 message is delivered to at most one member of a group whose
//     members hold QoS 2 subscriptions, when those members have no other
//     subscription the message matches (their copies from it would count).
//
// Judged at the end of a history whose liveness phase ran, like NoLoss.
func CheckShared(h *History) []Violation { return checkShared(newIndex(h)) }

// sharedGroup is the subscriptions of one shared filter.
type sharedGroup struct {
	key, inner string
	members    []*sub
	// joined lists every node that asked for the group's subscription
	// (its SUBSCRIBE as the broker received it, or its Subscribed event):
	// a delivery to any of them counts, though only members owe one.
	joined []int32
	// cleans are the steps of the Clean Start CONNECTs the broker received
	// from each joined node.
	cleans map[int32][]int
	qos0   bool // a node asked for the group's subscription at QoS 0
}

func checkShared(x *index) []Violation {
	if x.liveness < 0 || x.cutoff { // a cut history: what is owed is unfinished (Cutoff)
		return nil
	}
	scan := collectSubs(x)
	groups := sharedGroups(scan)
	if len(groups) == 0 {
		releasePairs(x, &scan.firstSent)
		return nil
	}
	joinGroups(x, groups)
	delivered := newPairs[int32](x) // node, msg -> deliveries
	for i, k := range x.kinds {
		if k.kind == Delivered {
			d := &x.ev[i]
			delivered.set(d.node, d.msg, delivered.get(d.node, d.msg)+1)
		}
	}
	var out []Violation
	var expired *expiredOffline // built at the first candidate loss
	refused := refusedMsgs(x)
	for _, m := range collectMessages(x) {
		if m.clean || x.msgs[m.msg] == "" {
			continue // an empty payload carries no message id: its copies cannot be told apart (as QoS2ExactlyOnce and Order)
		}
		if isRefused(refused, m.msg) {
			continue // refused by the broker (PUBACK/PUBREC >= 0x80): owed to no member [MQTT-4.3.2-4] [MQTT-4.3.3-8] (refused.go)
		}
		topic := x.topics[m.tid]
		for _, g := range groups {
			if !Matches(g.inner, topic) || !g.owes(&m, &scan.firstSent) {
				continue
			}
			got := g.deliveredTo(&m, &delivered)
			switch {
			case len(got) == 0 && g.expiredUnsent(x, &expired, &m, &scan.firstSent):
				// The broker may have chosen a member it could not send
				// to before m's Message Expiry ran out [MQTT-3.3.2-5].
			case len(got) == 0 && g.qos0:
				// The broker may choose a member holding the group's
				// subscription at QoS 0: its copy goes at QoS 0, at most
				// once (§4.3.1, [MQTT-3.8.4-8]), and may be lost.
			case len(got) == 0 && g.droppedAsDeclared(x, m.msg):
				// The broker dropped the copy of the member it chose as
				// its declared limits allow (droplimits.go) [MQTT-4.1.0-1].
			case len(got) == 0 && m.qos == 2 && g.cleanedUnsent(&m, &scan.firstSent):
				// The broker may have queued it for a joined session it
				// never sent it to, which a clean start then ended
				// [MQTT-4.8.2-5]: its choice shows in no packet.
			case len(got) == 0 && m.qos == 2 && g.sentThenCleaned(&m, &scan.firstSent):
				// [MQTT-4.8.2-5]: a QoS 2 message sent to a member whose
				// session then ended goes to no other member.
			case len(got) == 0:
				out = append(out, NewViolation(SharedDelivery, int(m.step), x.nodes[m.node],
					fmt.Sprintf("msg %q (%s, %q, QoS %d) delivered to no member of the shared subscription %q (members %s)",
						x.msgs[m.msg], x.nodes[m.node], topic, m.qos, g.key, g.names(x)),
					x.liveness))
			case m.qos == 2 && len(got) > 1 && g.exactlyOnce(scan, got, topic):
				out = append(out, NewViolation(SharedDelivery, int(m.step), x.nodes[m.node],
					fmt.Sprintf("QoS 2 msg %q (%s, %q) delivered to %d members of the shared subscription %q (%s); one only [MQTT-4.8.2-5]",
						x.msgs[m.msg], x.nodes[m.node], topic, len(got), g.key, nodeNames(x, got)),
					x.liveness))
			}
		}
	}
	releasePairs(x, &delivered)
	releasePairs(x, &scan.firstSent)
	return out
}

// droppedAsDeclared reports whether the broker recorded a drop of a joined
// node's copy of msg that its declared limits allow.
func (g *sharedGroup) droppedAsDeclared(x *index, msg int32) bool {
	j := x.dropJudgeOf()
	for _, n := range g.joined {
		if excused, ok := j.recorded(n, msg); ok && excused {
			return true
		}
	}
	return false
}

// sharedGroups gathers the shared subscriptions of the scan by filter, in
// filter order.
func sharedGroups(scan *subScan) []*sharedGroup {
	byKey := map[string]*sharedGroup{}
	var keys []string
	for _, s := range scan.subs {
		inner, ok := sharedInner(s.filter)
		if !ok {
			continue
		}
		g := byKey[s.filter]
		if g == nil {
			g = &sharedGroup{key: s.filter, inner: inner}
			byKey[s.filter] = g
			keys = append(keys, s.filter)
		}
		g.members = append(g.members, s)
	}
	slices.Sort(keys)
	out := make([]*sharedGroup, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// joinGroups fills each group's joined nodes (and qos0): a session whose persistence
// the history does not show (its SUBACK lost, no Subscribed event) is no
// member NoLoss counts, yet the broker delivers to it.
func joinGroups(x *index, groups []*sharedGroup) {
	for i, k := range x.kinds {
		e := &x.h.Events[i]
		var node int32
		var filter string
		var qos uint8
		switch {
		case k.kind == Received && e.Packet.Type == CONNECT && e.Packet.Clean && x.ev[i].node == brokerID:
			for _, g := range groups {
				if g.cleans == nil {
					g.cleans = map[int32][]int{}
				}
				g.cleans[x.peerOf(i)] = append(g.cleans[x.peerOf(i)], i)
			}
			continue
		case k.kind == Subscribed:
			node, filter, qos = x.ev[i].node, e.Filter, e.QoS
		case k.kind == Received && e.Packet.Type == SUBSCRIBE && x.ev[i].node == brokerID:
			node, filter, qos = x.peerOf(i), e.Packet.Filter, e.Packet.QoS
		default:
			continue
		}
		for _, g := range groups {
			if g.key != filter {
				continue
			}
			g.qos0 = g.qos0 || qos == 0
			if !slices.Contains(g.joined, node) {
				g.joined = append(g.joined, node)
			}
		}
	}
}

// owes reports whether a member's subscription counts for m (as NoLoss
// counts one).
func (g *sharedGroup) owes(m *accepted, firstSent *pairs[int32]) bool {
	for _, s := range g.members {
		if s.owes(m, firstSent) {
			return true
		}
	}
	return false
}

// sentThenCleaned reports whether the broker sent m to a node of the group
// whose session a clean start then ended: a Clean Start CONNECT the broker
// received after the first send (a member's recorded end may be an earlier
// clean start a broker crash interrupted). The node need not be a member
// NoLoss counts: one whose SUBACK it never read (it closed the connection
// first) is in the group as the broker sees it, and the broker may choose
// it [MQTT-4.8.2-5].
func (g *sharedGroup) sentThenCleaned(m *accepted, firstSent *pairs[int32]) bool {
	for _, s := range g.members {
		at := int(firstSent.get(s.node, m.msg)) - 1
		if at >= 0 && s.how == endClean && at < s.end {
			return true
		}
	}
	for _, n := range g.joined {
		at := int(firstSent.get(n, m.msg)) - 1
		if at < 0 {
			continue
		}
		for _, c := range g.cleans[n] {
			if c > at {
				return true
			}
		}
	}
	return false
}

// expiredUnsent reports whether m's copy for some node that joined the
// group may have expired unsent (see expiredOffline), or was sent to a
// node whose session ended after m expired; *e is built on the first call.
func (g *sharedGroup) expiredUnsent(x *index, e **expiredOffline, m *accepted, firstSent *pairs[int32]) bool {
	if *e == nil {
		*e = newExpiredOffline(x)
	}
	dl, ok := (*e).deadline(m)
	for _, n := range g.joined {
		sent := firstSent.get(n, m.msg) != 0
		if (*e).excused(m, n, sent) {
			return true
		}
		if !ok || !sent {
			continue
		}
		// Sent to n, whose session a clean start ended after m expired:
		// handing m on to another member would be a first send after its
		// expiry [MQTT-3.3.2-5].
		for _, c := range g.cleans[n] {
			if x.h.Events[c].Time >= dl {
				return true
			}
		}
	}
	return false
}

// cleanedUnsent reports whether a node that joined the group, to which
// the broker never sent m, connected with Clean Start after the broker
// received m.
func (g *sharedGroup) cleanedUnsent(m *accepted, firstSent *pairs[int32]) bool {
	for _, n := range g.joined {
		if firstSent.get(n, m.msg) != 0 {
			continue // sent: sentThenCleaned's
		}
		for _, c := range g.cleans[n] {
			if c > int(m.ref) {
				return true
			}
		}
	}
	return false
}

// deliveredTo lists the distinct member nodes that delivered m.
func (g *sharedGroup) deliveredTo(m *accepted, delivered *pairs[int32]) []int32 {
	var got []int32
	for _, s := range g.members {
		if delivered.get(s.node, m.msg) > 0 && !slices.Contains(got, s.node) {
			got = append(got, s.node)
		}
	}
	for _, n := range g.joined {
		if delivered.get(n, m.msg) > 0 && !slices.Contains(got, n) {
			got = append(got, n)
		}
	}
	return got
}

// exactlyOnce reports whether the members in got owe m at most one delivery
// between them: each holds the group's subscription at QoS 2 and no other
// subscription that matches topic.
func (g *sharedGroup) exactlyOnce(scan *subScan, got []int32, topic string) bool {
	for _, n := range got {
		for _, s := range scan.subs {
			if s.node != n {
				continue
			}
			if s.filter == g.key && s.qos < 2 {
				return false
			}
			if s.filter != g.key && subMatches(s.filter, topic) {
				return false
			}
		}
	}
	return true
}

// subMatches reports whether a subscription's filter (shared or not)
// matches topic.
func subMatches(f, topic string) bool {
	if inner, ok := sharedInner(f); ok {
		f = inner
	}
	return Matches(f, topic)
}

// names lists the group's member nodes.
func (g *sharedGroup) names(x *index) string {
	var ids []int32
	for _, s := range g.members {
		if !slices.Contains(ids, s.node) {
			ids = append(ids, s.node)
		}
	}
	return nodeNames(x, ids)
}

// nodeNames joins the names of nodes.
func nodeNames(x *index, ids []int32) string {
	names := make([]string, len(ids))
	for i, n := range ids {
		names[i] = x.nodes[n]
	}
	return strings.Join(names, ", ")
}
