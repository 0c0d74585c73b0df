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
	endAt   int64 // when the broker's last one closed, or -1 (unknown)
	endStep int
	connAt  int64  // when the broker received the pending CONNECT
	pending uint32 // that CONNECT's Session Expiry Interval
}

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
// session live. A broker crash leaves
// the sessions' clocks unknown until their next connection. That state is kept before the interval passes is
// SessionPresent's to judge [MQTT-3.2.2-3].
func CheckSessionExpiry(h *History) []Violation { return checkSessionExpiry(newIndex(h)) }

func checkSessionExpiry(x *index) []Violation {
	ss := make([]expSession, len(x.nodes))
	for i := range ss {
		ss[i].endAt = -1
	}
	var out []Violation
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
		if e.Kind == Crash {
			for j := range ss {
				ss[j].conns, ss[j].endAt = 0, -1
			}
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
			s.connAt, s.pending = e.Time, p.Expiry
		case p.Type == DISCONNECT && p.ExpirySet:
			s.expiry = expirySeconds(p.Expiry)
		case p.Type == CONNACK:
			if v := judgeExpired(s, p); v != "" {
				out = append(out, NewViolation(SessionExpiry, i, BrokerNode, v, s.endStep))
			}
			if p.Reason < 0x80 {
				s.expiry = expirySeconds(s.pending)
			}
		}
	}
	return out
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
