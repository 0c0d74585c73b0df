package model

import (
	"fmt"
	"slices"
)

// willArm is the will message of one connection, as the broker's events
// tell its fate.
type willArm struct {
	client    int32
	step      int32 // the broker's Received CONNECT that carried it
	delay     int64 // Will Delay, ns
	expiry    int64 // the session's expiry, ns (-1: never)
	open      bool  // its connection is open
	ended     bool  // its connection ended without DISCONNECT 0x00
	normal    bool  // ... or with DISCONNECT 0x00: never to be published
	lax       bool  // a broker crash: not judged
	cancelled bool  // the client reconnected within the delay
	unsure    bool  // the close that ended it may have been another connection's: its end may be later
	endAt     int64
	endStep   int32
	armAt     int64 // when it is due: the end plus min(Will Delay, session expiry)
	published bool  // the broker sent it to some client
}

// willState is what the routing pass keeps of will messages.
type willState struct {
	arms  []willArm
	byMsg map[int32][]int32 // will message id -> its arms
	cur   []int32           // client id -> 1 + its current connection's arm, 0 none
	conns [][]willConn      // client id -> the broker's open connections of it, oldest first
}

// willConn is one of the broker's connections of a client. Events do not
// name connections: a CONNECT is taken to come on the newest connection
// that sent none, and a close to end a taken-over connection first, else
// the oldest that sent a CONNECT, else the oldest.
type willConn struct {
	openedAt  int64 // when it opened
	arm       int32 // 1 + the arm of the will its CONNECT carried, 0 none
	connected bool  // it carried a CONNECT
	takenOver bool  // a later CONNECT took it over
}

// willKinds are the extra event kinds the will judgement reads.
var willKinds = kindBits(ConnOpened)

func newWillState(x *index) willState {
	return willState{byMsg: map[int32][]int32{}, cur: make([]int32, len(x.nodes)), conns: make([][]willConn, len(x.nodes))}
}

// willConnect: the broker received a CONNECT from c; a will it carries is
// armed with its connection, an open connection it takes over ends, and a
// pending will of c is cancelled [MQTT-3.1.3-9].
func (s *routeState) willConnect(i int, c int32, e *Event) {
	w := &s.wills
	for j := range w.conns[c] {
		if wc := &w.conns[c][j]; wc.connected && !wc.takenOver {
			wc.takenOver = true
			s.willEnd(wc.arm, e.Time, i) // taken over [MQTT-3.1.4-3]
		}
	}
	for _, ai := range w.byClient(c) {
		if a := &w.arms[ai]; a.ended && !a.cancelled && e.Time < a.armAt {
			a.cancelled = true
		}
	}
	w.cur[c] = 0
	wc := w.newest(c)
	wc.connected = true
	p := &e.Packet
	if !p.Will || p.Msg == "" {
		return
	}
	exp := int64(p.Expiry) * 1e9
	if p.Expiry == expiryNever {
		exp = -1
	}
	w.arms = append(w.arms, willArm{client: c, step: int32(i), delay: int64(p.WillDelay) * 1e9, expiry: exp, open: true})
	n := int32(len(w.arms))
	w.cur[c], wc.arm = n, n
	msg := s.x.ev[i].msg
	w.byMsg[msg] = append(w.byMsg[msg], n-1)
}

// newest returns the newest connection of c that sent no CONNECT (one the
// history did not show opening is added).
func (w *willState) newest(c int32) *willConn {
	cs := w.conns[c]
	for j := len(cs) - 1; j >= 0; j-- {
		if !cs[j].connected {
			return &cs[j]
		}
	}
	w.conns[c] = append(cs, willConn{})
	return &w.conns[c][len(w.conns[c])-1]
}

// byClient lists the arms of client c.
func (w *willState) byClient(c int32) []int32 {
	var out []int32
	for i := range w.arms {
		if w.arms[i].client == c {
			out = append(out, int32(i))
		}
	}
	return out
}

// willDisconnect: DISCONNECT 0x00 deletes the will [MQTT-3.1.2-10]; every
// other reason keeps it (0x04 asks for it; an error reason such as 0x80
// ends the connection abnormally, and the will is removed only after a
// Normal disconnection [MQTT-3.1.2-10] [MQTT-3.14.4-3]).
func (s *routeState) willDisconnect(c int32, e *Event) {
	if a := s.wills.cur[c]; a > 0 && e.Packet.Reason == 0x00 {
		s.wills.arms[a-1].normal = true
	}
}

// willEnd ends the will of arm a (1 + its index; 0 none) at time t.
func (s *routeState) willEnd(a int32, t int64, i int) {
	if a == 0 {
		return
	}
	arm := &s.wills.arms[a-1]
	if !arm.open {
		return
	}
	arm.open, arm.endAt, arm.endStep = false, t, int32(i)
	arm.ended = !arm.normal
	wait := arm.delay
	if arm.expiry >= 0 {
		wait = min(wait, arm.expiry) // the will goes when the session ends, if that is first
	}
	arm.armAt = t + wait
}

// willConns follows the broker's connections of c (see willConn); a
// connection that closes ends the will its CONNECT carried.
func (s *routeState) willConns(i int, c int32, e *Event) {
	w := &s.wills
	cs := w.conns[c]
	switch {
	case e.Kind == ConnOpened:
		w.conns[c] = append(cs, willConn{openedAt: e.Time})
	case len(cs) > 0:
		j := slices.IndexFunc(cs, func(wc willConn) bool { return wc.takenOver })
		unsure := j < 0 && len(cs) > 1 // another open connection may be the one that closed
		if j < 0 {
			j = max(slices.IndexFunc(cs, func(wc willConn) bool { return wc.connected }), 0)
		}
		s.willEnd(cs[j].arm, e.Time, i)
		if a := cs[j].arm; a > 0 && unsure {
			w.arms[a-1].unsure = true
		}
		w.conns[c] = slices.Delete(cs, j, j+1)
	}
}

// willCrash: a broker crash ends every connection; the wills of the time
// are not judged (whether they survive depends on what was stored), nor one
// a DISCONNECT 0x00 deleted: the crash may have come before the broker
// stored the deletion, which no packet acknowledges, so the restarted broker
// may hold the will of a connection that, to it, ended abnormally.
func (s *routeState) willCrash() {
	w := &s.wills
	for i := range w.arms {
		if a := &w.arms[i]; a.open || ((a.ended || a.normal) && !a.published) {
			a.open, a.lax = false, true
		}
	}
	for c := range w.conns {
		w.conns[c] = w.conns[c][:0]
	}
}

// judgeWillSend judges a PUBLISH of a will message: its connection must
// have ended without DISCONNECT 0x00 and its delay passed [MQTT-3.1.2-8]
// [MQTT-3.1.2-10] [MQTT-3.1.3-9]. It reports whether p is a will message.
func (s *routeState) judgeWillSend(i int, e *Event) bool {
	msg := s.x.ev[i].msg
	arms, ok := s.wills.byMsg[msg]
	if !ok || msg == 0 {
		return false
	}
	why, at := "", -1
	for _, ai := range arms {
		a := &s.wills.arms[ai]
		switch {
		case a.lax || (a.ended && !a.cancelled && a.armAt <= e.Time):
			a.published = true
			return true
		case a.normal && !a.open:
			why, at = "after a normal DISCONNECT (0x00) deleted it [MQTT-3.1.2-10]", int(a.endStep)
		case a.open:
			why, at = "while its connection is open [MQTT-3.1.2-8]", int(a.step)
		case a.cancelled:
			why, at = fmt.Sprintf("though the client reconnected within its Will Delay of %ds [MQTT-3.1.3-9]", a.delay/1e9), int(a.endStep)
		default:
			why, at = fmt.Sprintf("%dms after its connection ended, before its Will Delay of %ds ran out [MQTT-3.1.3-9]", (e.Time-a.endAt)/1e6, a.delay/1e9), int(a.endStep)
		}
	}
	s.add(i, []int{at}, Will, "will message %q sent to %s %s", e.Packet.Msg, e.Peer, why)
	return true
}

// willsUnpublished reports, once a liveness phase ran, each will that
// fell due and was never sent, though a client held a matching
// subscription and stayed connected from before it was due to the end
// [MQTT-3.1.2-8]; not one the broker dropped a copy of as its declared
// limits allow (it was published). A client that connected again after its will fell due
// does not take it back (only a connection within the Will Delay does
// [MQTT-3.1.3-9]).
func (s *routeState) willsUnpublished() {
	end := s.x.h.Events[len(s.x.h.Events)-1].Time
	for ai := range s.wills.arms {
		a := &s.wills.arms[ai]
		if !a.ended || a.cancelled || a.lax || a.published || a.unsure || a.armAt > end || s.wills.mayBeOpen(a) {
			continue // (unsure: a reconnect may have come within the delay from its real end)
		}
		p := &s.x.h.Events[a.step].Packet
		if s.x.dropJudgeOf().excusedAny(s.x.ev[a.step].msg) {
			continue // published, and its copies dropped as the broker's declared limits allow (droplimits.go)
		}
		if sub := s.willWitness(a, p); sub >= 0 {
			s.add(int(a.endStep), []int{int(a.step)}, Will, "the will %q of %s, due %dms after its connection ended, never went to %s, subscribed and connected all along [MQTT-3.1.2-8]",
				p.Msg, s.x.nodes[a.client], (a.armAt-a.endAt)/1e6, s.x.nodes[sub])
		}
	}
}

// mayBeOpen reports whether a connection of a's client still open may be
// a's own: events do not name connections, so which one a close ended is
// a guess (willConns) unless every open one opened after a's end.
func (w *willState) mayBeOpen(a *willArm) bool {
	return slices.ContainsFunc(w.conns[a.client], func(wc willConn) bool { return wc.openedAt <= a.endAt })
}

// willWitness returns a client that should have received will p of arm a:
// connected since before it was due and still at the end, with a matching
// subscription as old, and room for it; or -1.
func (s *routeState) willWitness(a *willArm, p *Packet) int32 {
	for _, c := range s.judged {
		r := &s.clients[c]
		if c == a.client || r.unknown || !r.connected || r.connAt >= a.armAt || r.limit.tooLarge(willApp(p), p.QoS) {
			continue
		}
		for f, sub := range r.subs {
			if !sub.maybe && sub.since < a.armAt && sub.opts&OptNoLocal == 0 && Matches(f, p.Topic) {
				return c
			}
		}
	}
	return -1
}

// willApp is what a copy of will p carries as far as the history tells:
// the will's properties are not recorded, so a Message Expiry Interval is
// counted in case (a copy that may be too large is not owed).
func willApp(p *Packet) appMsg {
	return appMsg{topic: len(p.Topic), payload: len(p.Payload), expiry: true}
}
