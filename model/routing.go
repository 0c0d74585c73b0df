package model

import (
	"fmt"
	"strings"
)

// The routing checks judge what the broker sends each client against the
// subscriptions and retained messages the broker itself acknowledged: one
// pass (checkRouting) follows, from the broker's own events, each client's
// subscriptions (its Received SUBSCRIBE/UNSUBSCRIBE of one filter and its
// Sent SUBACK/UNSUBACK), the retained message of each topic (its Received
// PUBLISHes with RETAIN=1) and the copies each Received PUBLISH owes each
// client, and matches every first (DUP=0) PUBLISH the broker sends a
// client to the copy it is:
//
//	GrantedQoS     a copy goes at min(publish QoS, the maximum QoS granted to the client's matching filters) [MQTT-3.8.4-8] [MQTT-3.3.4-2]
//	Unsubscribe    nothing published after the UNSUBACK of a client's last matching filter reaches it [MQTT-3.10.4-2]
//	Overlap        one copy per publication and client, however many of its filters match [MQTT-3.3.4-2]; a group member may also get a copy handed on from another (§4.8.2)
//	Retained       a SUBACK brings the topic's last retained message with RETAIN=1 per Retain Handling, never a cleared or replaced one [MQTT-3.3.1-5] [MQTT-3.3.1-6] [MQTT-3.3.1-9] [MQTT-3.3.1-10] [MQTT-3.3.1-11] [MQTT-3.3.1-12]
//	MessageExpiry  no first send after the Message Expiry Interval ran out; the interval forwarded is what remains [MQTT-3.3.2-5] [MQTT-3.3.2-6]
//	FlowResume     no QoS>0 copy owed a client connected at the end is parked for good: a window that opens lets it go [MQTT-4.9.0-2] [MQTT-3.3.4-9]
//	SubscriptionIDs a copy to a v5 client carries the Subscription Identifiers of the subscriptions it is sent for (subids.go) [MQTT-3.3.4-3] [MQTT-3.3.4-4] [MQTT-3.3.4-5]
//	DollarTopics   a copy on a topic starting with '$' that none of the client's filters matches, but one starting with # or + would without the $ rule, names that rule [MQTT-4.7.2-1] (not Unsubscribe)
//
// Doubt is resolved for the broker: a subscription whose SUBSCRIBE the
// broker received but did not yet acknowledge may or may not exist (and so
// for an UNSUBSCRIBE not yet acknowledged); a client that sent a SUBSCRIBE
// or UNSUBSCRIBE of several filters is not judged; a topic whose retained
// message a broker crash may have lost or kept is not judged until its next
// retained PUBLISH; a PUBLISH the broker cannot tie to a publication
// (a will message) is not judged, nor are the broker's packets when the
// history does not name their peer.
var routingSet = SetOf(GrantedQoS, Unsubscribe, Overlap, Retained, MessageExpiry, FlowResume, Will, SubscriptionIDs, DollarTopics)

// routingEvents are the events checkRouting reads.
var routingEvents = eventSet{
	kinds:    kindBits(Crash, ConnClosed, Connected) | willKinds,
	sent:     typeBits(PUBLISH, SUBACK, UNSUBACK, CONNACK, PUBACK, PUBREC),
	received: typeBits(PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PUBREL, CONNECT, DISCONNECT, PUBACK, PUBCOMP),
}.codes()

// routeSub is a subscription of a client as far as the broker's events
// tell: maybe while its SUBSCRIBE (or an UNSUBSCRIBE of it) awaits its ack;
// lo and hi bound the QoS granted.
type routeSub struct {
	since  int64 // when the broker granted it (a new subscription's SUBACK)
	maybe  bool
	lo, hi uint8
	opts   uint8
	id     subIDState // its Subscription Identifier (subids.go)
}

// routeClient is one client's subscriptions, pending requests and the
// copies it is owed.
type routeClient struct {
	subs    map[string]*routeSub
	unknown bool                // a request of several filters: not judged
	pending map[uint16]routeReq // SUBSCRIBE/UNSUBSCRIBE by packet id, awaiting ack
	copyIdx keyTab              // index in copies
	copies  []routeCopy
	owed    []int32 // copies whose retained copy must be sent
	// loose counts, by topic, the retained copies SUBACKs owe of a topic a
	// broker crash left in doubt: a copy of which message (any of the
	// topic's) is not judged, even once a later PUBLISH settled the topic.
	loose     map[string]int32
	v5        bool
	limit     sizeLimit // the Maximum Packet Size (and Topic Alias Maximum) of its last CONNECT
	connected bool      // the broker holds a connection of the client (CONNACK sent, not closed)
	connStep  int32     // the CONNACK of that connection
	connAt    int64     // ... and its time
	judgedBy  bool      // subscribed at some point (listed in routeState.judged)
	hasIDs    bool      // some SUBSCRIBE of it carried a Subscription Identifier
	// cleanPending: the broker received a Clean Start CONNECT of it and has
	// not answered yet; a crash then leaves its session in doubt.
	cleanPending bool
	retired      []retiredID
}

// routeReq is a SUBSCRIBE or UNSUBSCRIBE awaiting its ack, and whether its
// filter's subscription existed when it came (surely, or maybe).
type routeReq struct {
	p                Packet
	at               int // the broker's Received event
	existed, doubted bool
}

// routeKey names the copies of one message for a client; topic tells apart
// messages without an id (empty payloads).
type routeKey struct {
	msg   int32
	topic string
}

// routeCopy is what a client is owed of a message: live copies (one per
// Received PUBLISH that matched) and a retained copy (after a SUBACK).
type routeCopy struct {
	recvAt   int64 // time the broker last received it
	owedAt   int64 // time the broker received the retained message owed
	expiry   uint32
	owedExp  uint32
	msg      int32 // the message's id
	live     int32 // live copies not yet sent
	fresh    int32 // ... of them, routed since the broker's last crash
	owedStep int32 // the SUBACK that owed a retained copy
	routeAt  int32 // the broker's last Received PUBLISH of it that matched
	sentAt   int32 // its last first send, or -1
	firstAt  int32 // the broker's first Received PUBLISH of it that matched, or -1
	lo, hi   uint8 // the live copies' QoS bounds
	owedQoS  uint8 // the highest QoS of the retained copies owed since owed was last 0
	owedLo   uint8 // ... and the lowest QoS one of them may go at (the QoS its own SUBACK granted)
	matched  bool  // some publication of it matched a subscription of the client
	ordinary bool  // ... an ordinary (not shared) one
	groupsAt int32 // the group copies its publications owed the client (one per matching shared subscription)
	handed   int32 // first copies taken as handed on from a group for other publications (judgeSend)
	// rap counts the live copies not yet sent that may keep RETAIN=1: those
	// of retained publications routed through a matching subscription with
	// Retain As Published [MQTT-3.3.1-12]. A copy of a publication routed
	// when no such subscription matched has RETAIN=0 [MQTT-3.3.1-12]
	// (3.1.1 [MQTT-3.3.1-9]), however many earlier ones may keep it.
	rap   int32
	owed  int32 // retained copies owed (one per SUBACK that asked for it)
	rsent int32 // retained copies sent (first sends)
	// must counts the owed retained copies that must be sent: those of the
	// SUBACKs since the client's last connection end or broker crash (which
	// free the ones before). A send takes one of them first (the doubt goes
	// to the broker), so an older copy, owed no more, never stands in for
	// the newer one that is [MQTT-3.3.1-9].
	must int32
}

// routeRetained is the retained message of a topic.
type routeRetained struct {
	msg    int32
	app    appMsg // what a copy of it carries (packetsize.go)
	step   int32  // the broker's Received PUBLISH that stored it (or cleared it)
	qos    uint8
	at     int64
	expiry uint32
	doubt  bool // a broker crash may have kept an older one or lost it
	// settled: the broker acked it (QoS 0: the step that took it ended,
	// which a packet of another delivery the broker received since shows).
	settled bool
}

// routeState is checkRouting's state.
type routeState struct {
	x        *index
	clients  []routeClient
	judged   []int32 // client ids with state, in first-seen order
	retained map[string]*routeRetained
	routed   keyTab                    // each message's last publication step
	unacked  map[uint64]*routeRetained // publisher<<16|id -> the retained message of a PUBLISH not yet acked
	inbound  map[uint64]bool           // publisher<<16|id of QoS 2 PUBLISHes awaiting their PUBREL
	// willTopics are the topics of retained will messages: the broker
	// publishes them at times the pass cannot tell.
	willTopics map[string]bool
	grouped    keyTab // each message's publications that matched some client's shared subscription (judgeSend)
	wills      willState
	unsynced   []*routeRetained // QoS 0 retained messages of the broker's current step
	// unsyncedBy is the delivery unsynced's messages came in: the time and
	// sender of their Received events.
	unsyncedBy delivery
	limits     *sizeLimits // what each client announced (packetsize.go)
	// flights: client<<16|id -> 1 + the message id of the QoS>0 PUBLISH
	// the broker sent the client on that packet id and has had no PUBACK
	// or PUBCOMP for: a send of the same message on the same id is a
	// resend of that copy, whatever its DUP flag (Retransmit judges the
	// flag), not another copy.
	flights map[uint64]int32
	// refused: per message, whether the broker refused it (refusedMsgs):
	// no copy of it is owed.
	refused []bool
	out     []Violation
}

// checkRouting runs the routing pass (see routingSet).
func checkRouting(x *index) []Violation {
	s := &routeState{x: x, clients: make([]routeClient, len(x.nodes)), retained: map[string]*routeRetained{}, wills: newWillState(x),
		routed: newKeyTab(x), grouped: newKeyTab(x), limits: newSizeLimits(x), unacked: map[uint64]*routeRetained{}, inbound: map[uint64]bool{}, willTopics: map[string]bool{},
		flights: map[uint64]int32{}, refused: refusedMsgs(x)}
	doubts := expiryDoubts(x)
	for i, k := range x.kinds {
		if routingEvents.has(k) {
			s.step(i, &x.h.Events[i])
		}
		for len(doubts) > 0 && int(doubts[0].step) == i {
			s.expiredUnseen(doubts[0].client)
			doubts = doubts[1:]
		}
	}
	s.finish()
	return s.out
}

// add reports a violation of inv by the broker at step i, resting on the
// cited events too.
func (s *routeState) add(i int, cited []int, inv Invariant, format string, args ...any) {
	s.out = append(s.out, NewViolation(inv, i, BrokerNode, fmt.Sprintf(format, args...), cited...))
}

// client returns the state of client id c, which subscribes.
func (s *routeState) client(c int32) *routeClient {
	r := &s.clients[c]
	if !r.judgedBy {
		r.judgedBy, r.subs, r.pending, r.copyIdx = true, map[string]*routeSub{}, map[uint16]routeReq{}, newKeyTab(s.x)
		s.judged = append(s.judged, c)
	}
	return r
}

func (s *routeState) step(i int, e *Event) {
	d := &s.x.ev[i]
	if (e.Kind == Sent || e.Kind == Received) && d.node == brokerID && s.x.peerOf(i) == emptyID {
		return // a recorder that does not name the broker's peers: not judged
	}
	switch e.Kind {
	case Received:
		switch {
		case d.node != brokerID:
		case e.Packet.Type == PUBACK || e.Packet.Type == PUBCOMP:
			delete(s.flights, uint64(s.x.peerOf(i))<<16|uint64(e.Packet.ID)) // the copy's flight ended
		default:
			s.brokerReceived(i, e)
		}
	case Sent:
		if d.node == brokerID {
			s.brokerSent(i, e)
		}
	case Connected:
		s.clients[d.node].v5 = e.Version >= 5
	case Crash:
		s.crash(d.node)
	case ConnOpened:
		if d.node == brokerID {
			s.willConns(i, s.x.peerOf(i), e)
		}
	case ConnClosed:
		s.connEnded(d.node)
		if d.node == brokerID {
			s.connEnded(s.x.peerOf(i))
			s.clients[s.x.peerOf(i)].connected = false
			s.willConns(i, s.x.peerOf(i), e)
		}
	}
}

func (s *routeState) brokerReceived(i int, e *Event) {
	c := s.x.peerOf(i)
	s.settle(delivery{at: e.Time, from: c})
	p := &e.Packet
	switch p.Type {
	case DISCONNECT:
		s.willDisconnect(c, e)
	case CONNECT:
		s.willConnect(i, c, e)
		s.clients[c].limit, s.clients[c].cleanPending = s.limits.limitOf(c, p), p.Clean
		if p.Will && p.Retain {
			// The broker may store this will as the topic's retained message
			// whenever it publishes it: the topic is not judged from here on.
			s.willTopics[p.Topic] = true
		}
	case SUBSCRIBE, UNSUBSCRIBE:
		s.request(i, s.client(c), p)
	case PUBLISH:
		if s.x.aclDeniesWrite(e.Peer, p.Topic) {
			// The broker's ACL keeps the publisher from writing the topic:
			// it refuses the PUBLISH (v5) or acknowledges and drops it
			// (3.1.1) [MQTT-3.3.5-2]; no copy, no retained message, no
			// cleared one (a copy sent anyway is Access's, access.go).
			return
		}
		k := uint64(c)<<16 | uint64(p.ID)
		if p.QoS == 2 && s.inbound[k] {
			return // a duplicate the broker does not forward again [MQTT-4.3.3-10]
		}
		// A QoS 2 resend the pass holds no id for (lost in a broker crash,
		// or never seen) may or may not be a new publication: its copies
		// are allowed, not owed.
		owed := p.QoS < 2 || !p.Dup
		if isRefused(s.refused, s.x.ev[i].msg) {
			// The broker refused it (PUBACK/PUBREC >= 0x80): it never
			// owned it, so it owes no copy of it, live or retained
			// [MQTT-4.3.2-4] [MQTT-4.3.3-8] (refused.go); a copy sent
			// anyway is judged as any copy of a publication.
			owed = false
		}
		if p.QoS == 2 {
			s.inbound[k] = true
		}
		s.route(i, c, e, owed)
	case PUBREL:
		delete(s.inbound, uint64(c)<<16|uint64(p.ID))
	}
}

// request notes a SUBSCRIBE or UNSUBSCRIBE the broker received at step i.
func (s *routeState) request(i int, r *routeClient, p *Packet) {
	if p.Filter == "" {
		r.unknown = true
		return
	}
	sub := r.subs[p.Filter]
	r.pending[p.ID] = routeReq{p: *p, at: i, existed: sub != nil && !sub.maybe, doubted: sub != nil && sub.maybe}
	r.hasIDs = r.hasIDs || len(p.SubIDs) > 0
	switch {
	case p.Type == UNSUBSCRIBE && sub != nil:
		sub.maybe = true
	case p.Type == SUBSCRIBE && sub != nil:
		sub.lo, sub.hi = min(sub.lo, p.QoS), max(sub.hi, p.QoS)
		sub.id.subIDRequest(p)
	case p.Type == SUBSCRIBE:
		sub = &routeSub{maybe: true, lo: p.QoS, hi: p.QoS, opts: p.Opts}
		sub.id.subIDRequest(p)
		r.subs[p.Filter] = sub
	}
}

func (s *routeState) brokerSent(i int, e *Event) {
	c := s.x.peerOf(i)
	p := &e.Packet
	switch p.Type {
	case SUBACK:
		s.suback(i, c, e)
	case UNSUBACK:
		r := &s.clients[c]
		if req, ok := r.pending[p.ID]; ok && req.p.Type == UNSUBSCRIBE {
			delete(r.pending, p.ID)
			if r.resubscribed(&req) {
				break // the filter's entry is that SUBSCRIBE's, taken after this one
			}
			r.retire(req.p.Filter, r.subs[req.p.Filter], i, 0)
			delete(r.subs, req.p.Filter)
		}
	case CONNACK:
		if !p.Sessions && p.Reason < 0x80 && s.clients[c].judgedBy {
			s.discard(c)
		}
		if !p.Sessions && p.Reason < 0x80 {
			for k := range s.inbound {
				if int32(k>>16) == c {
					delete(s.inbound, k) // the session and its QoS 2 ids are gone
				}
			}
		}
		r := &s.clients[c]
		r.connected, r.connStep, r.connAt, r.cleanPending = p.Reason < 0x80, int32(i), e.Time, false
	case PUBACK, PUBREC:
		if p.Type == PUBREC && p.Reason >= 0x80 {
			delete(s.inbound, uint64(c)<<16|uint64(p.ID)) // a PUBLISH on this id is a new message now [MQTT-4.3.3-9]
		}
		if r, ok := s.unacked[uint64(c)<<16|uint64(p.ID)]; ok {
			delete(s.unacked, uint64(c)<<16|uint64(p.ID))
			if p.Reason < 0x80 {
				r.settled = true // (a later message of the topic has an entry of its own)
			}
		}
	case PUBLISH:
		if s.judgeWillSend(i, e) {
			return // a will message: no publication owes it
		}
		if !p.Dup && !s.sameFlight(i, c, p) {
			s.judgeSend(i, c, e)
		} else {
			s.resent(i, c, e)
		}
	}
}

// sameFlight reports whether the QoS>0 PUBLISH p the broker sent client c
// at step i repeats the message of the copy still in flight on its packet
// id: a resend (with DUP=0 a Retransmit violation [MQTT-3.3.1-1]), not a
// second copy [MQTT-3.3.4-2]; it notes p's flight otherwise.
func (s *routeState) sameFlight(i int, c int32, p *Packet) bool {
	if p.QoS == 0 {
		return false
	}
	k, msg := uint64(c)<<16|uint64(p.ID), s.x.ev[i].msg
	if msg != 0 && s.flights[k] == msg+1 {
		return true
	}
	s.flights[k] = msg + 1
	return false
}

// resubscribed reports whether a SUBSCRIBE of the filter of UNSUBSCRIBE
// req, received after it, awaits its SUBACK: the broker takes a client's
// requests in order, so the subscription that SUBSCRIBE made may exist
// whatever req removed [MQTT-3.10.4-1] [MQTT-3.8.4-3].
func (r *routeClient) resubscribed(req *routeReq) bool {
	for _, q := range r.pending {
		if q.p.Type == SUBSCRIBE && q.p.Filter == req.p.Filter && q.at > req.at {
			return true
		}
	}
	return false
}

// discard forgets a client's session: the broker started a new one.
func (s *routeState) discard(c int32) {
	for k := range s.flights {
		if int32(k>>16) == c {
			delete(s.flights, k) // the session's packet ids are free
		}
	}
	r := s.client(c)
	clear(r.subs)
	clear(r.pending)
	r.copyIdx.reset()
	r.unknown, r.owed, r.copies, r.retired = false, r.owed[:0], r.copies[:0], r.retired[:0]
	clear(r.loose)
}

// loosen notes a retained copy of topic owed while its retained message
// is in doubt.
func (r *routeClient) loosen(topic string) {
	if r.loose == nil {
		r.loose = map[string]int32{}
	}
	r.loose[topic]++
}

// takeLoose reports whether a retained copy of topic may be one a SUBACK
// owed while the topic was in doubt, and counts it sent.
func (r *routeClient) takeLoose(topic string) bool {
	if r.loose[topic] == 0 {
		return false
	}
	r.loose[topic]--
	return true
}

// suback installs the granted subscription and owes the retained messages
// its Retain Handling asks for.
func (s *routeState) suback(i int, c int32, e *Event) {
	r := &s.clients[c]
	p := &e.Packet
	pr, ok := r.pending[p.ID]
	if !r.judgedBy || !ok || pr.p.Type != SUBSCRIBE {
		return
	}
	req := &pr.p
	delete(r.pending, p.ID)
	if p.Reason >= 0x80 {
		if sub := r.subs[req.Filter]; !pr.existed && !pr.doubted {
			r.retire(req.Filter, sub, i, 0)
			delete(r.subs, req.Filter) // refused: never existed
		} else if sub != nil && pr.existed {
			sub.id.refused()
		}
		return
	}
	existed, doubtful := pr.existed, pr.doubted
	since := e.Time
	old := r.subs[req.Filter]
	if pr.existed && old != nil {
		since = old.since
	}
	id := granted(old, req, i)
	r.retire(req.Filter, old, i, id.sure)
	r.subs[req.Filter] = &routeSub{since: since, lo: p.Reason, hi: p.Reason, opts: req.Opts, id: id}
	rh := req.RetainHandling()
	if rh == 2 || (rh == 1 && existed) {
		return
	}
	for t, ret := range s.retained {
		if !Matches(req.Filter, t) {
			continue
		}
		if s.doubtful(t) {
			r.loosen(t)
		}
		if ret.msg < 0 {
			continue
		}
		ci := r.copyOf(routeKey{msg: ret.msg, topic: topicKey(ret.msg, t)})
		cp := &r.copies[ci]
		expired := ret.expiry > 0 && e.Time >= ret.at+int64(ret.expiry)*1e9
		if cp.owed == 0 {
			cp.owedQoS, cp.owedLo = 0, 2 // the copies owed before were all sent: their QoS bounds none to come
		}
		cp.owedLo = min(cp.owedLo, ret.qos, p.Reason)
		cp.owed++
		cp.owedStep, cp.owedQoS, cp.owedAt, cp.owedExp = int32(i), max(cp.owedQoS, min(ret.qos, max(p.Reason, r.overlapQoS(req.Filter, t)))), ret.at, ret.expiry // [MQTT-3.8.4-8] [MQTT-3.3.4-2]
		if !s.doubtful(t) && ret.settled && !expired && !doubtful && !r.limit.tooLarge(ret.app, min(ret.qos, p.Reason)) {
			cp.must++
			r.owed = append(r.owed, ci)
		}
	}
}

// overlapQoS is the highest QoS the client's other ordinary subscriptions
// whose filters match topic may hold (0 when none does). A retained copy a
// SUBACK brings is "sent in response to a Subscription", at the minimum of
// the message's QoS and that subscription's granted QoS [MQTT-3.8.4-8];
// yet the broker MUST deliver a message that matches several of a
// client's filters "respecting the maximum QoS of all the matching
// subscriptions" [MQTT-3.3.4-2]. The spec does not say which governs a
// retained copy whose topic an older filter of a higher QoS also matches,
// so either QoS is allowed: the copy may go at most at the message's QoS
// and the highest of the two grants.
func (r *routeClient) overlapQoS(filter, topic string) uint8 {
	var hi uint8
	for f, sub := range r.subs {
		if f == filter || !Matches(f, topic) {
			continue
		}
		if _, shared := sharedInner(f); !shared {
			hi = max(hi, sub.hi)
		}
	}
	return hi
}

// keyTab maps routeKeys to int32: a slice by message id, and a map by
// topic for the messages without an id.
type keyTab struct {
	byMsg   []int32 // 1 + value, 0 unset
	byTopic map[string]int32
}

func newKeyTab(x *index) keyTab { return keyTab{byMsg: make([]int32, len(x.msgs))} }

func (t *keyTab) get(k routeKey) (int32, bool) {
	if k.msg != 0 {
		v := t.byMsg[k.msg]
		return v - 1, v != 0
	}
	v, ok := t.byTopic[k.topic]
	return v, ok
}

func (t *keyTab) set(k routeKey, v int32) {
	if k.msg != 0 {
		t.byMsg[k.msg] = v + 1
		return
	}
	if t.byTopic == nil {
		t.byTopic = map[string]int32{}
	}
	t.byTopic[k.topic] = v
}

func (t *keyTab) reset() {
	clear(t.byMsg)
	clear(t.byTopic)
}

// tooLarge reports whether a QoS qos copy of the PUBLISH the broker
// received at step i may exceed the client's Maximum Packet Size: the broker
// then drops it as if sent [MQTT-3.1.2-25], and nothing is owed
// (packetsize.go).
func (s *routeState) tooLarge(r *routeClient, i int, qos uint8) bool {
	return r.limit.max > 0 && r.limit.tooLarge(appOf(&s.x.orig.Events[i].Packet, s.x.h.Events[i].Packet.Topic), qos)
}

// topicKey is the topic part of a routeKey: the topic for a message
// without an id, else "".
func topicKey(msg int32, topic string) string {
	if msg == 0 {
		return topic
	}
	return ""
}

// copyOf returns the index in r.copies of k's entry, adding it.
func (r *routeClient) copyOf(k routeKey) int32 {
	i, ok := r.copyIdx.get(k)
	if !ok {
		i = int32(len(r.copies))
		r.copies = append(r.copies, routeCopy{msg: k.msg, routeAt: -1, sentAt: -1, firstAt: -1})
		r.copyIdx.set(k, i)
	}
	return i
}

// find returns k's entry, or nil.
func (r *routeClient) find(k routeKey) *routeCopy {
	if i, ok := r.copyIdx.get(k); ok {
		return &r.copies[i]
	}
	return nil
}

// route is a PUBLISH the broker received from client from: it updates the
// retained store and owes each client whose subscriptions match a copy.
func (s *routeState) route(i int, from int32, e *Event, owed bool) {
	p := &e.Packet
	msg := s.x.ev[i].msg
	if p.Retain {
		s.storeRetained(i, from, msg, e, owed)
	}
	s.routed.set(routeKey{msg: msg, topic: topicKey(msg, p.Topic)}, int32(i))
	grouped := false // the publication matched some client's shared subscription
	for _, c := range s.judged {
		r := &s.clients[c]
		if r.unknown {
			continue
		}
		var lo, hi uint8
		matched, definite, noLocal, rap := false, false, false, false
		groups := 0 // matching shared subscriptions: each may send this client a copy (shared.go)
		for f, sub := range r.subs {
			if inner, ok := sharedInner(f); ok {
				if Matches(inner, p.Topic) {
					groups, hi = groups+1, max(hi, sub.hi)
				}
				continue
			}
			if !Matches(f, p.Topic) {
				continue
			}
			matched, hi, rap = true, max(hi, sub.hi), rap || sub.opts&OptRetainAsPublished != 0
			noLocal = noLocal || sub.opts&OptNoLocal != 0
			if !sub.maybe {
				definite, lo = true, max(lo, sub.lo)
			}
		}
		grouped = grouped || groups > 0
		if noLocal && c == from {
			matched = false // No Local: the ordinary copy is not judged here
		}
		if !matched && groups == 0 {
			continue // a copy sent anyway is judged by Unsubscribe
		}
		k := routeKey{msg: msg, topic: topicKey(msg, p.Topic)}
		if !definite || !matched {
			lo = 0 // a group's copy may go to another member
		}
		cp := &r.copies[r.copyOf(k)]
		if cp.live == 0 {
			cp.lo, cp.hi = min(p.QoS, lo), min(p.QoS, hi)
		} else {
			cp.lo, cp.hi = min(cp.lo, p.QoS, lo), max(cp.hi, min(p.QoS, hi))
		}
		cp.live += int32(groups)
		cp.groupsAt += int32(groups)
		if matched {
			cp.live++
			if owed && !s.tooLarge(r, i, min(p.QoS, hi)) {
				cp.fresh++ // a group's copy may go to another member: not owed here
			}
		}
		if matched && rap && p.Retain {
			cp.rap++
		}
		cp.matched, cp.ordinary = true, cp.ordinary || matched
		cp.recvAt, cp.expiry, cp.routeAt = e.Time, p.Expiry, int32(i)
		if cp.firstAt < 0 {
			cp.firstAt = int32(i)
		}
	}
	if grouped {
		k := routeKey{msg: msg, topic: topicKey(msg, p.Topic)}
		s.grouped.set(k, s.groupedCount(k)+1)
	}
}

// storeRetained applies a retained PUBLISH to the topic's retained message:
// an empty payload clears it [MQTT-3.3.1-6]. A QoS 2 resend that may be a
// duplicate (sure false: a broker crash took the pass's record of its
// packet id) leaves the topic in doubt: a broker that kept the id must not
// apply it again [MQTT-4.3.3-10], one that lost it takes it as new.
func (s *routeState) storeRetained(i int, from, msg int32, e *Event, sure bool) {
	p := &e.Packet
	old := s.retained[p.Topic]
	// Either way the same: it clears a cleared topic, or stores again the
	// message the topic holds (with no expiry its time would move).
	same := old != nil && !old.doubt && (old.msg == msg && msg != 0 && p.Expiry == 0 || old.msg < 0 && p.Payload == "")
	if p.Payload == "" {
		if old != nil {
			*old = routeRetained{msg: -1, step: int32(i)}
		}
	} else {
		s.retained[p.Topic] = &routeRetained{msg: msg, app: appOf(&s.x.orig.Events[i].Packet, p.Topic), step: int32(i), qos: p.QoS, at: e.Time, expiry: p.Expiry}
	}
	r := s.retained[p.Topic]
	if r != nil && !sure && !same {
		r.doubt = true
	}
	switch {
	case r == nil:
	case p.QoS > 0:
		s.unacked[uint64(from)<<16|uint64(p.ID)] = r
	default:
		s.unsynced = append(s.unsynced, r)
		s.unsyncedBy = delivery{at: e.Time, from: from}
	}
}

// delivery names the bytes of one connection that reached the broker at
// once: every packet they complete has its Received event (at one time,
// from one sender) before the broker's one step over them.
type delivery struct {
	at   int64
	from int32
}

// settle notes a packet of delivery d the broker received: when d is
// another delivery than the one that brought the QoS 0 retained messages
// not yet settled, the step that took them ended, and with it their
// writes. Packets of one delivery (same time, same sender) may share a
// step, which a crash may end before any of its writes [MQTT-3.3.1-5]:
// they settle nothing (swarm seed 147272: a QoS 0 retained PUBLISH and
// another PUBLISH in one delivery, the broker crashed before its first
// write).
func (s *routeState) settle(d delivery) {
	if len(s.unsynced) == 0 || d == s.unsyncedBy {
		return
	}
	for _, r := range s.unsynced {
		r.settled = true
	}
	s.unsynced = s.unsynced[:0]
}

// crash: a broker crash puts every retained message the broker may not
// have made durable in doubt and frees every owed copy from having to be
// sent; a client's crash frees its own.
func (s *routeState) crash(node int32) {
	if node != brokerID {
		s.connEnded(node)
		return
	}
	s.willCrash()
	for _, r := range s.retained {
		if !r.settled {
			r.doubt = true
		}
	}
	clear(s.unacked)
	clear(s.inbound) // a QoS 2 id not yet synced is lost: its resend is a new publication
	s.unsynced = s.unsynced[:0]
	for _, c := range s.judged {
		s.connEnded(c)
		r := &s.clients[c]
		r.connected = false
		for j := range r.copies {
			r.copies[j].fresh = 0 // routed before the crash: maybe never stored
		}
		if r.cleanPending {
			// The crash came between a clean start and its CONNACK: the
			// broker may have discarded the session (whole: its
			// tombstone), or kept it whole.
			for _, sub := range r.subs {
				sub.maybe = true
			}
			r.cleanPending = false
		}
	}
}

// expiredUnseen: the broker may have discarded client c's expired session
// without a CONNACK in the history saying so (expirydoubt.go): its
// subscriptions may or may not exist, the copies it owed are owed no more,
// and a QoS 2 resend of the client's is a new publication whose copies are
// allowed, not owed [MQTT-4.1.0-2].
func (s *routeState) expiredUnseen(c int32) {
	for k := range s.inbound {
		if int32(k>>16) == c {
			delete(s.inbound, k)
		}
	}
	r := &s.clients[c]
	if !r.judgedBy {
		return
	}
	for _, sub := range r.subs {
		sub.maybe = true
	}
	for j := range r.copies {
		r.copies[j].fresh = 0
	}
	s.connEnded(c)
}

// connEnded: the client's owed retained copies need not be sent any more
// (a QoS 0 copy dies with the connection).
func (s *routeState) connEnded(c int32) {
	r := &s.clients[c]
	for _, ci := range r.owed {
		r.copies[ci].must = 0
	}
	r.owed = r.owed[:0]
}

// judgeSend matches a first PUBLISH to client c with the copy it is.
func (s *routeState) judgeSend(i int, c int32, e *Event) {
	r := &s.clients[c]
	if !r.judgedBy || r.unknown {
		return
	}
	p := &e.Packet
	msg := s.x.ev[i].msg
	k := routeKey{msg: msg, topic: topicKey(msg, p.Topic)}
	cp := r.find(k)
	peer := e.Peer
	switch {
	case cp == nil && !p.Retain:
		s.judgeUnmatched(i, k, e)
	case cp == nil:
		if !s.doubtful(p.Topic) && !r.takeLoose(p.Topic) {
			s.add(i, s.retainedCite(p.Topic), Retained, "PUBLISH of msg %q (topic %q) to %s with RETAIN=1, which is no retained message of a SUBACK it answered (cleared by an empty payload, replaced, or Retain Handling forbids it) [MQTT-3.3.1-6] [MQTT-3.3.1-11]",
				p.Msg, p.Topic, peer)
		}
	case cp.asRetained(p, e.Time):
		cp.owed, cp.rsent, cp.must = cp.owed-1, cp.rsent+1, max(cp.must-1, 0)
		if p.QoS > cp.owedQoS {
			s.add(i, []int{int(cp.owedStep)}, GrantedQoS, "retained msg %q sent to %s at QoS %d; the retained message's QoS and the granted QoS give %d [MQTT-3.8.4-8]", p.Msg, peer, p.QoS, cp.owedQoS)
		}
		s.judgeExpiry(i, int(cp.owedStep), e, cp.owedAt, cp.owedExp, r.v5)
		s.judgeSubIDs(i, r, e, cp.owedStep, true)
	case cp.live > 0 && !s.retainedInDoubt(r, cp, p):
		cp.live, cp.fresh = cp.live-1, max(cp.fresh-1, 0)
		rapOK := cp.rap > 0
		if p.Retain {
			cp.rap = max(cp.rap-1, 0)
		} else {
			cp.rap = min(cp.rap, cp.live) // a RETAIN=0 send takes a copy that need not keep it first
		}
		if p.QoS < cp.lo || p.QoS > cp.hi {
			s.add(i, []int{int(cp.routeAt)}, GrantedQoS, "msg %q sent to %s at QoS %d; min(publish QoS, max granted QoS of its matching filters) allows %s [MQTT-3.8.4-8] [MQTT-3.3.4-2]",
				p.Msg, peer, p.QoS, qosRange(cp.lo, cp.hi))
		}
		if p.Retain && !rapOK && !s.doubtful(p.Topic) {
			s.add(i, []int{int(cp.routeAt)}, Retained, "msg %q forwarded to %s on an established subscription with RETAIN=1 and no Retain As Published [MQTT-3.3.1-12] (3.1.1 [MQTT-3.3.1-9])", p.Msg, peer)
		}
		s.judgeExpiry(i, int(cp.routeAt), e, cp.recvAt, cp.expiry, r.v5)
		s.judgeSubIDs(i, r, e, cp.firstAt, cp.ordinary)
		cp.sentAt = int32(i)
	case p.Retain && (s.doubtful(p.Topic) || r.takeLoose(p.Topic)):
		// a retained copy of a topic a crash left in doubt: not judged
	case cp.handed+cp.groupsAt < s.groupedCount(k) && r.inGroupFor(p.Topic):
		// A group's copy of a publication routed while the client was no
		// member, handed on when the member it went to ended its session
		// (§4.8.2): one per such publication.
		cp.handed++
	case cp.matched:
		s.add(i, []int{int(cp.routeAt), int(cp.sentAt)}, Overlap, "another first copy of msg %q sent to %s: one copy per publication, at the maximum QoS of its matching subscriptions [MQTT-3.3.4-2]", p.Msg, peer)
	default:
		s.judgeUnmatched(i, k, e)
	}
}

// asRetained reports whether a send p at time t (to the client of cp) is
// the retained copy a SUBACK owed rather than a live copy: RETAIN=1 marks a
// retained copy [MQTT-3.3.1-9], but a live copy on a subscription with
// Retain As Published keeps it too [MQTT-3.3.1-12]. When both are pending,
// a QoS only one of them may have tells them apart [MQTT-3.8.4-8] (the
// retained copy's range is owedLo..owedQoS: see overlapQoS). A QoS both may
// have is read so that the send breaks no rule where some reading lets it
// (the doubt goes to the broker): as the copy whose Message Expiry had not
// run out when only one had not [MQTT-3.3.2-5] (a QoS 1 resend the broker
// took as a new publication [MQTT-4.3.2-5] starts its interval again while
// the retained copy's ran out: crashy seed 11005033); else as the copy the
// broker must send when only one of them must (a SUBACK's retained copy
// must go, while the live copy of a QoS 2 resend the broker may have taken
// for a duplicate, or a QoS 0 one, need not: seed 7034983); else as the
// one whose QoS range is narrower, leaving the wider range to the other
// copy, and as the retained copy when the ranges are as wide (a live copy
// may have been dropped: at QoS 0, or for an offline client).
func (cp *routeCopy) asRetained(p *Packet, t int64) bool {
	if !p.Retain || cp.owed == 0 {
		return false
	}
	if cp.live == 0 || cp.rap == 0 || p.QoS < cp.lo || p.QoS > cp.hi {
		return true
	}
	if p.QoS > cp.owedQoS || p.QoS < cp.owedLo {
		return false
	}
	if owedLate, liveLate := lateAt(cp.owedAt, cp.owedExp, t), lateAt(cp.recvAt, cp.expiry, t); owedLate != liveLate {
		return liveLate
	}
	if liveMust := cp.fresh > 0 && cp.lo > 0; (cp.must > 0) != liveMust {
		return cp.must > 0
	}
	return cp.owedQoS-cp.owedLo <= cp.hi-cp.lo
}

// lateAt reports whether a first send at t of a message the broker
// received at recvAt with Message Expiry Interval expiry (seconds, 0 none)
// comes after the interval ran out (judgeExpiry's test).
func lateAt(recvAt int64, expiry uint32, t int64) bool {
	return expiry > 0 && recvAt+int64(expiry)*1e9 < t
}

// retainedInDoubt reports whether a RETAIN=1 send at a QoS the live copy
// may not have may be a retained copy of a topic a broker crash left in
// doubt (doubtful, or a copy a SUBACK owed while it was): the doubt goes to
// the broker, and the send is not taken for the live copy (swarm seed
// 7069088: a QoS 0 retained PUBLISH the crash lost replaced, in the pass,
// the QoS 1 one the broker kept and a later QoS 1 SUBACK sent, while the
// live copy of the kept one was owed at QoS 0 by an overlapping filter).
func (s *routeState) retainedInDoubt(r *routeClient, cp *routeCopy, p *Packet) bool {
	if !p.Retain || p.QoS >= cp.lo && p.QoS <= cp.hi {
		return false
	}
	return s.doubtful(p.Topic) || r.loose[p.Topic] > 0
}

// judgeUnmatched judges a first copy of a message that matched none of the
// client's subscriptions: a publication the pass saw owed it nothing (one
// it did not see is a will message).
func (s *routeState) judgeUnmatched(i int, k routeKey, e *Event) {
	if s.clients[s.x.peerOf(i)].inGroupFor(e.Packet.Topic) {
		return // a group's copy handed on from a member whose session ended [MQTT-4.8.2-5]
	}
	if f := dollarWildcard(s.clients[s.x.peerOf(i)].subs, e.Packet.Topic); f != "" {
		s.add(i, nil, DollarTopics, "msg %q on topic %q sent to %s, whose filter %q starts with a wildcard: a first-level wildcard never matches a topic starting with '$' [MQTT-4.7.2-1]",
			e.Packet.Msg, e.Packet.Topic, e.Peer, f)
		return
	}
	if at, ok := s.routed.get(k); ok {
		s.add(i, []int{int(at)}, Unsubscribe, "msg %q sent to %s, though none of its filters matched topic %q when the broker received it at step %d (unsubscribed, or never subscribed) [MQTT-3.10.4-2]",
			e.Packet.Msg, e.Peer, e.Packet.Topic, at)
	}
}

// dollarWildcard returns the least of the filters subs that start with a
// wildcard and would match topic t, which starts with '$', but for the $
// rule [MQTT-4.7.2-1]; "" when t has no '$' or none would.
func dollarWildcard(subs map[string]*routeSub, t string) string {
	if !strings.HasPrefix(t, "$") {
		return ""
	}
	least := ""
	for f := range subs {
		if (strings.HasPrefix(f, "#") || strings.HasPrefix(f, "+")) && Matches(f, "x"+t[1:]) && (least == "" || f < least) {
			least = f
		}
	}
	return least
}

// groupedCount returns how many publications of k matched a shared
// subscription.
func (s *routeState) groupedCount(k routeKey) int32 {
	if n, ok := s.grouped.get(k); ok {
		return n
	}
	return 0
}

// inGroupFor reports whether the client holds a shared subscription whose
// filter matches topic: a message routed before it joined may come to it
// from a member whose session ended.
func (r *routeClient) inGroupFor(topic string) bool {
	for f := range r.subs {
		if inner, ok := sharedInner(f); ok && Matches(inner, topic) {
			return true
		}
	}
	return false
}

// retainedCite is the event that last set or cleared the topic's retained
// message, if any.
func (s *routeState) retainedCite(topic string) []int {
	if r := s.retained[topic]; r != nil {
		return []int{int(r.step)}
	}
	return nil
}

// resent notes a DUP=1 PUBLISH: it left the queue, though a recorder that
// missed its first send (a live proxy during a cut) shows only this one;
// not one with the packet id of the live copy's first send (resendsLive).
func (s *routeState) resent(i int, c int32, e *Event) {
	r := &s.clients[c]
	if !r.judgedBy {
		return
	}
	msg := s.x.ev[i].msg
	cp := r.find(routeKey{msg: msg, topic: topicKey(msg, e.Packet.Topic)})
	switch {
	case cp == nil:
	case cp.asRetained(&e.Packet, e.Time):
		if cp.rsent == 0 && !s.resendsLive(cp, &e.Packet) {
			// it stands for a first send the recorder missed; a resend of
			// one sent before owes nothing more
			cp.owed, cp.rsent, cp.must = cp.owed-1, cp.rsent+1, max(cp.must-1, 0)
		}
	case cp.fresh > 0:
		cp.fresh--
	}
}

// resendsLive reports whether the resend p carries the packet id of the
// live copy's first send, which a resend keeps [MQTT-4.4.0-1]: it is that
// copy's, and a retained copy owed is still to come.
func (s *routeState) resendsLive(cp *routeCopy, p *Packet) bool {
	return cp.sentAt >= 0 && s.x.h.Events[cp.sentAt].Packet.ID == p.ID
}

// doubtful reports whether a broker crash left the topic's retained message
// in doubt.
func (s *routeState) doubtful(topic string) bool {
	r := s.retained[topic]
	return (r != nil && r.doubt) || s.willTopics[topic]
}

// judgeExpiry judges a first send of a message the broker received at
// recvAt with Message Expiry Interval expiry (seconds, 0 none).
func (s *routeState) judgeExpiry(i, from int, e *Event, recvAt int64, expiry uint32, v5 bool) {
	p := &e.Packet
	if expiry == 0 || p.Msg == "" {
		return // no expiry, or messages without an id: which one is it?
	}
	left := recvAt + int64(expiry)*1e9 - e.Time
	if left < 0 {
		s.add(i, []int{from}, MessageExpiry, "msg %q first sent to %s %dms after its Message Expiry Interval of %ds ran out [MQTT-3.3.2-5]",
			p.Msg, e.Peer, -left/1e6, expiry)
		return
	}
	most := uint32((left + 1e9 - 1) / 1e9)
	switch {
	case p.Expiry > most:
		s.add(i, []int{from}, MessageExpiry, "msg %q sent to %s with Message Expiry Interval %ds after waiting %dms of its %ds: at most %ds remain [MQTT-3.3.2-6]",
			p.Msg, e.Peer, p.Expiry, (e.Time-recvAt)/1e6, expiry, most)
	case p.Expiry == 0 && v5 && most > 0:
		s.add(i, []int{from}, MessageExpiry, "msg %q sent to v5 client %s without the Message Expiry Interval it was published with [MQTT-3.3.2-6]", p.Msg, e.Peer)
	}
}

// parked reports the QoS>0 copies owed a client that is connected at the
// end of the history and never sent: no window opened for them, or the
// broker did not use it.
func (s *routeState) parked(c int32, r *routeClient) {
	if !r.connected || r.unknown {
		return
	}
	for j := range r.copies {
		cp := &r.copies[j]
		if cp.fresh > 0 && cp.lo > 0 && cp.expiry == 0 && cp.msg != 0 && !s.droppedAsDeclared(c, cp) { // messages without an id share an entry: not judged
			s.add(int(cp.routeAt), []int{int(r.connStep)}, FlowResume, "msg %q, owed to %s at QoS %d, is never sent though %s is connected at the end: parked for good [MQTT-4.9.0-2] [MQTT-3.3.4-9]",
				s.x.msgs[cp.msg], s.x.nodes[c], cp.lo, s.x.nodes[c])
		}
	}
}

// droppedAsDeclared reports whether the broker's declared limits excuse
// never sending cp to client c: a drop they allow, or a declared Expiry
// that ran out before the history ended (droplimits.go).
func (s *routeState) droppedAsDeclared(c int32, cp *routeCopy) bool {
	if v, ok := s.x.dropJudgeOf().recorded(c, cp.msg); ok {
		return v
	}
	return waitedPast(s.x, int(cp.routeAt))
}

// qosRange formats a QoS range: "QoS 1" or "QoS 0 to 2".
func qosRange(lo, hi uint8) string {
	if lo == hi {
		return fmt.Sprintf("QoS %d", lo)
	}
	return fmt.Sprintf("QoS %d to %d", lo, hi)
}

// owedExpired reports whether the Message Expiry of the retained copy owed
// ran out by time end: queued behind a full window, it may have expired
// before the broker could send it, and an expired copy is deleted unsent
// [MQTT-3.3.2-5].
func (cp *routeCopy) owedExpired(end int64) bool {
	return cp.owedExp > 0 && end >= cp.owedAt+int64(cp.owedExp)*1e9
}

// finish reports retained copies owed and never sent, once a liveness phase
// ran (the world had time to send them), but one the broker dropped as its
// declared limits allow (droplimits.go).
func (s *routeState) finish() {
	if s.x.liveness < 0 || s.x.cutoff { // a cut history: what is owed is unfinished (Cutoff)
		return
	}
	s.willsUnpublished()
	end := s.x.h.Events[len(s.x.h.Events)-1].Time
	for _, c := range s.judged {
		r := &s.clients[c]
		s.parked(c, r)
		for _, ci := range r.owed {
			if cp := &r.copies[ci]; cp.owed > 0 && cp.must > 0 && !cp.owedExpired(end) && !s.droppedAsDeclared(c, cp) {
				cp.must = 0 // reported once
				s.add(int(cp.owedStep), nil, Retained, "SUBACK to %s owes the retained msg %q, never sent [MQTT-3.3.1-9] [MQTT-3.3.1-10] (3.1.1 [MQTT-3.3.1-6])",
					s.x.nodes[c], s.x.msgs[cp.msg])
			}
		}
	}
}
