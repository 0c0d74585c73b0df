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

// doubtSession is what expiryDoubts knows of one client's session.
type doubtSession struct {
	v5      bool   // its Connected events say 5.0
	known   bool   // the broker accepted a CONNECT of it
	online  bool   // ... and holds the connection (as the broker sees it)
	expiry  uint32 // the session's Session Expiry Interval
	offAt   int64  // when the broker's end of its last connection came
	pend    bool   // a CONNECT awaits its CONNACK
	pendExp uint32 // that CONNECT's Session Expiry Interval
	late    bool   // ... and it came after the session may have expired
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
	ss := make([]doubtSession, len(x.nodes))
	var out []expDoubt
	for i, k := range x.kinds {
		if !expiryDoubtEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if d.node != brokerID {
			if e.Kind == Connected {
				ss[d.node].v5 = e.Version >= 5
			}
			continue
		}
		switch e.Kind {
		case Crash:
			for c := range ss {
				if ss[c].crash(e.Time) {
					out = append(out, expDoubt{step: int32(i), client: int32(c)})
				}
			}
		case ConnClosed:
			if c := x.peerOf(i); ss[c].closed(e.Time) {
				out = append(out, expDoubt{step: int32(i), client: c})
			}
		case Received:
			ss[x.peerOf(i)].received(e)
		case Sent:
			ss[x.peerOf(i)].connack(&e.Packet)
		}
	}
	return out
}

// expired reports whether the broker may have discarded the session by t:
// its interval passed after its connection ended [MQTT-4.1.0-2].
func (s *doubtSession) expired(t int64) bool {
	if !s.known || s.online || !s.v5 || s.expiry == ExpiryNever {
		return false
	}
	return t > s.offAt+int64(s.expiry)*1e9
}

// received follows a CONNECT or DISCONNECT the broker received.
func (s *doubtSession) received(e *Event) {
	p := &e.Packet
	if p.Type == CONNECT {
		s.pend, s.pendExp, s.late = true, p.Expiry, !p.Clean && s.expired(e.Time)
		return
	}
	// A DISCONNECT's interval replaces the session's, except 0 to
	// non-zero (a Protocol Error that changes nothing, 5.0 §3.14.2.2.2).
	if p.ExpirySet && (s.expiry != 0 || p.Expiry == 0) {
		s.expiry = p.Expiry
	}
}

// connack follows a CONNACK the broker sent: it answers the pending
// CONNECT, whatever it says.
func (s *doubtSession) connack(p *Packet) {
	s.pend, s.late = false, false
	if p.Reason < 0x80 {
		s.known, s.online, s.expiry = true, true, s.pendExp
	}
}

// closed follows the broker's close of a connection of the client and
// reports whether it leaves the session in doubt.
func (s *doubtSession) closed(t int64) bool {
	if s.online {
		s.online, s.offAt = false, t
	}
	doubt := s.pend && s.late
	s.pend, s.late = false, false
	return doubt
}

// crash follows a broker crash, which ends the connection too.
func (s *doubtSession) crash(t int64) bool { return s.closed(t) }
