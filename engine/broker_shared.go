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
// filter, so a member's end can hand it on after a restart too.

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
		b.enqueue(mem.s, brokerOut{msg: m.msg, qos: min(m.qos, mem.opts.QoS), retain: m.retain, share: g.id})
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

// sharedCopy names a QoS 2 message's copy for a group: the inbound record
// it came from (brokerMsg.originSeq) and the group.
type sharedCopy struct {
	origin uint64
	share  uint32
}

// dedupeShared drops, at restart, the group copies an interrupted session
// end left twice. endSession hands a session's queued group copies on to
// other members and then deletes its own records (its subscriptions among
// them): a crash in between keeps both copies, and the client, reconnecting
// without a clean start, would get the one while another member gets the
// other, so a QoS 2 message would reach the group twice [MQTT-4.3.3-10]
// [MQTT-4.8.2-5]. Of the copies of one message for one group, a queued one
// goes when another is in flight or was queued before it; one in flight
// may have been sent and stays. Copies are known by the QoS 2 inbound
// record they came from (every-change persistence); the others are at
// least once anyway.
func (b *Broker) dedupeShared() {
	if len(b.groupKeys) == 0 {
		return
	}
	first := map[sharedCopy]uint64{} // the earliest copy's seq; 0: one is in flight
	ids := sortedKeys(b.sessions)
	for _, id := range ids {
		s := b.sessions[id]
		for _, m := range s.inflight {
			if k, ok := b.copyKey(&m); ok {
				first[k] = 0
			}
		}
		for _, m := range s.queue {
			if k, ok := b.copyKey(&m); ok {
				if f, seen := first[k]; !seen || (f != 0 && m.seq < f) {
					first[k] = m.seq
				}
			}
		}
	}
	for _, id := range ids {
		b.dropDuplicates(b.sessions[id], first)
	}
}

// dropDuplicates removes the queued group copies of s that are not the
// first of their message (dedupeShared), with their records.
func (b *Broker) dropDuplicates(s *brokerSession, first map[sharedCopy]uint64) {
	dup := func(m brokerOut) bool {
		k, ok := b.copyKey(&m)
		return ok && first[k] != m.seq
	}
	if !slices.ContainsFunc(s.queue, dup) {
		return
	}
	queue := s.queue
	s.queue, s.queueBase = nil, nil
	for _, m := range queue {
		if dup(m) {
			b.store.del(m.key)
			continue
		}
		s.pushQueue(m)
	}
}

// copyKey returns the sharedCopy of a session's copy, if it is a group's
// copy of a QoS 2 message with an inbound record.
func (b *Broker) copyKey(m *brokerOut) (sharedCopy, bool) {
	return sharedCopy{origin: m.msg.originSeq, share: m.share}, m.share != 0 && m.msg.originSeq != 0
}
