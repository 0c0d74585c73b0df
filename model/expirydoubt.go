package model

// Session expiry the history does not show. A v5 broker MUST discard a
// session once its Session Expiry Interval has passed after its network
// connection closed [MQTT-4.1.0-2] (MQTT 5.0 §3.1.2.11.2; the broker's
// clock may stop while it is down, which only delays the discard). It says
// so in the CONNACK of the client's next CONNECT (Session Present=0
// [MQTT-3.2.2-3]), and the checks that follow a session (routing) forget it
// there. A broker crash (or a close) between that CONNECT and its CONNACK
// hides the answer: the broker may have discarded the expired session and
// started a new one, which a later CONNACK resumes with Session Present=1,
// and nothing in the history tells the two sessions apart.
//
// expiryDoubts finds those points from the virtual times alone: the broker
// received a Clean Start=0 CONNECT of a v5 client after its session's
// interval had passed since the broker's end of its last connection (its
// ConnClosed, or its crash), and the broker crashed or closed the
// connection before it sent a CONNACK to the client. The interval is the
// accepted CONNECT's, as a DISCONNECT may change it. Copies the old session
// owed are then excused, its subscriptions may or may not exist (routing),
// and the packet ids it had in flight towards the client may be used
// again (PacketIDUnique, flight.go); a
// CONNECT that came within the interval leaves nothing in doubt (the broker
// had to keep the session, and still owes what it held).

// expDoubt names a client whose session the broker may have discarded at
// step (a broker Crash or ConnClosed) without a CONNACK saying so.
type expDoubt struct{ step, client int32 }

// SessionWatch follows one client's session as its broker holds it, from
// the broker's side alone (the CONNECTs and DISCONNECTs it received, the
// CONNACKs it sent, the ends of its connections), to tell when the broker
// may have discarded the session without a CONNACK in the history saying
// so (see expiryDoubts). The model's routing and PacketIDUnique checks use
// it, and so does the simulator's liveness observer, so that both judge
// that doubt by one definition. The zero SessionWatch knows no session.
type SessionWatch struct {
	v5      bool   // the client's last CONNECT was 5.0
	known   bool   // the broker accepted a CONNECT of it
	online  bool   // ... and holds the connection (as the broker sees it)
	expiry  uint32 // the session's Session Expiry Interval
	offAt   int64  // when the broker's end of its last connection came
	pend    bool   // a CONNECT awaits its CONNACK
	pendExp uint32 // that CONNECT's Session Expiry Interval
	late    bool   // ... and it came after the session may have expired
	// clean311: the session is a 3.1.1 one of Clean Session=1, which lasts
	// as long as its network connection [MQTT-3.1.2-6]; pendClean is the
	// pending CONNECT's Clean Start.
	clean311, pendClean bool
}

// expiryDoubtEvents are the events expiryDoubts reads.
var expiryDoubtEvents = eventSet{
	kinds:    kindBits(Connected, ConnClosed, Crash),
	sent:     typeBits(CONNACK),
	received: typeBits(CONNECT, DISCONNECT),
}.codes()

// expiryDoubts lists, in step order, where a client's session may have
// expired and been discarded without a CONNACK in the history saying so.
func expiryDoubts(x *index) []expDoubt {
	ends, _ := sessionEnds(x)
	var out []expDoubt
	for _, e := range ends {
		if !e.seen {
			out = append(out, expDoubt{step: e.step, client: e.client})
		}
	}
	return out
}

// sessEnd is where the history shows a client's session ended as the spec
// allows, its Session Expiry Interval past [MQTT-4.1.0-2] (or a 3.1.1
// Clean Session=1 session's connection gone [MQTT-3.1.2-6]): seen, at the
// broker's CONNACK with Session Present=0 to a CONNECT that came after
// that [MQTT-3.2.2-3] (or to a client the broker had accepted no CONNECT
// of: SessionWatch.Discards); unseen, at a broker Crash or ConnClosed that
// cut such a CONNECT short of its CONNACK (expiryDoubts).
type sessEnd struct {
	step, client int32
	seen         bool
}

// sessionEnds lists, in step order, where a client's session ended as the
// spec allows (sessEnd), from the broker's events alone (SessionWatch);
// expiredAtEnd says, per client, that the broker may have discarded its
// session by the history's last event. A Session Present=0 to a Clean
// Start=0 CONNECT the broker took before the session could have expired is
// no such end: the broker lost a session it had to keep.
func sessionEnds(x *index) (ends []sessEnd, expiredAtEnd []bool) {
	ss := make([]SessionWatch, len(x.nodes))
	v5 := make([]bool, len(x.nodes))
	seen := make([]bool, len(x.nodes))
	for i, k := range x.kinds { // a client's first CONNECT is as its first Connected says
		if d := &x.ev[i]; k.kind == Connected && !seen[d.node] {
			seen[d.node], v5[d.node] = true, x.h.Events[i].Version >= 5
		}
	}
	for i, k := range x.kinds {
		if !expiryDoubtEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if d.node != brokerID {
			if e.Kind == Connected {
				v5[d.node] = e.Version >= 5
			}
			continue
		}
		switch e.Kind {
		case Crash:
			for c := range ss {
				if ss[c].Ended(e.Time) {
					ends = append(ends, sessEnd{step: int32(i), client: int32(c)})
				}
			}
		case ConnClosed:
			if c := x.peerOf(i); ss[c].Ended(e.Time) {
				ends = append(ends, sessEnd{step: int32(i), client: c})
			}
		case Received:
			c, p := x.peerOf(i), &e.Packet
			if p.Type == CONNECT {
				ss[c].Connect(e.Time, v5[c], p.Clean, p.Expiry)
			} else {
				ss[c].Disconnect(p.ExpirySet, p.Expiry)
			}
		case Sent:
			c, p := x.peerOf(i), &e.Packet
			if ss[c].Discards(p.Sessions, p.Reason) {
				ends = append(ends, sessEnd{step: int32(i), client: c, seen: true})
			}
			ss[c].Connack(p.Reason)
		}
	}
	expiredAtEnd = make([]bool, len(x.nodes))
	if n := len(x.h.Events); n > 0 {
		for c := range ss {
			expiredAtEnd[c] = ss[c].expired(x.h.Events[n-1].Time)
		}
	}
	return ends, expiredAtEnd
}

// expired reports whether the broker may have discarded the session by t:
// its interval has run since its connection ended [MQTT-4.1.0-2] (at its
// last instant too: the doubt goes to the broker), or, for a
// 3.1.1 session of Clean Session=1, its connection ended [MQTT-3.1.2-6].
func (s *SessionWatch) expired(t int64) bool {
	switch {
	case !s.known || s.online:
		return false
	case !s.v5:
		return s.clean311
	case s.expiry == ExpiryNever:
		return false
	case s.expiry == 0: // the session ended with its connection [MQTT-3.1.2-23]
		return true
	}
	return t >= s.offAt+int64(s.expiry)*1e9 // the interval has passed at its last instant (the engine's timer fires then)
}

// Connect follows a CONNECT (5.0 when v5) the broker received at t.
func (s *SessionWatch) Connect(t int64, v5, clean bool, expiry uint32) {
	s.v5 = v5
	s.pend, s.pendExp, s.pendClean, s.late = true, expiry, clean, !clean && s.expired(t)
}

// Discards reports whether a CONNACK the broker sends (Session Present
// sessionPresent, reason code reason) to the pending CONNECT ends the
// client's session as the spec allows: Session Present=0, accepting a
// CONNECT that came after the session may have expired [MQTT-4.1.0-2]
// [MQTT-3.2.2-3], or one of a client the
// broker never accepted a CONNECT of (a crash before its first CONNACK: no
// session it had to keep). Call it before Connack.
func (s *SessionWatch) Discards(sessionPresent bool, reason uint8) bool {
	return s.pend && (s.late || !s.known) && !sessionPresent && reason < 0x80
}

// Disconnect follows a DISCONNECT the broker received, with its Session
// Expiry Interval when set. Its interval replaces the session's, except 0
// to non-zero (a Protocol Error that changes nothing, 5.0 §3.14.2.2.2).
func (s *SessionWatch) Disconnect(expirySet bool, expiry uint32) {
	if expirySet && (s.expiry != 0 || expiry == 0) {
		s.expiry = expiry
	}
}

// Connack follows a CONNACK the broker sent: it answers the pending
// CONNECT, whatever it says; one below 0x80 accepts it.
func (s *SessionWatch) Connack(reason uint8) {
	s.pend, s.late = false, false
	if reason < 0x80 {
		s.known, s.online, s.expiry, s.clean311 = true, true, s.pendExp, !s.v5 && s.pendClean
	}
}

// Ended follows the end of the broker's connection of the client at t (its
// close, a close it was told of, or its crash) and reports whether the
// session may have been discarded unseen: a CONNECT that came after the
// interval had passed went unanswered.
func (s *SessionWatch) Ended(t int64) bool {
	if s.online {
		s.online, s.offAt = false, t
	}
	doubt := s.pend && s.late
	s.pend, s.late = false, false
	return doubt
}
