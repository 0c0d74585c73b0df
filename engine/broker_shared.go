package engine

import (
	"slices"
	"strings"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Shared subscriptions (MQTT 5.0 §4.8.2): a SUBSCRIBE to
// "$share/{ShareName}/{filter}" joins the session to the group of that full
// filter. Each message matching the filter goes to one member of each group
// (round robin over the members, connected ones first) instead of to every
// subscriber, with the QoS of that member's subscription. A message queued or
// in flight to a member whose session ends goes to another member, except a
// QoS 2 message already sent, which must not go to anyone else
// [MQTT-4.8.2-5]. Retained messages are not sent when a shared subscription
// is made (§3.3.1.3).
//
// Groups live beside the topic tree, not in it: a session may hold a shared
// and an ordinary subscription to the same filter. Memberships are ordinary
// subscriptions of the session (s.subs, the sub records) keyed by the full
// filter, so they persist and restore like the others; a message's group is
// kept with it as the group's number, and in its out record as the full
// filter, so a member's end can hand it on after a restart too. A copy
// handed on names, in its record, the copy it replaces, so a restart after
// an end a crash interrupted keeps one of the two (dropHandedOn).

// sharedGroup is one shared subscription filter and its members.
type sharedGroup struct {
	key     string // the full filter, "$share/{ShareName}/{filter}"
	filter  string // the filter after the ShareName
	id      uint32 // number of the group in brokerOut.share
	members []sharedMember
	next    int // round-robin position: the member to try first
}

// sharedMember is one session of a group with its subscription's options.
type sharedMember struct {
	s    *brokerSession
	opts subOptions
}

// sharedFilter splits a v5 shared subscription filter into its ShareName
// and filter; the codec has checked its form [MQTT-4.8.2-1] [MQTT-4.8.2-2].
func sharedFilter(f string) (filter string, ok bool) {
	rest, ok := strings.CutPrefix(f, sharePrefix)
	if !ok {
		return "", false
	}
	_, filter, ok = strings.Cut(rest, "/")
	return filter, ok && filter != ""
}

// sharePrefix starts a v5 shared subscription filter.
const sharePrefix = "$share/"

// shareGroup returns the group of a full filter, made when absent.
func (b *Broker) shareGroup(key string) *sharedGroup {
	if g := b.shared[key]; g != nil {
		return g
	}
	filter, _ := sharedFilter(key)
	b.groupSeq++
	g := &sharedGroup{key: key, filter: filter, id: b.groupSeq}
	if b.shared == nil {
		b.shared, b.groupByID = make(map[string]*sharedGroup), make(map[uint32]*sharedGroup)
	}
	b.shared[key], b.groupByID[g.id] = g, g
	i, _ := slices.BinarySearch(b.groupKeys, key)
	b.groupKeys = slices.Insert(b.groupKeys, i, key)
	return g
}

// shareAdd makes s a member of the group of key (or updates its options).
func (b *Broker) shareAdd(key string, s *brokerSession, o subOptions) {
	g := b.shareGroup(key)
	i, found := slices.BinarySearchFunc(g.members, s.id, func(m sharedMember, id string) int { return strings.Compare(m.s.id, id) })
	if found {
		g.members[i].opts = o
		return
	}
	g.members = slices.Insert(g.members, i, sharedMember{s: s, opts: o})
}

// shareRemove takes s out of the group of key and reports whether it was a
// member; an empty group is forgotten.
func (b *Broker) shareRemove(key string, s *brokerSession) bool {
	g := b.shared[key]
	if g == nil {
		return false
	}
	i, found := slices.BinarySearchFunc(g.members, s.id, func(m sharedMember, id string) int { return strings.Compare(m.s.id, id) })
	if !found {
		return false
	}
	g.members = slices.Delete(g.members, i, i+1)
	if g.next > i {
		g.next--
	}
	if len(g.members) == 0 {
		delete(b.shared, key)
		delete(b.groupByID, g.id)
		j, _ := slices.BinarySearch(b.groupKeys, key)
		b.groupKeys = slices.Delete(b.groupKeys, j, j+1)
	}
	return true
}

// pick returns the member that gets the group's next message: the next
// connected one in round-robin order, or the next one when none is
// connected (its copy waits in its session).
func (g *sharedGroup) pick(skip func(*brokerSession) bool) (sharedMember, bool) {
	n := len(g.members)
	for pass := 0; pass < 2; pass++ {
		for k := 0; k < n; k++ {
			i := (g.next + k) % n
			m := g.members[i]
			if skip != nil && skip(m.s) || (pass == 0 && m.s.conn == nil) {
				continue
			}
			g.next = (i + 1) % n
			return m, true
		}
	}
	return sharedMember{}, false
}

// fanoutShared gives a message to one member of every group whose filter
// matches its topic (phase one of a fanout, beside the ordinary matches).
// skip lists the sessions that already hold a copy (a fanout redone after a
// restart): a group one of whose members holds one is done.
func (b *Broker) fanoutShared(m brokerMsg, qos packet.QoS, retain bool, skip map[string]bool) {
	for _, key := range b.groupKeys {
		g := b.shared[key]
		if !filterMatches(g.filter, m.topic()) || g.holds(skip) {
			continue
		}
		if b.pol.Mutations&MutSharedToAll != 0 { // the canary: every member gets a copy
			for _, mem := range g.members {
				b.enqueue(mem.s, brokerOut{msg: m, qos: min(qos, mem.opts.QoS), share: g.id, retain: retain && mem.opts.RetainAsPublished})
			}
			continue
		}
		mem, ok := g.pick(func(s *brokerSession) bool { return !b.mayReceive(s, m.topic()) })
		if !ok {
			continue
		}
		out := brokerOut{msg: m, qos: min(qos, mem.opts.QoS), share: g.id} // [MQTT-3.8.4-8]
		out.retain = retain && mem.opts.RetainAsPublished
		b.enqueue(mem.s, out)
	}
}

// holds reports whether a member of g is in skip.
func (g *sharedGroup) holds(skip map[string]bool) bool {
	if len(skip) == 0 {
		return false
	}
	for _, m := range g.members {
		if skip[m.s.id] {
			return true
		}
	}
	return false
}

// handOn gives the shared messages of an ending session to other members of
// their groups: every queued one, and every one in flight but a QoS 2
// message already sent [MQTT-4.8.2-5] (or whose PUBREC arrived: delivered).
// The caller has taken s out of its groups already.
func (b *Broker) handOn(s *brokerSession) {
	if len(b.groupKeys) == 0 || b.pol.Mutations&MutSharedDropOnEnd != 0 { // the canary drops them
		return
	}
	var moving []brokerOut
	for _, list := range [2][]brokerOut{s.inflight, s.queue} {
		for _, m := range list {
			if m.share != 0 && !(m.qos == 2 && m.sent) && !m.pubrel {
				moving = append(moving, m)
			}
		}
	}
	if len(moving) == 0 {
		return
	}
	b.resetFan()
	for _, m := range moving {
		g := b.groupByID[m.share]
		if g == nil {
			continue // the group ended with this member: no one to give it to
		}
		mem, ok := g.pick(nil)
		if !ok {
			continue
		}
		b.enqueue(mem.s, brokerOut{msg: m.msg, qos: min(m.qos, mem.opts.QoS), retain: m.retain, share: g.id, from: m.seq})
	}
	b.fanoutSend()
}

// shareKeyOf returns the full filter of a message's group for its out
// record ("" for an ordinary copy, or a group that has ended).
func (b *Broker) shareKeyOf(m *brokerOut) string {
	if g := b.groupByID[m.share]; m.share != 0 && g != nil {
		return g.key
	}
	return ""
}

// sharedSub reports whether the session's subscription to f is a shared
// one: a v5 session's "$share/" filter (in 3.1.1 it is an ordinary filter).
func sharedSub(s *brokerSession, f string) bool {
	return s.version == packet.V5 && isShared(f)
}

// dropHandedOn finds, at restart, the sessions whose end a crash
// interrupted. endSession hands a session's group copies on to other
// members (their records, synced, name the copy each replaces: from) and
// then deletes the session's records; a crash in between keeps both. The
// session would come back a member of its groups holding copies another
// member holds too: its next end would hand them on a second time (the
// message reaching the group twice, and the member it went to twice as two
// first copies: the one per subscription of [MQTT-3.3.4-2]; QoS 2
// [MQTT-4.3.3-10] [MQTT-4.8.2-5]), and a message handed on could come back
// to it. The copies handed on win (they may have been sent): the ones they
// replace go now, and the session's end is finished at the first Step
// (finishEnds), as the client's unanswered Clean Start or the session's
// expiry wanted. Sequence numbers are unique across sessions, so a copy's
// seq names it.
func (b *Broker) dropHandedOn() {
	if len(b.groupKeys) == 0 {
		return
	}
	var moved map[uint64]bool
	ids := sortedKeys(b.sessions)
	for _, id := range ids {
		s := b.sessions[id]
		for _, list := range [2][]brokerOut{s.inflight, s.queue} {
			for i := range list {
				if f := list[i].from; f != 0 {
					if moved == nil {
						moved = map[uint64]bool{}
					}
					moved[f] = true
				}
			}
		}
	}
	if moved == nil {
		return
	}
	for _, id := range ids {
		if b.dropMoved(b.sessions[id], moved) {
			b.unfinished = append(b.unfinished, id)
		}
	}
}

// dropMoved removes the copies of s whose seq is in moved, with their
// records and packet ids, and reports whether there were any.
func (b *Broker) dropMoved(s *brokerSession, moved map[uint64]bool) bool {
	gone := func(m brokerOut) bool { return moved[m.seq] }
	found := false
	if slices.ContainsFunc(s.inflight, gone) {
		found = true
		inflight := s.inflight
		s.inflight, s.inflBase = nil, nil
		for _, m := range inflight {
			if gone(m) {
				b.store.del(m.key)
				s.ids.Free(m.id)
				continue
			}
			s.pushInflight(m)
		}
	}
	if slices.ContainsFunc(s.queue, gone) {
		found = true
		queue := s.queue
		s.queue, s.queueBase = nil, nil
		for _, m := range queue {
			if gone(m) {
				b.store.del(m.key)
				continue
			}
			s.pushQueue(m)
		}
	}
	return found
}

// finishEnds ends, at the first Step after a restart, the sessions whose
// end a crash interrupted (dropHandedOn): their other group copies go to
// other members, their records go. Nothing of a session's end is redone
// before handOn (its will, if due, went before it).
func (b *Broker) finishEnds() {
	for _, id := range b.unfinished {
		if s := b.sessions[id]; s != nil {
			b.endSession(s)
		}
	}
	b.unfinished = nil
}
