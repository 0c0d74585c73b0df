package engine

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// subOptions are the options of one subscription of one session.
type subOptions struct {
	QoS               packet.QoS
	NoLocal           bool
	RetainAsPublished bool
	RetainHandling    byte
	SubID             uint32 // v5 Subscription Identifier, 0 for none (§3.8.2.1.2)
}

// topicNode is one level of the subscription tree.
type topicNode struct {
	children map[string]*topicNode
	// plus and hash are children["+"] and children["#"], kept at hand: every
	// level of every match looks for them.
	plus, hash *topicNode
	subs       []subMatch // the subscriptions ending here, in client-id order
}

// topicTree holds every subscription of every session, keyed by filter level.
type topicTree struct {
	root topicNode
	// dollarWild is the MutDollarWildcard canary: first-level wildcards
	// match "$" topics too.
	dollarWild bool
}

// subMatch is one session a topic matched (or one subscription of a node),
// with the options to use.
type subMatch struct {
	client string
	s      *brokerSession // the session of client: the tree holds live sessions only
	opts   subOptions
}

// validFilter reports whether f is a valid, non-shared topic filter
// [MQTT-4.7.1-2] [MQTT-4.7.1-3] [MQTT-4.7.3-1].
func validFilter(f string) bool {
	if f == "" {
		return false // [MQTT-4.7.3-1]
	}
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '#':
			if (i > 0 && f[i-1] != '/') || i != len(f)-1 {
				return false // [MQTT-4.7.1-2]
			}
		case '+':
			if (i > 0 && f[i-1] != '/') || (i < len(f)-1 && f[i+1] != '/') {
				return false // [MQTT-4.7.1-3]
			}
		}
	}
	return true
}

// validTopicName reports whether t is a valid topic name: non-empty, no
// wildcards [MQTT-3.3.2-2] [MQTT-4.7.3-1].
func validTopicName(t []byte) bool {
	return len(t) > 0 && bytes.IndexByte(t, '+') < 0 && bytes.IndexByte(t, '#') < 0
}

// isShared reports whether f is a v5 shared subscription filter.
func isShared(f string) bool { return strings.HasPrefix(f, "$share/") }

// add inserts or replaces the subscription of session s to filter and
// reports whether one existed before.
func (t *topicTree) add(filter string, s *brokerSession, o subOptions) bool {
	n := &t.root
	for level := range strings.SplitSeq(filter, "/") {
		if n.children == nil {
			n.children = make(map[string]*topicNode)
		}
		c := n.children[level]
		if c == nil {
			c = &topicNode{}
			n.children[level] = c
			n.setWild(level, c)
		}
		n = c
	}
	i, existed := n.find(s.id)
	if existed {
		n.subs[i] = subMatch{client: s.id, s: s, opts: o}
		return true
	}
	n.subs = slices.Insert(n.subs, i, subMatch{client: s.id, s: s, opts: o})
	return false
}

// setWild keeps plus and hash in step with children after level was set to
// c (nil: deleted).
func (n *topicNode) setWild(level string, c *topicNode) {
	switch level {
	case "+":
		n.plus = c
	case "#":
		n.hash = c
	}
}

// find returns the position of client's subscription in n.subs, or where
// it would go, and whether it is there.
func (n *topicNode) find(client string) (int, bool) {
	return slices.BinarySearchFunc(n.subs, client, func(m subMatch, c string) int { return strings.Compare(m.client, c) })
}

// remove deletes the subscription of client to filter, prunes empty nodes,
// and reports whether it existed.
func (t *topicTree) remove(filter, client string) bool {
	return t.root.remove(strings.Split(filter, "/"), client)
}

func (n *topicNode) remove(levels []string, client string) bool {
	if len(levels) == 0 {
		i, ok := n.find(client)
		if !ok {
			return false
		}
		n.subs = slices.Delete(n.subs, i, i+1)
		return true
	}
	c := n.children[levels[0]]
	if c == nil {
		return false
	}
	found := c.remove(levels[1:], client)
	if len(c.subs) == 0 && len(c.children) == 0 {
		delete(n.children, levels[0])
		n.setWild(levels[0], nil)
	}
	return found
}

// match appends to out every subscription matching topic, one per client in
// client-id order; a client with several matching filters gets the highest
// QoS, NoLocal only if every match has it, and RetainAsPublished if any has it.
func (t *topicTree) match(topic []byte, out []subMatch) []subMatch {
	start := len(out)
	if len(topic) > 0 {
		// [MQTT-4.7.2-1] wildcards at the first level never match "$" topics.
		out = t.root.match(topic, topic[0] == '$' && !t.dollarWild, out)
	}
	found := out[start:]
	if sortedUnique(found) {
		return out // the usual match: one node's subscriptions, already in client-id order
	}
	slices.SortFunc(found, func(a, b subMatch) int { return cmp.Compare(a.client, b.client) })
	w := start
	for i := start; i < len(out); i++ {
		m := out[i]
		if w > start && out[w-1].client == m.client {
			p := &out[w-1]
			p.opts.QoS = max(p.opts.QoS, m.opts.QoS)
			p.opts.NoLocal = p.opts.NoLocal && m.opts.NoLocal
			p.opts.RetainAsPublished = p.opts.RetainAsPublished || m.opts.RetainAsPublished
			continue
		}
		out[w] = m
		w++
	}
	return out[:w]
}

// matchEach appends to out every subscription matching topic, one per
// matching filter, unmerged: the MutCopyPerSubscription canary routes a
// copy to each.
func (t *topicTree) matchEach(topic []byte, out []subMatch) []subMatch {
	if len(topic) > 0 {
		out = t.root.match(topic, topic[0] == '$' && !t.dollarWild, out)
	}
	return out
}

// sortedUnique reports whether the matches are in strictly increasing
// client-id order: nothing to sort or merge.
func sortedUnique(found []subMatch) bool {
	for i := 1; i < len(found); i++ {
		if found[i-1].client >= found[i].client {
			return false
		}
	}
	return true
}

// match walks the remaining levels rest below n. dollar disables the
// wildcards of this level (the first level of a "$" topic).
func (n *topicNode) match(rest []byte, dollar bool, out []subMatch) []subMatch {
	level, tail, last := rest, []byte(nil), true
	if i := bytes.IndexByte(rest, '/'); i >= 0 {
		level, tail, last = rest[:i], rest[i+1:], false
	}
	if !dollar {
		if h := n.hash; h != nil {
			out = h.collect(out)
		}
		if p := n.plus; p != nil {
			out = p.step(tail, last, out)
		}
	}
	if c := n.children[string(level)]; c != nil {
		out = c.step(tail, last, out)
	}
	return out
}

// step continues the walk at n after it consumed one level.
func (n *topicNode) step(tail []byte, last bool, out []subMatch) []subMatch {
	if !last {
		return n.match(tail, false, out)
	}
	out = n.collect(out)
	if h := n.hash; h != nil {
		out = h.collect(out) // "a/#" also matches "a" [MQTT-4.7.1-2]
	}
	return out
}

func (n *topicNode) collect(out []subMatch) []subMatch {
	return append(out, n.subs...)
}

// filterMatches reports whether filter matches topic, with the same rules as
// the tree: "+" one level, "#" the rest (and the parent level), and no
// first-level wildcard for "$" topics [MQTT-4.7.2-1].
func filterMatches(filter string, topic []byte) bool {
	if len(topic) == 0 || filter == "" {
		return false
	}
	if topic[0] == '$' && (filter[0] == '+' || filter[0] == '#') {
		return false // [MQTT-4.7.2-1]
	}
	for {
		fl, frest, flast := filter, "", true
		if i := strings.IndexByte(filter, '/'); i >= 0 {
			fl, frest, flast = filter[:i], filter[i+1:], false
		}
		if fl == "#" {
			return true
		}
		tl, trest, tlast := topic, []byte(nil), true
		if i := bytes.IndexByte(topic, '/'); i >= 0 {
			tl, trest, tlast = topic[:i], topic[i+1:], false
		}
		if fl != "+" && fl != string(tl) {
			return false
		}
		switch {
		case flast && tlast:
			return true
		case tlast:
			return frest == "#" // "a/#" matches "a"
		case flast:
			return false
		}
		filter, topic = frest, trest
	}
}
