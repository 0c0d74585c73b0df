package model

import (
	"fmt"
	"slices"
)

// sub is one persistent QoS>=1 subscription of the history, from the step
// the broker installed it to the step it stopped (see collectSubs).
type sub struct {
	node   int32
	filter string
	fid    int32  // filter's id in the scan's filter table
	step   int    // took effect: the broker's SUBACK for it, else the Subscribed event
	end    int    // stopped taking new messages, or -1
	how    subEnd // what stopped it
	qos    uint8  // the QoS of its Subscribed event
	// gone: the step a clean start or the session's expiry ended the
	// session after a replacement or an UNSUBSCRIBE ended s, or -1: what
	// s still owed then went with the session.
	gone int
}

// subEnd says what ended a subscription.
type subEnd uint8

const (
	endReplaced subEnd = iota + 1 // a SUBSCRIBE of the same filter replaced it [MQTT-3.8.4-3]
	endUnsub                      // UNSUBSCRIBE [MQTT-3.10.4-2]
	endClean                      // a clean start discarded the session [MQTT-3.1.2-4]
	endExpired                    // the session ended as the spec allows, its Session Expiry Interval run out [MQTT-4.1.0-2] (sessionEnds)
)

// accepted is one QoS>=1 message a publisher app handed to its engine
// (pointer-free: its topic is x.topics[tid]).
type accepted struct {
	step int32 // the Accepted event
	ref  int32 // the broker's first Received PUBLISH of it, else step
	// last: the broker's first Received PUBLISH of it that the broker
	// acknowledged before any crash of its own (else its last one; step
	// when it received none). The receipts from ref to last are the ones
	// the broker may have made its publication of the message (see
	// sub.owes).
	last  int32
	node  int32 // its publisher
	msg   int32
	tid   int32 // topic's id in the index
	qos   uint8
	clean bool // its publisher's session went before the message was acknowledged: a clean start, or Session Present 0 before the broker acknowledged it
	owned bool // the broker acknowledged a receipt of it (last is that one)
}

// CheckNoLoss checks invariant 1 (SPEC-NOTES 1, 10; seeds
// coremqtt-unclean-session-retransmits and mosquitto-ack-after-callback):
// every message a publisher accepted at QoS>=1 is delivered to every
// subscriber that held a matching subscription at QoS>=1 while its session
// lived [MQTT-3.1.2-5] [MQTT-4.5.0-1] [MQTT-4.3.2-4] [MQTT-4.3.3-8].
//
// Every session counts, whatever its expiry, from the broker's events
// (SessionWatch, sessionEnds): a session of Session Expiry Interval 0 (or
// a 3.1.1 Clean Session=1 one) lives as long as its connection
// [MQTT-3.1.2-6], one of a longer interval is kept after its connection
// closed [MQTT-3.1.2-23] until the interval has run [MQTT-4.1.0-2], its
// clock running on across broker restarts. A
// session ends where the history shows it gone as the spec allows: a clean
// start [MQTT-3.1.2-4], the broker's Session Present=0 to a CONNECT that
// came after the interval ran out, a broker crash or close that cut such a
// CONNECT short of its CONNACK (expiryDoubts), or the history's end with
// the interval run out. What its subscriptions had not delivered then went
// with it. A Session Present=0 that came before the interval could have
// run out ends nothing: the broker lost a session it had to keep, and owes
// all. Where the history cannot tell when the broker's clock started (a
// crash that took the session offline, or may have lost its close), the
// session counts as offline from the crash, the earliest it could be: the
// doubt goes to the implementation for that window only. A client whose
// sessions the history's broker events do not show (no broker CONNECT of
// it recorded) is judged by its Subscribed events' Persistent flag alone.
//
// A subscription counts for a message when it took effect at the broker (see
// collectSubs) before the broker first Received the message's PUBLISH, or
// before Accepted if the broker never received it: the broker then had to
// route it; when the broker crashed on that receipt before acknowledging
// it, the subscription must also have been in effect at the first receipt
// the broker acknowledged (see sub.owes). It stops counting for messages
// the broker receives after it ended. Of the messages routed before the end, a replacement (a SUBSCRIBE
// of the same filter) excuses none: "the flow of publications MUST NOT be
// interrupted" [MQTT-3.8.4-3]; an UNSUBSCRIBE excuses those the broker had
// not started to send (it "MAY continue to deliver any existing messages
// buffered", but MUST complete the QoS 1/2 deliveries it started
// [MQTT-3.10.4-3]); a clean start or the session's expiry excuses all (the
// session is discarded [MQTT-3.1.2-4] [MQTT-4.1.0-2]), also what a
// replaced or unsubscribed subscription still owed. An UNSUBSCRIBE, or a
// SUBSCRIBE at QoS 0, that the broker
// received and had not acknowledged when it crashed may have taken effect:
// it ends the subscription there as if acknowledged, since nothing resends
// it (see subScan.unacked). A message stops counting when its publisher connects with
// Clean Start=1 before it is acknowledged (the spec lets the session go). A
// publisher's own subscriptions are not required to get its messages (No
// Local may be set). A Session Present=0 answer to its publisher's Clean
// Start=0 excuses the messages the broker had not acknowledged (PUBACK,
// PUBREC < 0x80) by then: the client must discard its session state
// [MQTT-3.2.2-5], a QoS 2 message whose PUBLISH reached the lost session
// included (sent again, as new, it would be delivered twice
// [MQTT-4.3.3-10]); a message the broker acknowledged is its own and stays
// owed [MQTT-4.3.2-4] [MQTT-4.3.3-8]. That excuse holds only when the
// broker's CONNACK shows the session gone as the spec allows (expired
// [MQTT-4.1.0-2], or never accepted: SessionWatch.Discards); a session the
// broker lost while it should still live (a crash without persistence, a
// discard before the interval ran out) owes all its messages. On the
// subscriber's side likewise a Session Present=0 excuses only what a
// session gone as the spec allows held. A copy whose Message Expiry
// Interval ran out unsent while the subscriber was away or the broker down
// is not owed [MQTT-3.3.2-5] (lossexpiry.go), nor one too large for the
// subscriber's Maximum Packet Size, which the broker discards as if sent
// [MQTT-3.1.2-25] (packetsize.go): only that one; a copy that fits is owed.
// A message the broker refused (answered its publisher's PUBLISH with a
// PUBACK or PUBREC of reason code >= 0x80, never with success) is owed to
// no one: the broker never took ownership of it [MQTT-4.3.2-4]
// [MQTT-4.3.3-8] (refused.go); one it answered with success once is owed
// whatever it answered a resend.
//
// Loss is only judged at the end of a history whose liveness phase ran
// (LivenessStart present); a violation is reported at the message's Accepted
// step. A Stuck run is judged too: its undelivered messages are reported
// here as losses (and the Stuck event by NoStuck), so an experiment counts a
// lost message as lost whatever stopped it.
func CheckNoLoss(h *History) []Violation { return checkNoLoss(newIndex(h)) }

func checkNoLoss(x *index) []Violation {
	if x.liveness < 0 {
		return nil
	}
	msgs, scan := collectMessages(x), collectSubs(x)
	delivered := newPairs[bool](x)
	for i, k := range x.kinds {
		if k.kind == Delivered {
			d := &x.ev[i]
			delivered.set(d.node, d.msg, true)
		}
	}
	match := newMatchMemo(scan.filters, x.topics, !x.sparse)
	var past map[streamKey]int32 // on a cut history (Cutoff): how far each stream got
	if x.cutoff {
		past = streamsDelivered(msgs, scan.subs, &delivered)
	}
	var expired *expiredOffline // built on the first candidate loss
	var limits *sizeLimits      // ... and so
	refused := refusedMsgs(x)
	var out []Violation
	for j := range msgs {
		m := &msgs[j]
		if m.clean || x.msgs[m.msg] == "" {
			continue // an empty payload carries no message id: its copies cannot be told apart (as QoS2ExactlyOnce and Order)
		}
		if isRefused(refused, m.msg) {
			continue // the broker refused it (PUBACK/PUBREC >= 0x80): it never owned it, so it owes it no one [MQTT-4.3.2-4] [MQTT-4.3.3-8] [MQTT-4.4.0-2]
		}
		for _, s := range scan.subs {
			if !s.owes(m, &scan.firstSent) || s.node == m.node || !match.matches(s, m) {
				continue
			}
			if delivered.get(s.node, m.msg) {
				continue
			}
			if past != nil && past[streamKey{s.node, m.node, m.tid}] < m.step {
				continue // the history was cut before the stream got to m: unfinished, not lost (Cutoff)
			}
			if expired == nil {
				expired = newExpiredOffline(x)
			}
			if expired.excused(m, s.node, scan.firstSent.get(s.node, m.msg) != 0) {
				continue // its Message Expiry ran out before the broker could send it [MQTT-3.3.2-5]
			}
			if limits == nil {
				limits = newSizeLimits(x)
			}
			if limits.excused(m, s.node) {
				continue // too large for the subscriber's Maximum Packet Size: dropped as if sent [MQTT-3.1.2-25]
			}
			drops := x.dropJudgeOf()
			if drops.excuses(x, m, s.node, scan.firstSent.get(s.node, m.msg) != 0) {
				continue // dropped as the broker's declared limits allow (droplimits.go) [MQTT-4.1.0-1]
			}
			node := x.nodes[s.node]
			out = append(out, NewViolation(NoLoss, int(m.step), node,
				fmt.Sprintf("msg %q (%s, %q, QoS %d) never delivered to %s, subscribed to %q at step %d%s",
					x.msgs[m.msg], x.nodes[m.node], x.topics[m.tid], m.qos, node, s.filter, s.step, drops.note(s.node, m.msg)),
				int(s.step), x.liveness))
			delivered.set(s.node, m.msg, true) // once per subscriber
		}
	}
	releasePairs(x, &delivered)
	releasePairs(x, &scan.firstSent)
	if x.sc != nil {
		x.sc.accepted = msgs
	}
	return out
}

// matchMemo caches Matches per (filter id, topic id).
type matchMemo struct {
	filters, topics []string
	memo            []int8 // 0 unknown, 1 match, 2 no match; nil: not cached
}

// maxMatchMemo bounds the memo's size (filters × topics).
const maxMatchMemo = 1 << 16

func newMatchMemo(filters, topics []string, memo bool) matchMemo {
	mm := matchMemo{filters: filters, topics: topics}
	if n := len(filters) * len(topics); n <= maxMatchMemo && memo {
		mm.memo = make([]int8, n)
	}
	return mm
}

// matches reports Matches(s.filter, m's topic).
func (mm *matchMemo) matches(s *sub, m *accepted) bool {
	if mm.memo == nil {
		return Matches(s.filter, mm.topics[m.tid])
	}
	k := int(s.fid)*len(mm.topics) + int(m.tid)
	if v := mm.memo[k]; v != 0 {
		return v == 1
	}
	ok := Matches(s.filter, mm.topics[m.tid])
	mm.memo[k] = 2
	if ok {
		mm.memo[k] = 1
	}
	return ok
}

// collectMessages lists the QoS>=1 Accepted messages in history order.
// streamKey is one publisher's messages on one topic as one subscriber
// gets them.
type streamKey struct{ sub, pub, tid int32 }

// streamsDelivered returns, per stream, the Accepted step of the latest
// message the subscriber delivered (a stream with none is absent: 0).
// A cut history (Cutoff) owes a subscriber only the messages its stream
// got past: messages of one publisher on one topic reach it in order
// [MQTT-4.6.0-5], so one accepted before a delivered one should have come.
func streamsDelivered(msgs []accepted, subs []*sub, delivered *pairs[bool]) map[streamKey]int32 {
	past := map[streamKey]int32{}
	for j := range msgs {
		m := &msgs[j]
		for _, s := range subs {
			k := streamKey{s.node, m.node, m.tid}
			if delivered.get(s.node, m.msg) && m.step > past[k] {
				past[k] = m.step
			}
		}
	}
	return past
}

func collectMessages(x *index) []accepted {
	var msgs []accepted
	if x.sc != nil {
		msgs = reuse(&x.sc.accepted, len(x.accs))[:0]
	} else {
		msgs = make([]accepted, 0, len(x.accs))
	}
	byMsg := takeDense[int32](x, len(x.msgs))    // msg id -> index in msgs + 1
	pending := make([][]int32, len(x.nodes))     // publisher -> accepted, not acknowledged
	unacked := map[nodeID]int32{}                // publisher, packet id -> a receipt the broker has not acknowledged: index in msgs
	cleanConn := make([]bool, len(x.nodes))      // client -> its last CONNECT asked Clean Start
	lostSession := map[int32]bool{}              // msgs excused by a Session Present 0 alone
	discards := make([]sessAnswer, len(x.nodes)) // client -> what the broker's last CONNACK to it did to its session
	ends, _ := sessionEnds(x)
	ei := 0
	acc := 0 // Accepted events so far
	for i, k := range x.kinds {
		if !messageEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if e.Kind == Accepted {
			acc++
		}
		switch {
		case e.Kind == Accepted && e.QoS >= 1:
			tid := x.accs[acc-1].topic
			msgs = append(msgs, accepted{step: int32(i), ref: int32(i), last: int32(i), node: d.node, msg: d.msg, tid: tid, qos: e.QoS})
			j := int32(len(msgs) - 1)
			byMsg[d.msg] = j + 1
			pending[d.node] = append(pending[d.node], j)
		case e.Kind == Acknowledged:
			pending[d.node] = removeMsg(msgs, pending[d.node], d.msg)
		case e.Kind == Connected && e.CleanStart:
			for _, j := range pending[d.node] {
				msgs[j].clean = true
			}
			pending[d.node] = pending[d.node][:0]
		case e.Kind == Sent && e.Packet.Type == CONNECT:
			cleanConn[d.node] = e.Packet.Clean
		case e.Kind == Crash && d.node == brokerID:
			clear(unacked) // those receipts may be lost: the publisher's resend is another
		case e.Kind == Sent && e.Packet.Type == CONNACK && d.node == brokerID:
			for ei < len(ends) && int(ends[ei].step) < i {
				ei++
			}
			discards[d.peer] = sessKept
			if ei < len(ends) && int(ends[ei].step) == i && ends[ei].seen {
				discards[d.peer] = sessDiscarded
			}
		case e.Kind == Received && e.Packet.Type == CONNACK && !e.Packet.Sessions && e.Packet.Reason < 0x80 && !cleanConn[d.node],
			e.Kind == Connected && !e.SessionPresent:
			// Session Present 0 to Clean Start 0 (read, even by a client
			// that crashed before it told its application, or told): the
			// session went with every flow in it [MQTT-3.2.2-5]. When the
			// broker's CONNACK shows the session expired first
			// [MQTT-4.1.0-2] (sessionEnds), what the broker had not
			// acknowledged may be dropped; a session the broker lost while
			// it should still live (a crash without persistence, or a
			// discard before its interval ran out) is the broker's loss,
			// and owes all. Without the broker's CONNACK in the history
			// the doubt goes to the implementation.
			// What is not excused stays pending: the client may still hold
			// it (one never sent is no session state, v5 §4.1), and a later
			// end of the session may excuse it.
			if discards[d.node] != sessKept {
				for _, j := range pending[d.node] {
					if !msgs[j].clean && !msgs[j].owned {
						msgs[j].clean, lostSession[j] = true, true
					}
				}
				pending[d.node] = pending[d.node][:0]
			}
		case e.Kind == Received && d.node == brokerID && e.Packet.Type == PUBLISH:
			if j := byMsg[d.msg]; j != 0 {
				m := &msgs[j-1]
				if d.peer != m.node || m.owned {
					break
				}
				if m.ref == m.step {
					m.ref = int32(i)
				}
				m.last = int32(i)
				if e.Packet.QoS > 0 {
					unacked[nodeID{d.peer, e.Packet.ID}] = j - 1
				}
			}
		case e.Kind == Sent && d.node == brokerID && (e.Packet.Type == PUBACK || e.Packet.Type == PUBREC):
			k := nodeID{d.peer, e.Packet.ID}
			if j, ok := unacked[k]; ok {
				msgs[j].owned = true
				if lostSession[j] { // sent again as new after the Session Present 0, and taken
					msgs[j].clean, lostSession[j] = false, false
				}
				delete(unacked, k)
			}
		}
	}
	if x.sc != nil {
		putSpare(&x.sc.i32, byMsg, maxPairSpares)
	}
	return msgs
}

// messageEvents are the events collectMessages reads.
var messageEvents = eventSet{kinds: kindBits(Accepted, Acknowledged, Connected, Crash), sent: typeBits(PUBACK, PUBREC, CONNECT, CONNACK), received: typeBits(PUBLISH, CONNACK)}.codes()

// sessAnswer is what the broker's last CONNACK to a client did to its
// session, as collectMessages reads it.
type sessAnswer uint8

const (
	sessUnseen    sessAnswer = iota // no CONNACK of the broker's in the history
	sessKept                        // kept it, or (Session Present=0) lost it while it should still live
	sessDiscarded                   // discarded it as the spec allows: expired, or never accepted (SessionWatch.Discards)
)

// removeMsg removes the first pending message whose id is msg.
func removeMsg(msgs []accepted, pending []int32, msg int32) []int32 {
	for i, j := range pending {
		switch {
		case msgs[j].msg != msg:
		case i == 0: // the oldest, as acks mostly come: no copy of the rest
			return pending[1:]
		default:
			return append(pending[:i], pending[i+1:]...)
		}
	}
	return pending
}

// owes reports whether the broker had to deliver m through s: the broker
// got m while s was in effect, and the way s ended does not excuse it.
// firstSent holds the step + 1 the broker first sent each node a PUBLISH of
// a message.
//
// Until the broker acknowledges a PUBLISH it does not own the message
// [MQTT-4.3.2-4] [MQTT-4.3.3-8]: a receipt followed by a broker crash
// before its PUBACK (PUBREC) may have been lost whole or in part (the
// publisher still holds the message and resends it), or kept (a QoS 2 id
// made durable first: the resend is then a duplicate [MQTT-4.3.3-10]).
// Each receipt from the first (ref) to the first one acknowledged (last)
// may be the publication the broker routed, so s owes m only when it was
// in effect at every one of them: at ref and at last, as s is one interval
// (swarm seed 222758374967: a receipt the broker crashed on, then a
// SUBSCRIBE at QoS 0 of the subscriber's QoS 1 filter, then the resend,
// acknowledged; the QoS 0 copy of an offline client need not be kept).
func (s *sub) owes(m *accepted, firstSent *pairs[int32]) bool {
	return s.owesAt(m.ref, m, firstSent) && s.owesAt(m.last, m, firstSent)
}

// owesAt reports whether s owes m if the broker's publication of m was its
// Received PUBLISH at step ref.
func (s *sub) owesAt(ref int32, m *accepted, firstSent *pairs[int32]) bool {
	if s.step >= int(ref) {
		return false
	}
	if s.end < 0 {
		return true
	}
	if int(ref) >= s.end {
		return false
	}
	if s.gone >= 0 {
		return false // the session ended before it was delivered [MQTT-3.1.2-4] [MQTT-4.1.0-2]
	}
	switch s.how {
	case endReplaced:
		return true
	case endUnsub:
		at := firstSent.get(s.node, m.msg)
		return at != 0 && int(at-1) < s.end
	}
	return false
}

// nodeID names one packet id of one client.
type nodeID struct {
	node int32
	id   uint16
}

// liveKey is one client's subscription of one filter.
type liveKey struct {
	node   int32
	filter string
}

// request is a SUBSCRIBE or UNSUBSCRIBE the broker received at step.
type request struct {
	typ, qos uint8
	filter   string
	step     int
}

// clientAck is the id of the last SUBACK/UNSUBACK a client received.
type clientAck struct {
	id uint16
	ok bool
}

// subScan is collectSubs' state while it walks the history.
type subScan struct {
	x          *index
	subs       []*sub
	filters    []string           // filter id -> filter
	filterIDs  map[string]int32   // filter -> id
	live       map[liveKey]*sub   // node, filter -> the subscription in effect
	persistent []bool             // node -> Persistent of its latest (at first: its first) Subscribed event
	tracked    []bool             // node -> the broker received a CONNECT of it: its session's life shows in the broker's events
	req        map[nodeID]request // SUBSCRIBE/UNSUBSCRIBE the broker received, by client and id
	brokerAck  map[nodeID]int     // step of the broker's last SUBACK/UNSUBACK sent, by client and id
	open       []nodeID           // requests in req the broker has not acknowledged yet, in the order received
	clientAck  [][2]clientAck     // client -> its last SUBACK and its last UNSUBACK received
	firstSent  pairs[int32]       // node, msg -> the broker's first PUBLISH of msg to node that may be its live copy (step + 1)
	retainedAt []int32            // msg -> the broker's first Received PUBLISH of it with RETAIN=1 (step + 1)
	subackAt   []int32            // node -> the broker's last SUBACK to it (step + 1)
}

// collectSubs lists the QoS>=1 subscriptions of the history in the order
// they took effect, each ended where its session ended (sessionEnds). A
// SUBSCRIBE or UNSUBSCRIBE takes effect when the broker processes it, whether or not its SUBACK/UNSUBACK reaches the
// client: at the broker's Sent SUBACK/UNSUBACK (sent once the change is
// installed). When the broker's Received SUBSCRIBE/UNSUBSCRIBE records the
// Filter, that is where the change is learnt from; otherwise from the
// client's Subscribed/Unsubscribed event, dated back to the broker's ack of
// the same packet id. A SUBSCRIBE of a filter the client already holds
// replaces that subscription [MQTT-3.8.4-3], at whatever QoS: a downgrade to
// QoS 0 ends the QoS>=1 one. A request the broker received and had not
// acknowledged when it crashed may or may not have taken effect (see
// unacked). A client whose CONNECT the broker's events never show is
// judged only when its Subscribed events say its session is persistent. A
// clean start (the broker's Received CONNECT with Clean Start, or a
// Connected event with CleanStart) ends every subscription of the client.
func collectSubs(x *index) *subScan {
	n := len(x.nodes)
	s := &subScan{
		x: x, filterIDs: map[string]int32{}, live: map[liveKey]*sub{}, persistent: make([]bool, n), tracked: make([]bool, n),
		req: map[nodeID]request{}, brokerAck: map[nodeID]int{}, clientAck: make([][2]clientAck, n),
		firstSent: newPairs[int32](x), retainedAt: make([]int32, len(x.msgs)), subackAt: make([]int32, n),
	}
	seen := make([]bool, n)
	for i, k := range x.kinds {
		switch {
		case k.kind == Subscribed:
			if node := x.ev[i].node; !seen[node] {
				seen[node], s.persistent[node] = true, x.h.Events[i].Persistent
			}
		case k.kind == Received && k.typ == CONNECT && x.ev[i].node == brokerID:
			s.tracked[x.ev[i].peer] = true
		}
	}
	ends, expiredAtEnd := sessionEnds(x)
	e := 0
	for i, k := range x.kinds {
		if subEvents.has(k) {
			for ; e < len(ends) && int(ends[e].step) <= i; e++ {
				s.endAll(ends[e].client, int(ends[e].step), endExpired)
			}
			s.step(i, &x.h.Events[i])
		}
	}
	for ; e < len(ends); e++ {
		s.endAll(ends[e].client, int(ends[e].step), endExpired)
	}
	for c, gone := range expiredAtEnd {
		if gone {
			s.endAll(int32(c), len(x.kinds), endExpired)
		}
	}
	return s
}

// subEvents are the events subScan.step reads.
var subEvents = eventSet{
	kinds:    kindBits(Subscribed, Unsubscribed, Connected, Crash),
	sent:     typeBits(SUBACK, UNSUBACK, PUBLISH),
	received: typeBits(SUBSCRIBE, UNSUBSCRIBE, CONNECT, SUBACK, UNSUBACK, PUBLISH),
}.codes()

func (s *subScan) step(i int, e *Event) {
	p, d := &e.Packet, &s.x.ev[i]
	switch {
	case e.Kind == Received && d.node == brokerID:
		switch p.Type {
		case SUBSCRIBE, UNSUBSCRIBE:
			k := nodeID{d.peer, p.ID}
			s.req[k] = request{typ: p.Type, qos: p.QoS, filter: p.Filter, step: i}
			if !slices.Contains(s.open, k) {
				s.open = append(s.open, k)
			}
		case CONNECT:
			if p.Clean {
				s.endAll(d.peer, i, endClean)
			}
		case PUBLISH:
			if p.Retain && s.retainedAt[d.msg] == 0 {
				s.retainedAt[d.msg] = int32(i + 1)
			}
		}
	case e.Kind == Sent && d.node == brokerID:
		s.brokerSent(i, e, d)
	case e.Kind == Received && (p.Type == SUBACK || p.Type == UNSUBACK):
		s.clientAck[d.node][b2i(p.Type == UNSUBACK)] = clientAck{id: p.ID, ok: true}
		s.acked(nodeID{d.node, p.ID}) // (a recorder that missed the broker's send)
	case e.Kind == Subscribed:
		s.persistent[d.node] = e.Persistent
		if at, ok := s.ackOf(e, d.node, i, SUBSCRIBE); ok {
			s.subscribe(d.node, e.Filter, e.QoS, at)
		}
	case e.Kind == Unsubscribed:
		if at, ok := s.ackOf(e, d.node, i, UNSUBSCRIBE); ok {
			s.end(d.node, e.Filter, at, endUnsub)
		}
	case e.Kind == Connected && e.CleanStart:
		s.endAll(d.node, i, endClean)
	case e.Kind == Crash && d.node == brokerID:
		s.unacked()
	}
}

// acked: the request k is acknowledged, no longer open.
func (s *subScan) acked(k nodeID) {
	if j := slices.Index(s.open, k); j >= 0 {
		s.open = slices.Delete(s.open, j, j+1)
	}
}

// unacked: the broker crashed holding requests it had not acknowledged.
// Each may or may not have taken effect, and the client, which got no
// SUBACK/UNSUBACK, does not resend it on reconnect (MQTT 5.0 §4.4: only
// PUBLISH and PUBREL are resent [MQTT-4.4.0-1]), so the subscription stays
// in doubt until the client's next request for the filter is acknowledged.
// What a subscription in doubt would carry is neither owed here nor
// forbidden (the routing pass's maybe): an UNSUBSCRIBE, or a SUBSCRIBE at
// QoS 0 of a filter held at QoS>=1, ends the QoS>=1 subscription as if it
// took effect when the broker received it (a replacement keeps what was
// routed before [MQTT-3.8.4-3], an unsubscription what the broker had
// started to send [MQTT-3.10.4-3]); a SUBSCRIBE at QoS>=1 is not installed
// (it is owed nothing before its SUBACK), and leaves a QoS>=1 one in place.
func (s *subScan) unacked() {
	for _, k := range s.open {
		r := s.req[k]
		switch {
		case r.filter == "":
		case r.typ == UNSUBSCRIBE:
			s.end(k.node, r.filter, r.step, endUnsub)
		case r.qos == 0:
			s.end(k.node, r.filter, r.step, endReplaced)
		}
	}
	s.open = s.open[:0]
}

// brokerSent follows the broker's SUBACK, UNSUBACK and PUBLISH packets.
func (s *subScan) brokerSent(i int, e *Event, d *evIDs) {
	p := &e.Packet
	k := nodeID{d.peer, p.ID}
	switch p.Type {
	case SUBACK, UNSUBACK:
		s.brokerAck[k] = i
		if p.Type == SUBACK {
			s.subackAt[d.peer] = int32(i + 1)
		}
		s.acked(k)
		r, ok := s.req[k]
		if !ok || r.filter == "" {
			return
		}
		if p.Type == SUBACK && r.typ == SUBSCRIBE && p.Reason < reasonFailure { // a refusal (0x80 or more, §3.9.3) subscribes to nothing
			s.subscribe(d.peer, r.filter, r.qos, i)
		} else if p.Type == UNSUBACK && r.typ == UNSUBSCRIBE {
			s.end(d.peer, r.filter, i, endUnsub)
		}
	case PUBLISH:
		if p.Msg != "" && s.firstSent.get(d.peer, d.msg) == 0 && !s.maybeRetainedCopy(p, d) {
			s.firstSent.set(d.peer, d.msg, int32(i+1))
		}
	}
}

// maybeRetainedCopy reports whether the broker's PUBLISH p to d.peer may be
// the retained copy a SUBACK brought rather than the live copy a
// subscription owes: it has RETAIN=1, the broker stored its message as
// retained before, and sent the client a SUBACK since [MQTT-3.3.1-9]. Such
// a copy (at the QoS that SUBACK granted [MQTT-3.8.4-8]: QoS 0 on a QoS 0
// filter) does not start the live copy's delivery: the live one may still
// expire unsent [MQTT-3.3.2-5], and an UNSUBSCRIBE may still drop it
// [MQTT-3.10.4-3]. A live copy keeps RETAIN=1 only under Retain As
// Published [MQTT-3.3.1-12]; when it may be either, the doubt goes to the
// broker.
func (s *subScan) maybeRetainedCopy(p *Packet, d *evIDs) bool {
	at := s.retainedAt[d.msg]
	return p.Retain && at != 0 && s.subackAt[d.peer] > at
}

// ackOf returns the step a Subscribed/Unsubscribed event of node took
// effect: the broker's ack of the packet id the client last received a
// SUBACK (UNSUBACK) for. ok is false when the broker's Received request already recorded the
// change.
func (s *subScan) ackOf(e *Event, node int32, i int, want uint8) (int, bool) {
	ca := s.clientAck[node][b2i(want == UNSUBSCRIBE)] // one read may bring a SUBACK and an UNSUBACK
	if !ca.ok {
		return i, true
	}
	k := nodeID{node, ca.id}
	at, acked := s.brokerAck[k]
	if !acked || at > i {
		return i, true
	}
	if r, ok := s.req[k]; ok && r.typ == want && r.filter == e.Filter {
		return at, false
	}
	return at, true
}

// subscribe replaces node's subscription of filter at step at.
func (s *subScan) subscribe(node int32, filter string, qos uint8, at int) {
	s.end(node, filter, at, endReplaced)
	if qos == 0 || !s.persistent[node] && !s.tracked[node] {
		return
	}
	fid, ok := s.filterIDs[filter]
	if !ok {
		fid = int32(len(s.filters))
		s.filterIDs[filter] = fid
		s.filters = append(s.filters, filter)
	}
	n := &sub{node: node, filter: filter, fid: fid, step: at, end: -1, qos: qos, gone: -1}
	s.subs = append(s.subs, n)
	s.live[liveKey{node, filter}] = n
}

// end stops node's subscription of filter at step at.
func (s *subScan) end(node int32, filter string, at int, how subEnd) {
	k := liveKey{node, filter}
	n := s.live[k]
	if n == nil {
		return
	}
	delete(s.live, k)
	n.end, n.how = at, how
}

// endAll ends every subscription of node at step at, as how says (a
// clean start, or the session's expiry). The subscriptions in effect are
// exactly those not ended yet.
func (s *subScan) endAll(node int32, at int, how subEnd) {
	for _, n := range s.subs {
		switch {
		case n.node != node:
		case n.end < 0:
			s.end(node, n.filter, at, how)
		case n.gone < 0 && (n.how == endReplaced || n.how == endUnsub) && n.end <= at:
			n.gone = at
		}
	}
}
