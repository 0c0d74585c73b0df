package model

import (
	"fmt"
	"slices"
	"strings"
)

// QueueFull is what a broker declares it does when a message arrives for a
// session whose queue is at its bound.
type QueueFull uint8

// Queue-full policies.
const (
	DropOldest QueueFull = iota + 1 // the oldest queued copy goes to make room
	DropNewest                      // the arriving copy goes
)

// String names the policy as -promise and the broker's drop log write it.
func (q QueueFull) String() string {
	switch q {
	case DropOldest:
		return "drop-oldest"
	case DropNewest:
		return "drop-newest"
	}
	return fmt.Sprintf("QueueFull(%d)", uint8(q))
}

// BrokerLimits are the limits a broker declares it may drop messages at.
// The spec asks a server to keep a session's messages for the whole
// session [MQTT-4.1.0-1], and says in the same section (MQTT 5.0 §4.1,
// 3.1.1 §4.1, non-normative) that its storage "will of course have limits
// in terms of capacity" and that stored state may be discarded as an
// automated response to defined conditions: a broker that declares those
// conditions is judged by them. The zero value declares none: every drop
// of an owed copy is a loss.
type BrokerLimits struct {
	// Queue bounds each session's queue of QoS 1/2 copies waiting to be
	// sent (for the in-flight window or for the client to come back);
	// 0: no bound declared.
	Queue int
	// QueueFull is which copy goes at the bound (required with Queue).
	QueueFull QueueFull
	// Inflight is the most QoS 1/2 copies the broker holds for a client
	// outside its queue, sent or given a packet id and not acknowledged
	// (0: not declared; then which copy a drop-oldest drop took is judged
	// only by the order of the drops).
	Inflight int
	// Expiry, in seconds, is the longest a copy waits unsent before the
	// broker may discard it, whatever Message Expiry it was published with
	// (0: none).
	Expiry uint32
}

// Declared reports whether any limit is declared.
func (l BrokerLimits) Declared() bool { return l != BrokerLimits{} }

// Validate reports a limit that cannot hold.
func (l BrokerLimits) Validate() error {
	switch {
	case l.Queue < 0:
		return fmt.Errorf("%w: queue bound %d is negative", ErrBadPolicy, l.Queue)
	case l.Queue > 0 && l.QueueFull != DropOldest && l.QueueFull != DropNewest:
		return fmt.Errorf("%w: queue bound %d without drop-oldest or drop-newest", ErrBadPolicy, l.Queue)
	case l.Queue == 0 && l.QueueFull != 0:
		return fmt.Errorf("%w: a queue-full policy without a queue bound", ErrBadPolicy)
	case l.Inflight < 0 || l.Inflight > 65535:
		return fmt.Errorf("%w: in-flight window %d not in 0..65535", ErrBadPolicy, l.Inflight)
	}
	return nil
}

// String writes the limits as -promise takes them: "queue:1000:drop-oldest,
// inflight:32, expiry:60"; "none" when none is declared.
func (l BrokerLimits) String() string {
	var parts []string
	if l.Queue > 0 {
		parts = append(parts, fmt.Sprintf("queue:%d:%s", l.Queue, l.QueueFull))
	}
	if l.Inflight > 0 {
		parts = append(parts, fmt.Sprintf("inflight:%d", l.Inflight))
	}
	if l.Expiry > 0 {
		parts = append(parts, fmt.Sprintf("expiry:%d", l.Expiry))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Drop reasons of a Dropped event (the first word of its Reason).
const (
	DropReasonQueueFull = "queue-full"
	DropReasonExpired   = "expired"
)

// dropWord is the first word of a Dropped event's Reason.
func dropWord(reason string) string {
	w, _, _ := strings.Cut(reason, " ")
	return w
}

// dropVerdict is the judgement of one Dropped event of an owed copy.
type dropVerdict struct {
	step    int    // the Dropped event
	excused bool   // the declared limits allow it
	why     string // what the drop was and, unexcused, why not
}

// dropJudge judges the broker's Dropped events under the declared limits
// (x.limits) for NoLoss, FlowResume, SharedDelivery, Retained and Will. A queue-full drop of client c's
// copy of message m, recorded at step d, is excused only when all of these
// hold:
//
//   - a queue bound N and its policy are declared;
//   - the copy was not sent to c before d: a queue holds copies waiting to
//     be sent, not copies in flight;
//   - the queue may have been full: at some step t between the broker's
//     receipt of m and d, the copies that may have been queued for c
//     (queueable: one per receipt of a publication routed to c, wills,
//     retained copies a SUBSCRIBE brought) that had entered by t and had
//     not left by t (sent to c, dropped as recorded, or discarded with a
//     clean start of c), number at least N plus the arriving one
//     (drop-oldest); for drop-newest, where m itself is the arriving one,
//     at least N besides m and the copies of m's publisher received after
//     m arrived: at its receipt, or, for a shared subscription's member,
//     as late as the last end of another member's session before d that
//     may have handed m on (MQTT 5.0 §4.8.2; handon.go). This
//     count never understates the broker's queue at the drop (the
//     recorder writes a Received before the broker reads the packet, a
//     Sent after the broker wrote it; the drop took place between the
//     receipt and its log line), so a drop it finds short of the bound is
//     against the bound whatever the timing. A client with no persistent
//     QoS>=1 subscription is not judged: the model follows none of its
//     subscriptions to bound its queue;
//   - no earlier copy of the same publisher for c is dropped after it
//     (the drop log is in the broker's order): under drop-oldest that copy
//     was queued and older, under drop-newest m should have gone as it
//     arrived, after that copy had (not judged for a shared subscription's
//     member, whose copies are not ordered [MQTT-4.6.0-6]);
//   - drop-oldest with a declared in-flight window W: no more than W
//     earlier copies of the same publisher were first sent to c on a
//     connection c opened after d: they were unsent at the drop and not
//     dropped, so queued or held in the window (a copy the broker gave a
//     packet id and wrote to a connection that died before the bytes were
//     recorded is held, not queued), and older than m. Without W the
//     window is unknown and this is not judged.
//
// An expired drop is excused, under a declared Expiry, when the copy
// waited that long after the broker received it (Event.Time). A drop
// without declared limits excuses nothing; NoLoss names it in the
// violation. Copies of one publisher reach the broker in order on one
// connection [MQTT-4.6.0-5]: the order rules compare only those.
type dropJudge struct {
	x          *index
	verdicts   map[[2]int32]dropVerdict // (client, msg) -> the first drop of that copy
	topicByMsg map[int32]string         // msg -> the topic it was accepted with
	ends       [][]int32                // client -> where its session may have ended (handon.go), built on first use
	sharers    [][]sharer               // client -> the nodes that asked for one of its shared subscriptions (handon.go), with ends
	wills      map[int32]willSpan       // the broker's Received CONNECT of a QoS>=1 will -> its span
}

// dropCopy is one copy routed to a client, for the queue count.
type dropCopy struct {
	ref   int32 // the broker's receipt of the message
	leave int32 // first step it is certainly out of the queue (sent, dropped, cleaned), or maxInt32
	msg   int32
	pub   int32
	sent  int32 // first send to the client + 1, or 0
	drop  int32 // its recorded queue-full drop, or -1
	// cleanFrom: a clean start of the client after this step discards
	// the copy (the broker had queued it by then); the copy's ref, but for
	// a will, whose publication may come long after ref: the step by which
	// the broker had certainly published it, or noStep (see willSpans)
	cleanFrom int32
	// unordered: the client holds a shared subscription, whose messages
	// are not ordered [MQTT-4.6.0-6] (a member's copies handed on to
	// another member join its queue behind later ones)
	unordered bool
}

const noStep = int32(1<<31 - 1)

// dropJudgeOf returns x's drop judge, built on first use; nil when the
// history records no Dropped event.
func (x *index) dropJudgeOf() *dropJudge {
	if !x.dropped {
		return nil
	}
	if x.drops == nil {
		x.drops = newDropJudge(x)
	}
	return x.drops
}

func newDropJudge(x *index) *dropJudge {
	j := &dropJudge{x: x, verdicts: map[[2]int32]dropVerdict{}, topicByMsg: map[int32]string{}}
	for i, k := range x.kinds {
		if k.kind == Accepted {
			j.topicByMsg[x.ev[i].msg] = x.h.Events[i].Topic
		}
	}
	type rec struct {
		step      int
		node, msg int32
	}
	var drops []rec
	for i, k := range x.kinds {
		if k.kind != Dropped || x.ev[i].node != brokerID {
			continue
		}
		d := &x.ev[i]
		key := [2]int32{d.peer, d.msg}
		if _, ok := j.verdicts[key]; ok {
			continue
		}
		j.verdicts[key] = dropVerdict{step: i, why: "the broker dropped it (" + x.h.Events[i].Reason + ")"}
		drops = append(drops, rec{i, d.peer, d.msg})
	}
	scan := collectSubs(x)
	defer releasePairs(x, &scan.firstSent)
	copies := map[int32][]dropCopy{} // client -> the copies that may have been queued for it, in ref order
	cleans := map[int32][]int32{}    // client -> its clean starts
	connects := map[int32][]int32{}  // client -> the broker's Received CONNECTs from it
	connected := map[int32][]int32{} // client -> its Connected events
	for _, r := range drops {
		if w := dropWord(x.h.Events[r.step].Reason); w == DropReasonQueueFull || w == DropReasonExpired {
			copies[r.node] = nil // only these are judged against the copies
		}
	}
	for i, k := range x.kinds {
		d := &x.ev[i]
		e := &x.h.Events[i]
		switch {
		case k.kind == Received && k.typ == CONNECT && d.node == brokerID:
			connects[d.peer] = append(connects[d.peer], int32(i))
			if e.Packet.Clean {
				cleans[d.peer] = append(cleans[d.peer], int32(i))
			}
		case k.kind == Connected && e.CleanStart:
			// The broker took this clean start at its receipt of the
			// CONNECT, already a clean start above: a copy routed after
			// that receipt, before the CONNACK arrived, joined the new
			// session. Only a history without the broker's receipt cuts
			// here.
			if cs := connects[d.node]; len(cs) == 0 || (len(connected[d.node]) > 0 && cs[len(cs)-1] < connected[d.node][len(connected[d.node])-1]) {
				cleans[d.node] = append(cleans[d.node], int32(i))
			}
		}
		if k.kind == Connected {
			connected[d.node] = append(connected[d.node], int32(i))
		}
	}
	if len(copies) > 0 {
		j.wills = willSpans(x)
	}
	for c := range copies {
		slices.Sort(cleans[c])
		copies[c] = j.queueable(c, scan, cleans[c])
	}
	for _, r := range drops {
		key := [2]int32{r.node, r.msg}
		v := j.verdicts[key]
		e := &x.h.Events[r.step]
		switch dropWord(e.Reason) {
		case DropReasonQueueFull:
			v.excused, v.why = j.queueFull(r.step, r.node, r.msg, copies[r.node], connects[r.node], v.why)
		case DropReasonExpired:
			v.excused, v.why = j.expired(r.step, r.node, r.msg, copies[r.node], v.why)
		}
		j.verdicts[key] = v
	}
	return j
}

// queueable lists the copies that may have been queued for client c,
// each from the step it may have entered c's queue (ref) to the step it
// certainly left it (leave): an upper bound on c's queue at every step.
// Each is one of:
//
//   - a QoS>=1 PUBLISH the broker received, for each receipt (a publisher's
//     QoS 1 resend, or any resend after a broker crash, is routed again as
//     a new copy; a QoS 2 resend the broker still holds is not), when a QoS>=1 subscription of c (persistent, as NoLoss
//     counts one; a shared one by its inner filter: the group may choose
//     c) matching its topic was in effect then, or when the broker sent c
//     a copy of it or dropped one later (a subscription in doubt after a
//     broker crash routes copies the model does not owe);
//   - a will with QoS>=1, from the first step its connection may have
//     ended at (it is published then, or after its Will Delay
//     [MQTT-3.1.2-8]; willSpans), when such a subscription of c matches
//     it at any step after, or the broker sent or dropped a copy of it
//     for c; none for a will nothing shows published that never was (its
//     connection outlives the history, a DISCONNECT 0x00 deleted it, the
//     client came back within its delay);
//   - a retained message (a PUBLISH received with RETAIN=1) matching a
//     SUBSCRIBE of c the broker received after it, from that SUBSCRIBE.
//
// A copy leaves the queue at its first PUBLISH to c with DUP=0 after ref
// (its first transmission [MQTT-3.3.1-1]; a resend of an earlier copy has
// DUP=1) or its first recorded queue-full drop after ref, whichever comes
// first, or at c's next clean start after it was queued (a will's: after
// the broker certainly published it; a clean start counts from the
// broker's receipt of its CONNECT: a copy routed after it, before the
// client read the CONNACK, joined the new session); the copies of one
// message to c (and the copies without a message id, which share id 0)
// take its transmissions and drops in order, each the first not taken by
// an earlier copy, as a session's queue lets its copies go in order.
func (j *dropJudge) queueable(c int32, scan *subScan, cleans []int32) []dropCopy {
	x := j.x
	var subs []*sub
	unordered := false
	for _, s := range scan.subs {
		if s.node == c {
			subs = append(subs, s)
			_, shared := sharedInner(s.filter)
			unordered = unordered || shared
		}
	}
	if len(subs) == 0 {
		// No persistent QoS>=1 subscription: the model follows no
		// subscription of c's, so it cannot bound c's queue, and owes c
		// nothing NoLoss would judge; its drops are not judged.
		return nil
	}
	matches := func(s *sub, topic string) bool {
		if inner, ok := sharedInner(s.filter); ok {
			return Matches(inner, topic)
		}
		return Matches(s.filter, topic)
	}
	routedAt := func(at int, topic string) bool {
		for _, s := range subs {
			if s.step < at && (s.end < 0 || at < s.end) && matches(s, topic) {
				return true
			}
		}
		return false
	}
	routedAfter := func(at int, topic string) bool {
		for _, s := range subs {
			if (s.end < 0 || at < s.end) && matches(s, topic) {
				return true
			}
		}
		return false
	}
	var cs []dropCopy
	var retained []int            // the broker's Received PUBLISHes with RETAIN=1 and a message id
	leaves := map[int32][]int32{} // msg -> c's first transmissions (step) and queue-full drops (-step-1) of it, in order
	others := map[int32][]int32{} // msg -> c's other drops of it (expired, too large), in order
	for i, k := range x.kinds {
		d, e := &x.ev[i], &x.h.Events[i]
		switch {
		case k.kind == Sent && d.node == brokerID && k.typ == PUBLISH && d.peer == c && !e.Packet.Dup && e.Packet.QoS >= 1:
			leaves[d.msg] = append(leaves[d.msg], int32(i))
		case k.kind == Dropped && d.node == brokerID && d.peer == c && dropWord(e.Reason) == DropReasonQueueFull:
			leaves[d.msg] = append(leaves[d.msg], -int32(i)-1)
		case k.kind == Dropped && d.node == brokerID && d.peer == c:
			// Another drop (its Message Expiry ran out, too large): the
			// copy was queued until then [MQTT-3.3.2-5] [MQTT-3.1.2-25].
			others[d.msg] = append(others[d.msg], int32(i))
		}
	}
	crashes := j.brokerCrashes()
	lastRecv := map[[2]int32]int32{} // publisher, msg -> the broker's last receipt of it
	for m := range leaves {
		slices.SortFunc(leaves[m], func(a, b int32) int { return int(stepOf(a) - stepOf(b)) })
	}
	// reached reports whether the broker sent c a copy of msg, or dropped
	// one, after step at: then it routed one to c whatever the model
	// knows of c's subscriptions (one in doubt after a broker crash, a
	// shared group's choice).
	reached := func(msg int32, at int) bool {
		l, o := leaves[msg], others[msg]
		return (len(l) > 0 && int(stepOf(l[len(l)-1])) > at) || (len(o) > 0 && int(o[len(o)-1]) > at)
	}
	for i, k := range x.kinds {
		d := &x.ev[i]
		e := &x.h.Events[i]
		switch {
		case k.kind == Received && d.node == brokerID && k.typ == PUBLISH && e.Packet.QoS >= 1:
			// An empty payload (a retained message's clear) is queued like
			// any other; its copies share message id 0. A QoS 2 resend the
			// broker still holds is not routed again [MQTT-4.3.3-10]: only
			// its first receipt, or one after a broker crash, is.
			key := [2]int32{d.peer, d.msg}
			prev, seen := lastRecv[key]
			lastRecv[key] = int32(i)
			if e.Packet.QoS == 2 && d.msg != 0 && seen && !j.crashBetween(prev, int32(i)) {
				continue
			}
			topic := j.topicOf(i)
			if routedAt(i, topic) || reached(d.msg, i) {
				cs = append(cs, dropCopy{ref: int32(i), msg: d.msg, pub: d.peer, cleanFrom: int32(i)})
			}
			if e.Packet.Retain && d.msg != 0 {
				retained = append(retained, i)
			}
		case k.kind == Received && d.node == brokerID && k.typ == CONNECT && e.Packet.Will && e.Packet.QoS >= 1 && d.msg != 0:
			w, ok := j.wills[int32(i)]
			if ok && (reached(d.msg, i) || (!w.never && routedAfter(int(w.from), e.Packet.Topic))) {
				cs = append(cs, dropCopy{ref: w.from, msg: d.msg, pub: -1, cleanFrom: w.pubBy})
			}
		case k.kind == Received && d.node == brokerID && k.typ == SUBSCRIBE && d.peer == c && e.Packet.QoS >= 1:
			for _, r := range retained {
				if Matches(e.Packet.Filter, j.topicOf(r)) {
					cs = append(cs, dropCopy{ref: int32(i), msg: x.ev[r].msg, pub: -1, cleanFrom: int32(i)})
				}
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b dropCopy) int { return int(a.ref - b.ref) })
	taken := map[int32]int{} // msg -> how many of its leaves earlier copies took
	for n := range cs {
		cp := &cs[n]
		cp.leave, cp.drop, cp.unordered = noStep, -1, unordered
		l, t := leaves[cp.msg], taken[cp.msg]
		for t < len(l) && stepOf(l[t]) <= cp.ref {
			t++ // a transmission or drop before the copy existed is another's
		}
		if t < len(l) {
			if at := l[t]; at < 0 {
				cp.drop, cp.leave = stepOf(at), stepOf(at)
			} else {
				cp.sent, cp.leave = at+1, at
			}
			t++
		} else if o := others[cp.msg]; len(o) > 0 {
			// No transmission or queue-full drop took it: it left at the
			// first other drop of its message after it was queued.
			if k, _ := slices.BinarySearch(o, cp.ref+1); k < len(o) {
				cp.leave = o[k]
			}
		}
		taken[cp.msg] = t
	}
	// A copy dropped before a broker crash may come back with the restart
	// (the deletion of its record was not yet durable: the drop is
	// recorded as the broker decides it, before its writes take effect)
	// and leave again: it is queued again from the restart to its next
	// transmission or queue-full drop that no copy took, or, failing one,
	// its next other drop (its Message Expiry ran out again, still too
	// large), shared as the first copies share them. That holds for a
	// queue-full drop and for any other drop alike [MQTT-3.3.2-5]
	// [MQTT-3.1.2-25]; a copy restored by one restart may be dropped and
	// restored again by the next.
	for n := 0; n < len(cs); n++ {
		cp := cs[n]
		gone := cp.drop // the step it was dropped at, or -1
		if gone < 0 && cp.sent == 0 && cp.leave != noStep {
			gone = cp.leave // an other drop (no clean start has cut it yet)
		}
		if gone < 0 {
			continue
		}
		k, _ := slices.BinarySearch(crashes, gone)
		if k == len(crashes) {
			continue
		}
		crash := crashes[k]
		l, t := leaves[cp.msg], taken[cp.msg]
		for t < len(l) && stepOf(l[t]) <= crash {
			t++
		}
		again := dropCopy{ref: crash, leave: noStep, msg: cp.msg, pub: cp.pub, drop: -1, unordered: cp.unordered, cleanFrom: crash}
		switch o := others[cp.msg]; {
		case t < len(l):
			if at := l[t]; at < 0 {
				again.drop, again.leave = stepOf(at), stepOf(at)
			} else {
				again.sent, again.leave = at+1, at
			}
			taken[cp.msg] = t + 1
		case len(o) > 0 && o[len(o)-1] > crash:
			k, _ := slices.BinarySearch(o, crash+1)
			again.leave = o[k]
		default:
			continue // nothing shows it came back
		}
		cs = append(cs, again)
	}
	slices.SortStableFunc(cs, func(a, b dropCopy) int { return int(a.ref - b.ref) })
	for n := range cs {
		if cs[n].unordered {
			// A shared subscription's member gets the copies of another
			// member whose session ended (handed on [MQTT-4.8.2-5]) at that
			// end, after its own clean start perhaps: not cut there.
			continue
		}
		if from := cs[n].cleanFrom; from != noStep {
			if k, _ := slices.BinarySearch(cleans, from+1); k < len(cleans) {
				cs[n].leave = min(cs[n].leave, cleans[k]) // a clean start discards the session [MQTT-3.1.2-4]
			}
		}
	}
	return cs
}

// crashBetween reports whether the broker crashed between steps a and b.
func (j *dropJudge) crashBetween(a, b int32) bool {
	for i := a + 1; i < b; i++ {
		if k := j.x.kinds[i]; k.kind == Crash && j.x.ev[i].node == brokerID {
			return true
		}
	}
	return false
}

// brokerCrashes returns the steps of the broker's crashes, in order.
func (j *dropJudge) brokerCrashes() []int32 {
	var out []int32
	for i, k := range j.x.kinds {
		if k.kind == Crash && j.x.ev[i].node == brokerID {
			out = append(out, int32(i))
		}
	}
	return out
}

// stepOf is the step of a leaves entry of queueable.
func stepOf(v int32) int32 {
	if v < 0 {
		return -v - 1
	}
	return v
}

// topicOf returns the topic of the PUBLISH of event i: its own, or, sent
// by topic alias alone, the topic its message was accepted with.
func (j *dropJudge) topicOf(i int) string {
	if t := j.x.h.Events[i].Packet.Topic; t != "" {
		return t
	}
	return j.topicByMsg[j.x.ev[i].msg]
}

// queueFull judges a queue-full drop (see dropJudge).
func (j *dropJudge) queueFull(d int, c, msg int32, cs []dropCopy, connects []int32, what string) (bool, string) {
	if j.x.limits.Queue == 0 {
		return false, what + ", but the broker declares no queue limit (MQTT 5.0 §4.1: a server keeps a session's messages for the session [MQTT-4.1.0-1])"
	}
	why, found := "", false
	for _, m := range cs {
		if m.msg != msg || m.ref >= int32(d) {
			continue
		}
		found = true
		ok, w := j.queueFullCopy(d, c, m, cs, connects, what)
		if ok {
			return true, what // the drop of this copy is allowed
		}
		why = w
	}
	if !found {
		return true, what // not a copy the model owes c
	}
	return false, why
}

// queueFullCopy judges a queue-full drop of copy m, one of the copies of
// the dropped message that may have been queued for c (see dropJudge).
func (j *dropJudge) queueFullCopy(d int, c int32, m dropCopy, cs []dropCopy, connects []int32, what string) (bool, string) {
	x, lim := j.x, j.x.limits
	node := x.nodes[c]
	decl := fmt.Sprintf("the declared queue:%d:%s", lim.Queue, lim.QueueFull)
	if m.sent != 0 && int(m.sent-1) < d {
		return false, fmt.Sprintf("%s at step %d, but it had sent it to %s at step %d: a queue-full drop takes a queued copy, not one in flight (%s)", what, d, node, m.sent-1, decl)
	}
	// The most copies that may have been queued at one step of [m.ref, d).
	type edge struct{ at, delta int32 }
	var edges []edge
	arrived := m.ref // the latest m may have entered c's queue
	if m.unordered && lim.QueueFull == DropNewest {
		arrived = max(arrived, j.handOnAt(c, m.ref, d)) // handed on at another member's session end (MQTT 5.0 §4.8.2)
	}
	for _, k := range cs {
		if k.ref >= int32(d) || k.leave <= m.ref {
			continue
		}
		if lim.QueueFull == DropNewest && m.pub >= 0 && k.pub == m.pub && k.ref >= m.ref && (k.ref == m.ref || k.ref > arrived) {
			continue // m and the later copies of its publisher came after the queue it met [MQTT-4.1.0-1]
		}
		edges = append(edges, edge{max(k.ref, m.ref), 1})
		if k.leave < int32(d) {
			edges = append(edges, edge{k.leave, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return int(b.delta - a.delta) // arrivals first: the most the step may hold
	})
	most, n := 0, 0
	for _, e := range edges {
		n += int(e.delta)
		most = max(most, n)
	}
	need := lim.Queue + 1
	if lim.QueueFull == DropNewest {
		need = lim.Queue
	}
	if most < need {
		return false, fmt.Sprintf("%s at step %d, but at most %d copies for %s may have been queued between the broker's receipt of it (step %d) and the drop, where %s needs %d [MQTT-4.1.0-1]",
			what, d, most, node, m.ref, decl, need)
	}
	late := 0 // earlier copies of m's publisher first sent on a connection opened after d
	var after int32 = noStep
	if k, _ := slices.BinarySearch(connects, int32(d)); k < len(connects) {
		after = connects[k]
	}
	for _, k := range cs {
		if m.pub < 0 || k.pub != m.pub || k.ref >= m.ref || m.msg == 0 || k.msg == 0 || m.unordered {
			continue // a will or a retained copy is in no publisher's order, nor a shared subscription's copy [MQTT-4.6.0-6]; copies without a message id cannot be told apart
		}
		if k.drop > int32(d) && !slices.ContainsFunc(cs, func(o dropCopy) bool { return o.msg == k.msg && o.ref > k.ref && o.ref < k.drop }) && !j.crashBetween(int32(d), k.drop) {
			// (a later receipt of k's message before that drop may have
			// been the copy it dropped: then k is not known to be older;
			// nor is it when a broker restart came between, which rebuilt
			// the queue from the broker's records)
			return false, fmt.Sprintf("%s at step %d, but it dropped msg %q of the same publisher, received before it, later (step %d): %s never drops a later copy of one publisher before an earlier one [MQTT-4.6.0-5]",
				what, d, x.msgs[k.msg], k.drop, decl)
		}
		if k.sent != 0 && k.sent-1 > after {
			late++
		}
	}
	if lim.QueueFull == DropOldest && lim.Inflight > 0 && late > lim.Inflight {
		return false, fmt.Sprintf("%s at step %d, but %d copies of the same publisher received before it were still unsent then (first sent on %s's connection of step %d), more than the in-flight window of %d: it was not the oldest queued (%s)",
			what, d, late, node, after, lim.Inflight, decl)
	}
	return true, what
}

// expired judges an expired drop under a declared Expiry.
func (j *dropJudge) expired(d int, c, msg int32, cs []dropCopy, what string) (bool, string) {
	lim := j.x.limits
	if lim.Expiry == 0 {
		return false, what // lossexpiry.go judges the message's own Message Expiry
	}
	at := slices.IndexFunc(cs, func(cp dropCopy) bool { return cp.msg == msg })
	if at < 0 {
		return true, what
	}
	waited := j.x.h.Events[d].Time - j.x.h.Events[cs[at].ref].Time
	if waited >= int64(lim.Expiry)*1e9 {
		return true, what
	}
	return false, fmt.Sprintf("%s after %dms, before the declared expiry:%d ran out", what, waited/1e6, lim.Expiry)
}

// recorded returns the verdict on the broker's recorded drop of client
// node's copy of msg: ok is false when it recorded none.
func (j *dropJudge) recorded(node, msg int32) (excused, ok bool) {
	if j == nil {
		return false, false
	}
	v, ok := j.verdicts[[2]int32{node, msg}]
	return v.excused, ok
}

// excusedAny reports whether the broker recorded a drop of some client's
// copy of msg that the declared limits allow (msg was published).
func (j *dropJudge) excusedAny(msg int32) bool {
	if j == nil || msg == 0 {
		return false
	}
	for key, v := range j.verdicts {
		if key[1] == msg && v.excused {
			return true
		}
	}
	return false
}

// note is what NoLoss adds to the loss of client node's copy of msg: the
// broker's drop of it and why the limits do not excuse it ("" when the
// broker recorded none).
func (j *dropJudge) note(node, msg int32) string {
	if j == nil {
		return ""
	}
	if v, ok := j.verdicts[[2]int32{node, msg}]; ok {
		return "; " + v.why
	}
	return ""
}

// excuses reports whether the declared limits excuse the loss of client
// node's copy of m (sent: the broker sent it): the verdict on the
// broker's recorded drop of it when there is one; otherwise, under a
// declared Expiry, a copy never sent whose wait ran that long before the
// history ended (a broker that logs no drops).
func (j *dropJudge) excuses(x *index, m *accepted, node int32, sent bool) bool {
	if v, ok := j.recorded(node, m.msg); ok {
		return v
	}
	return !sent && waitedPast(x, int(m.ref))
}

// waitedPast reports whether a declared Expiry ran out between step
// from and the history's end.
func waitedPast(x *index, from int) bool {
	h := x.h.Events
	return x.limits.Expiry > 0 && len(h) > 0 && h[len(h)-1].Time-h[from].Time >= int64(x.limits.Expiry)*1e9
}

// willSpan is what the broker's events tell of when a will message
// (QoS>=1) may have entered a subscriber's queue: not before its
// connection may have ended [MQTT-3.1.2-8], which for a long-lived
// connection is long after the CONNECT that carried it.
type willSpan struct {
	// from: the first step the will's connection may have ended at (a
	// close of the client's at the broker, its next CONNECT, a broker
	// crash), or the first send or drop of the will before that: no
	// copy of it was queued earlier.
	from int32
	// pubBy: a step by which the broker had certainly published it, so
	// that a clean start of a subscriber after it discards the copy:
	// the first send or drop of the will (to any client); else, when
	// the connection certainly ended (the last connection of the client
	// the broker held closed, or a CONNECT took it over) with no Will
	// Delay to wait [MQTT-3.1.2-8], that end; with a delay, the first
	// step past it; one a broker crash ended, the restarted broker's
	// first step (it restores the will if it stored it); noStep when
	// unknown (a broker crash came in its delay).
	pubBy int32
	// never: nothing shows it published and it never was: its
	// connection outlives the history, ended with DISCONNECT 0x00
	// [MQTT-3.1.2-10], or the client came back within the delay
	// [MQTT-3.1.3-9].
	never bool
}

// willSpans returns the span of each will message of QoS>=1 (see
// willSpan), keyed by the broker's Received CONNECT that carried it.
func willSpans(x *index) map[int32]willSpan {
	type arm struct {
		at, from, end int32 // CONNECT, first possible end, certain end (-1: none yet)
		single        bool  // the broker held no other connection of the client at the CONNECT
		normal        bool  // a DISCONNECT 0x00 came on it
		wait          int64 // min(Will Delay, session expiry), ns
		cancelled     bool
		crashed       bool  // a broker crash ended it or came in its delay
		resumed       int32 // crashed with no wait: the broker's first event after its restart, which publishes it (0: none)
	}
	var arms []arm
	open := map[int32]int{}   // client -> the broker's open connections of it
	cur := map[int32][]int{}  // client -> its arms not certainly ended
	mine := map[int32][]int{} // client -> its arms
	last := map[int32]int32{} // client -> the broker's last Received packet from it
	ev := map[int32][]int32{} // msg -> the broker's sends and drops of it
	var resume []int          // arms a broker crash ended with no wait, published when it restarts
	restarted := false
	for i, k := range x.kinds {
		d, e := &x.ev[i], &x.h.Events[i]
		if k.kind == Received && d.node == brokerID {
			last[d.peer] = int32(i)
		}
		if restarted && d.node == brokerID && (k.kind == Received || k.kind == Sent || k.kind == ConnOpened || k.kind == ConnClosed || k.kind == Dropped) {
			// The restarted broker's first step publishes the wills of
			// the sessions it restored whose wait is over (and this
			// event's packet is read in that step, after them).
			for _, a := range resume {
				arms[a].resumed = int32(i)
			}
			resume, restarted = nil, false
		}
		switch {
		case k.kind == Restart && d.node == brokerID:
			restarted = true
		case (k.kind == Sent && k.typ == PUBLISH || k.kind == Dropped) && d.node == brokerID && d.msg != 0:
			ev[d.msg] = append(ev[d.msg], int32(i))
		case k.kind == ConnOpened && d.node == brokerID:
			open[d.peer]++
		case k.kind == ConnClosed && d.node == brokerID:
			open[d.peer] = max(open[d.peer]-1, 0)
			for _, a := range cur[d.peer] {
				// A close of the broker's own (a DISCONNECT it read, its
				// keep-alive) is recorded after the will it published: the
				// connection may have ended at the last packet read from it.
				arms[a].from = min(arms[a].from, last[d.peer])
			}
			if open[d.peer] == 0 {
				for _, a := range cur[d.peer] {
					arms[a].end = int32(i)
				}
				cur[d.peer] = nil
			}
		case k.kind == Crash && d.node == brokerID:
			for a := range arms {
				r := &arms[a]
				switch {
				case r.end < 0:
					r.from, r.end, r.crashed = min(r.from, int32(i)), int32(i), true
					if r.wait == 0 {
						resume = append(resume, a)
					}
				case r.wait > 0 && e.Time < x.h.Events[r.end].Time+r.wait:
					r.crashed = true // the restarted broker counts the delay again
				}
			}
			clear(cur)
			clear(open)
		case k.kind == Received && d.node == brokerID && k.typ == DISCONNECT:
			for _, a := range cur[d.peer] {
				switch {
				case e.Packet.Reason == 0x00 && arms[a].single:
					arms[a].normal = true // [MQTT-3.14.4-3]
				case e.Packet.ExpirySet:
					arms[a].wait = waitOf(x.h.Events[arms[a].at].Packet.WillDelay, e.Packet.Expiry)
				}
			}
		case k.kind == Received && d.node == brokerID && k.typ == CONNECT:
			for _, a := range cur[d.peer] {
				arms[a].from, arms[a].end = min(arms[a].from, int32(i)), int32(i) // taken over [MQTT-3.1.4-3]
			}
			cur[d.peer] = nil
			for _, a := range mine[d.peer] {
				// A new connection within the delay (the one that took it
				// over, or one after its end): no will [MQTT-3.1.3-9].
				if r := &arms[a]; r.wait > 0 && !r.crashed && r.from <= int32(i) && e.Time < x.h.Events[r.from].Time+r.wait {
					r.cancelled = true
				}
			}
			if p := &e.Packet; p.Will && p.QoS >= 1 && d.msg != 0 {
				arms = append(arms, arm{at: int32(i), from: noStep, end: -1, single: open[d.peer] <= 1, wait: waitOf(p.WillDelay, p.Expiry)})
				cur[d.peer] = append(cur[d.peer], len(arms)-1)
				mine[d.peer] = append(mine[d.peer], len(arms)-1)
			}
		}
	}
	out := make(map[int32]willSpan, len(arms))
	for _, a := range arms {
		msg := x.ev[a.at].msg
		w := willSpan{from: a.from, pubBy: noStep}
		if k, _ := slices.BinarySearch(ev[msg], a.at+1); k < len(ev[msg]) {
			at := ev[msg][k]
			// Published by its first send or drop (a will's message id is
			// its connection's own).
			w.from, w.pubBy = min(w.from, at), at
			out[a.at] = w
			continue
		}
		switch {
		case a.end < 0 || a.normal || a.cancelled:
			w.never = true
		case a.crashed:
			if a.resumed > 0 {
				w.pubBy = a.resumed
			}
		case a.wait == 0:
			w.pubBy = a.end
		default:
			due := x.h.Events[a.end].Time + a.wait
			for i := int(a.end) + 1; i < len(x.kinds); i++ {
				if x.h.Events[i].Time > due {
					w.pubBy = int32(i)
					break
				}
			}
		}
		if w.from == noStep {
			w.never = true
		}
		out[a.at] = w
	}
	return out
}

// waitOf is how long after its connection ends a will with Will Delay
// delay (s) waits when the session expires after expiry (s): the shorter
// [MQTT-3.1.2-8] (a session that never expires: the delay).
func waitOf(delay, expiry uint32) int64 {
	if expiry == expiryNever {
		return int64(delay) * 1e9
	}
	return int64(min(delay, expiry)) * 1e9
}
