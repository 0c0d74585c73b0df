package model

import "fmt"

// expiryNever is the v5 Session Expiry Interval that never ends.
const expiryNever = 0xFFFFFFFF

// expSession is a client's session as checkSessionExpiry sees it, from the
// broker's events.
type expSession struct {
	v5      bool  // the client's last CONNACK was v5 (its Connected event)
	expiry  int64 // the connection's Session Expiry Interval, seconds (-1: never)
	conns   int   // network connections of the client the broker holds open
	endAt   int64 // when the broker's last one closed, or -1 (unknown), or endAtRestart
	endStep int
	connAt  int64  // when the broker received the pending CONNECT
	pending uint32 // that CONNECT's Session Expiry Interval
	asked   bool   // ... and it awaits its CONNACK
	// setAt is when a DISCONNECT last changed expiry, from prev: a broker
	// crash at that instant may have lost the change.
	setAt int64
	prev  int64
}

// endAtRestart marks a session whose connection a broker crash ended, or
// whose close it may have lost: its clock starts at the broker's first event
// after the restart.
const endAtRestart = -2

// sessionExpiryEvents are the events checkSessionExpiry reads.
var sessionExpiryEvents = eventSet{
	kinds:    kindBits(ConnOpened, ConnClosed, Crash, Connected),
	sent:     typeBits(CONNACK),
	received: typeBits(CONNECT, DISCONNECT),
}.codes()

// CheckSessionExpiry checks that a v5 broker discards a session once its
// Session Expiry Interval has passed after the connection closed
// [MQTT-4.1.0-2]: a CONNACK with Session Present=1 to a CONNECT the broker
// received more than the interval after the end of the session's last
// connection is a violation. The interval is the CONNECT's (0 when absent:
// the session ends with the connection; 0xFFFFFFFF never), as a DISCONNECT
// may change it. The end is the latest close of a connection of the client
// the broker saw (its ConnClosed: events do not name connections, so the
// latest is taken); a CONNECT that takes over an open connection finds the
// session live. The clock runs on across broker crashes (expSession.crash):
// an offline session's end is kept; one the crash took offline, or whose
// close the crash may have lost, counts from the broker's first event
// after the restart. That state is kept before the interval passes is
// SessionPresent's to judge [MQTT-3.2.2-3].
func CheckSessionExpiry(h *History) []Violation { return checkSessionExpiry(newIndex(h)) }

func checkSessionExpiry(x *index) []Violation {
	ss := make([]expSession, len(x.nodes))
	for i := range ss {
		ss[i].endAt, ss[i].setAt = -1, -1
	}
	var out []Violation
	restarting := false // a broker crash came and no broker event since
	for i, k := range x.kinds {
		if !sessionExpiryEvents.has(k) {
			continue
		}
		e := &x.h.Events[i]
		d := &x.ev[i]
		if e.Kind == Connected {
			ss[d.node].v5 = e.Version >= 5
			continue
		}
		if d.node != brokerID {
			continue
		}
		if restarting && e.Kind != Crash {
			restarting = false
			for j := range ss {
				if ss[j].endAt == endAtRestart {
					ss[j].endAt = e.Time // [MQTT-4.1.0-2] the broker's clock restarts no later than this
				}
			}
		}
		if e.Kind == Crash {
			for j := range ss {
				ss[j].crash(e.Time, i)
			}
			restarting = true
			continue
		}
		c := x.peerOf(i)
		if c == emptyID {
			continue
		}
		s := &ss[c]
		p := &e.Packet
		switch {
		case e.Kind == ConnOpened:
			s.conns++
		case e.Kind == ConnClosed:
			// Events do not say which connection closed: the latest close
			// is taken as the session's end (the latest it can be).
			s.conns = max(s.conns-1, 0)
			s.endAt, s.endStep = e.Time, i
		case p.Type == CONNECT:
			if s.conns > 1 { // it takes over a connection still open: the session is live
				s.endAt, s.endStep = e.Time, i
			}
			s.connAt, s.pending, s.asked = e.Time, p.Expiry, true
		case p.Type == DISCONNECT && p.ExpirySet:
			s.prev, s.setAt = s.expiry, e.Time
			s.expiry = expirySeconds(p.Expiry)
		case p.Type == CONNACK:
			if v := judgeExpired(s, p); v != "" {
				out = append(out, NewViolation(SessionExpiry, i, BrokerNode, v, s.endStep))
			}
			s.asked = false
			if p.Reason < 0x80 {
				s.expiry, s.setAt = expirySeconds(s.pending), -1
			}
		}
	}
	return out
}

// crash follows a broker crash at t (step i). The broker keeps, with each
// session, when it went offline (engine: the session record's offline
// time), so a session's clock runs on across the crash [MQTT-4.1.0-2]:
// an offline session keeps its end. Doubt goes to the broker where the
// crash may have lost what it would have written: a session online at the
// crash (or whose CONNECT awaited its CONNACK, which may have resumed it,
// with either interval) and one whose close came at the crash's instant (in
// the step the crash cut short) start their clock at the broker's first
// event after the restart; an interval a DISCONNECT changed at that
// instant may be the old one, whichever is longer.
func (s *expSession) crash(t int64, i int) {
	if s.conns > 0 || s.asked || s.endAt == t {
		s.endAt, s.endStep = endAtRestart, i
	}
	if s.asked {
		s.expiry = longerExpiry(s.expiry, expirySeconds(s.pending))
	}
	if s.setAt == t {
		s.expiry = longerExpiry(s.expiry, s.prev)
	}
	s.conns, s.asked, s.setAt = 0, false, -1
}

// longerExpiry is the longer of two intervals in seconds (-1: never).
func longerExpiry(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

// judgeExpired returns why a CONNACK resumes a session that expired, or "".
func judgeExpired(s *expSession, p *Packet) string {
	if !p.Sessions || !s.v5 || s.endAt < 0 || s.expiry < 0 {
		return ""
	}
	deadline := s.endAt + s.expiry*1e9
	if s.connAt <= deadline {
		return ""
	}
	return fmt.Sprintf("CONNACK Session Present=1 to a CONNECT %dms after the session's connection ended (step %d): its Session Expiry Interval of %ds had passed, the session must be discarded [MQTT-4.1.0-2]",
		(s.connAt-s.endAt)/1e6, s.endStep, s.expiry)
}

// expirySeconds is a Session Expiry Interval in seconds, -1 for never.
func expirySeconds(v uint32) int64 {
	if v == expiryNever {
		return -1
	}
	return int64(v)
}
