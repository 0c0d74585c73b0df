package model

import (
	"cmp"
	"slices"
)

// flight is a packet id used in one direction, as its sender sees it: in
// flight until done, then kept as the id's last completed flight. It holds
// no pointer (its PUBLISH is named by step), so the tables of flights are
// memory the collector never scans.
type flight struct {
	kind       uint8 // PUBLISH, SUBSCRIBE or UNSUBSCRIBE
	pubrec     bool  // a PUBREC < 0x80 was received
	pubrelSent bool  // a PUBREL was sent
	done       bool  // completed: no longer in flight
	pubAt      int32 // PUBLISH: 1 + the step whose packet carries the flight's message; else 0
	seq        int32 // global order of the first send
	// seqHi: the flight's first send was a DUP=1 PUBLISH of a message the
	// history cannot name, with the id and content of a completed flight
	// (see resentPast): that flight's resend, of order seq, or a later
	// message's first send, of order seqHi. 0 when seq is the order.
	seqHi      int32
	conn       int32 // sender's connection epoch at the last send
	step       int32 // step of the last send
	pubrecAt   int32 // the sender's crash count when it was
	pubrelStep int32 // step of the PUBREL
	doneAt     int32 // the sender's crash count at completion
}

// order is the latest original send order f's message may have: the
// order a resend of it must not come before [MQTT-4.6.0-1].
func (f *flight) order() int32 { return max(f.seq, f.seqHi) }

// noPacket is the packet of a flight without a PUBLISH: every field zero.
var noPacket Packet

// pub returns the PUBLISH packet of f (in h), or a zero packet.
func (f *flight) pub(h *History) *Packet {
	if f.pubAt == 0 {
		return &noPacket
	}
	return &h.Events[f.pubAt-1].Packet
}

// link is the sender's view of its current connection towards a peer.
type link struct {
	epoch     int32 // bumps on every ConnOpened, ConnClosed, crash and CONNACK
	connacked bool  // a CONNACK packet was seen in this epoch
	sp        bool  // that CONNACK had Session Present = 1
	spStep    int   // step of that CONNACK
	lastSeq   int32 // highest original seq resent in this epoch
	pubrecs   idSet // PUBREC ids received in this epoch
}

// dirState is everything the tracker knows of one direction of a
// client-broker pair: the packets from sends to to. Packet ids are assigned
// independently per direction [MQTT-2.2.1-3].
type dirState struct {
	from int32  // the sender's node id
	to   string // the receiver's name
	used bool   // the tracker created this direction
	link
	ids flights
}

// tracker follows packet ids in flight per direction and each sender's
// connection epochs. Checks query it before calling update on each event.
type tracker struct {
	x       *index
	dirs    dirTab[dirState] // from -> to -> state
	crashes []int32          // node id -> crashes so far
	seq     int32
}

func newTracker(x *index) *tracker {
	return &tracker{x: x, dirs: newDirTab[dirState](x), crashes: make([]int32, len(x.nodes))}
}

// state returns the state of direction from->to, creating it.
func (t *tracker) state(from, to int32) *dirState {
	s := t.dirs.at(from, to)
	if !s.used {
		*s = dirState{from: from, to: t.x.nodes[to], used: true,
			link: link{spStep: -1}, ids: flights{size: int(t.x.maxID[from]) + 1}}
	}
	return s
}

// get returns the flight of id in flight in s, or nil.
func (s *dirState) get(id uint16) *flight {
	if f := s.ids.lookup(id); f != nil && !f.done {
		return f
	}
	return nil
}

// past returns the last completed flight of id in s, or nil.
func (s *dirState) past(id uint16) *flight {
	if f := s.ids.lookup(id); f != nil && f.done {
		return f
	}
	return nil
}

// sentState is the direction of the packet sent in event i; ackState the
// direction an ack received in event i answers (the receiver's own outgoing
// one).
func (t *tracker) sentState(i int) *dirState { return t.state(t.x.ev[i].node, t.x.ev[i].peer) }
func (t *tracker) ackState(i int) *dirState  { return t.state(t.x.ev[i].node, t.x.ev[i].peer) }

// update applies one event to the tracker.
func (t *tracker) update(i int, e *Event) {
	switch e.Kind {
	case Sent:
		t.sent(i, e)
	case Received:
		t.received(i, e)
	case ConnOpened, ConnClosed:
		t.state(t.x.ev[i].node, t.x.peerOf(i)).newEpoch()
	case Connected:
		if s := t.state(t.x.ev[i].node, t.x.peerOf(i)); !s.connacked {
			s.connack(i, e.SessionPresent)
		}
	case Crash:
		t.crash(t.x.ev[i].node)
	}
}

// newEpoch starts a new connection epoch for the sender; SUBSCRIBE and
// UNSUBSCRIBE ids die with the connection (not session state, never resent).
func (s *dirState) newEpoch() {
	s.epoch++
	s.connacked, s.sp, s.spStep, s.lastSeq = false, false, -1, 0
	s.pubrecs.reset()
	s.ids.dropUnless(PUBLISH)
}

// connack records a CONNACK on the connection: the sender's session is
// resumed (sp) or discarded, which frees every id it had in flight
// [MQTT-3.2.2-5] [MQTT-3.1.2-4].
func (s *dirState) connack(i int, sp bool) {
	s.newEpoch()
	s.connacked, s.sp, s.spStep = true, sp, i
	if !sp {
		s.ids.reset()
	}
}

// expiredUnseen: the broker may have discarded client c's expired session
// without a CONNACK in the history saying so (expirydoubt.go): the ids it
// had in flight towards c may be free, as after a Session Present=0
// [MQTT-4.1.0-2]; a resend of one after a Session Present=1 is allowed
// (Retransmit).
func (t *tracker) expiredUnseen(c int32) {
	t.state(brokerID, c).ids.reset()
}

// cleanStartDoubts lists, in step order, where the broker crashed or
// closed a client's connection after it received the client's Clean Start
// CONNECT and before it answered: the CONNECT may have taken effect and
// discarded the session [MQTT-3.1.2-4], with the ids the broker had in
// flight towards the client, though a later CONNACK says Session Present=1
// (of the new session, which a client holding queued messages accepts;
// swarm seed 11541 with shared drawn). The discard is whole or nothing (the
// broker's tombstone; SessionPresent judges a discarded session's copies),
// but which of the two a crash left, the history does not say.
func cleanStartDoubts(x *index) []expDoubt {
	pend := make([]bool, len(x.nodes))
	var out []expDoubt
	for i, k := range x.kinds {
		if !expiryDoubtEvents.has(k) || x.ev[i].node != brokerID {
			continue
		}
		e, c := &x.h.Events[i], x.peerOf(i)
		switch {
		case e.Kind == Crash:
			for n := range pend {
				if pend[n] {
					out = append(out, expDoubt{step: int32(i), client: int32(n)})
				}
			}
			clear(pend)
		case e.Kind == ConnClosed && pend[c]:
			out = append(out, expDoubt{step: int32(i), client: c})
			pend[c] = false
		case e.Kind == Received && e.Packet.Type == CONNECT:
			pend[c] = e.Packet.Clean
		case e.Kind == Sent && e.Packet.Type == CONNACK:
			pend[c] = false
		}
	}
	return out
}

// crash bumps the node's crash count and ends every connection it had.
func (t *tracker) crash(node int32) {
	t.crashes[node]++
	t.dirs.row(node, func(_ int32, s *dirState) {
		if s.used {
			s.newEpoch()
		}
	})
}

func (t *tracker) sent(i int, e *Event) {
	p, s := &e.Packet, t.sentState(i)
	switch p.Type {
	case CONNACK:
		s.connack(i, p.Sessions)
	case PUBLISH:
		if p.QoS > 0 {
			t.sentPublish(i, s, p)
		}
	case PUBREL:
		if f := s.get(p.ID); f != nil && f.kind == PUBLISH {
			f.pubrelSent, f.pubrelStep = true, int32(i)
		}
	case SUBSCRIBE, UNSUBSCRIBE:
		t.put(s, p.ID, flight{kind: p.Type, seq: t.nextSeq(), conn: s.epoch, step: int32(i)})
	}
}

func (t *tracker) nextSeq() int32 { t.seq++; return t.seq }

// put makes f the flight of id.
func (t *tracker) put(s *dirState, id uint16, f flight) {
	if s.ids.low == nil && id < maxDenseID && t.x.sc != nil {
		// The direction's first flight: its table from the scratch if
		// one is spare (a finished call's), cleared.
		s.ids.low, _ = takeSpare(&t.x.sc.flights, min(max(s.ids.size, int(id)+1), maxDenseID))
	}
	s.ids.put(id, f)
}

// sentPublish records a first send or a resend of a QoS>0 PUBLISH.
func (t *tracker) sentPublish(i int, s *dirState, p *Packet) {
	if seq, ok := t.resendSeq(s, p); ok {
		if seq > s.lastSeq {
			s.lastSeq = seq
		}
		if f := s.get(p.ID); f != nil && f.kind == PUBLISH {
			f.conn, f.step = s.epoch, int32(i)
			return
		}
		t.put(s, p.ID, flight{kind: PUBLISH, pubAt: int32(i) + 1, seq: seq, conn: s.epoch, step: int32(i)})
		return
	}
	f := flight{kind: PUBLISH, pubAt: int32(i) + 1, seq: t.nextSeq(), conn: s.epoch, step: int32(i)}
	if past := t.sameAsPast(s, p); past != nil {
		// Unnamed: past's resend or a later message's first send. It
		// raises no lastSeq (a first send does not), and a resend of it
		// must not come before either order.
		f.seq, f.seqHi = past.seq, f.seq
	}
	t.put(s, p.ID, f)
}

// resendSeq reports whether p resends a message this direction already sent
// with that id (in flight, or completed but resent after a crash), and the
// original send order of that message.
func (t *tracker) resendSeq(s *dirState, p *Packet) (int32, bool) {
	if f := s.get(p.ID); f != nil && f.kind == PUBLISH && (p.Dup || t.samePublish(f, p)) {
		return f.seq, true
	}
	if f := t.resentPast(s, p); f != nil {
		return f.seq, true
	}
	return 0, false
}

// resentPast returns the completed flight that the PUBLISH p resends: one
// that held p's id, with the same message, p carrying DUP=1 (a crash may
// have lost the completion [MQTT-4.4.0-1]); or nil. A message the history
// cannot name (Msg "": a payload without the lab's id marker, such as an
// empty one that clears a retained message) ties p to no completed flight
// for sure: its id was free, and a later message of the same content may
// have taken it, its first send lost to a crash or a closed connection,
// then sent with DUP=1 after a session-present CONNACK [MQTT-3.3.1-1]
// (swarm seeds 66703 and 99702: two clears of t/a, of t/c/y, by different
// publishers, the later one sent in order after messages the earlier one
// preceded). Such a p is judged as a first send, and its flight keeps both
// orders (sentPublish): a completed flight's resend after a crash lost its
// acknowledgement may also be unnamed (swarm seed 114456).
func (t *tracker) resentPast(s *dirState, p *Packet) *flight {
	if p.Msg == "" {
		return nil
	}
	return t.sameAsPast(s, p)
}

// sameAsPast returns the completed flight of p's id if p, with DUP=1,
// carries its message, or nil.
func (t *tracker) sameAsPast(s *dirState, p *Packet) *flight {
	if !p.Dup {
		return nil
	}
	if f := s.past(p.ID); f != nil && f.kind == PUBLISH && t.samePublish(f, p) {
		return f
	}
	return nil
}

// samePublish reports whether p carries the same message as f.
func (t *tracker) samePublish(f *flight, p *Packet) bool {
	q := f.pub(t.x.h)
	return q.Msg == p.Msg && q.Payload == p.Payload && q.Topic == p.Topic && q.QoS == p.QoS
}

func (t *tracker) received(i int, e *Event) {
	p := &e.Packet
	switch p.Type {
	case CONNACK:
		t.ackState(i).connack(i, p.Sessions)
	case PUBACK, PUBCOMP:
		t.complete(t.ackState(i), p.ID, PUBLISH)
	case PUBREC:
		s := t.ackState(i)
		s.addPubrec(p.ID)
		if p.Reason >= reasonFailure {
			t.complete(s, p.ID, PUBLISH)
		} else if f := s.get(p.ID); f != nil && f.kind == PUBLISH {
			f.pubrec, f.pubrecAt = true, t.crashes[s.from]
		}
	case SUBACK:
		t.complete(t.ackState(i), p.ID, SUBSCRIBE)
	case UNSUBACK:
		t.complete(t.ackState(i), p.ID, UNSUBSCRIBE)
	}
}

func (l *link) addPubrec(id uint16) { l.pubrecs.add(id) }

// complete frees id in s if a flight of that kind holds it; a PUBLISH stays
// known as the id's last completed flight, SUBSCRIBE/UNSUBSCRIBE are dropped.
func (t *tracker) complete(s *dirState, id uint16, kind uint8) {
	f := s.get(id)
	if f == nil || f.kind != kind {
		return
	}
	if kind != PUBLISH {
		s.ids.drop(id)
		return
	}
	f.done, f.doneAt = true, t.crashes[s.from]
}

// trackedEvents are the events the tracker (update) and the tracked checks
// (observe) read: a new tracked check must read no other.
var trackedEvents = eventSet{
	kinds:    kindBits(ConnOpened, ConnClosed, Connected, Crash, Refused),
	allSent:  true,
	received: typeBits(CONNACK, PUBACK, PUBCOMP, PUBREC, SUBACK, UNSUBACK),
}.codes()

// trackedCheck is an invariant check that reads the tracker: observe sees
// each event of trackedEvents before the tracker applies it; finish returns
// the violations.
type trackedCheck interface {
	observe(t *tracker, i int, e *Event)
	finish(x *index) []Violation
}

// runTracked runs one tracker over h for several checks at once (the three
// tracker-based checks share one pass in Check).
func runTracked(x *index, checks ...trackedCheck) []Violation {
	t := newTracker(x)
	doubts := append(expiryDoubts(x), cleanStartDoubts(x)...)
	slices.SortStableFunc(doubts, func(a, b expDoubt) int { return cmp.Compare(a.step, b.step) })
	for i, k := range x.kinds {
		if !trackedEvents.has(k) {
			continue
		}
		e := &x.h.Events[i]
		for _, c := range checks {
			c.observe(t, i, e)
		}
		t.update(i, e)
		for len(doubts) > 0 && int(doubts[0].step) <= i {
			t.expiredUnseen(doubts[0].client)
			doubts = doubts[1:]
		}
	}
	var out []Violation
	for _, c := range checks {
		out = append(out, c.finish(x)...)
	}
	if x.sc != nil {
		t.dirs.each(func(_, _ int32, s *dirState) {
			if s.ids.low != nil {
				putSpare(&x.sc.flights, s.ids.low, maxFlightSpares)
			}
		})
	}
	return out
}
