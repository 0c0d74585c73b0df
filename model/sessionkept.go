package model

import "fmt"

// The Session Present kept rule: a broker that resumes a session must say
// so. It is judged from the broker's own events, which tell whether a
// session exists when a CONNECT with Clean Start=0 arrives: the broker
// created it by accepting a CONNECT (a Sent CONNACK with reason 0), it
// outlives its connection when that CONNECT asked for it (5.0: a Session
// Expiry Interval above 0, possibly changed by the client's DISCONNECT;
// 3.1.1: CleanSession=0, which never expires), and it lasts the interval
// from the end of its connection as the broker saw it (its ConnClosed, or
// its crash). A CONNACK with reason 0 and Session Present=0 to a Clean
// Start=0 CONNECT while such a session exists breaks [MQTT-3.2.2-3] (5.0;
// [MQTT-3.2.2-2] in 3.1.1).
//
// Doubt goes to the broker: a refused CONNECT leaves the session unknown
// (not judged until a CONNECT is accepted again), a client's version is
// read from its Connected events (3.1.1 CleanSession=0 sessions of a client
// never seen connected count as non-persistent), a session whose interval
// ends exactly as the CONNECT arrives is not judged, and the clock starts
// at the earliest end the broker recorded. A broker crash ends every
// connection but keeps the sessions, except one whose unanswered CONNECT
// (Clean Start, or 5.0 Session Expiry 0) may have discarded it (crashed):
// Promises gives SessionPresent up where the broker may lose state
// (Broker=None or Periodic, or BrokerAckBeforeStore, and a crash;
// Broker=None and a clean stop).

// keptEvents are the events checkSessionKept reads.
var keptEvents = eventSet{
	kinds:    kindBits(Connected, ConnClosed, Crash),
	sent:     typeBits(CONNACK),
	received: typeBits(CONNECT, DISCONNECT),
}.codes()

// keptSession is what the broker's events say of one client's session.
type keptSession struct {
	known     bool   // a CONNECT was accepted and nothing since makes the session unknown
	online    bool   // its connection is open (as the broker sees it)
	clean     bool   // the accepting CONNECT's Clean Start
	expiry    uint32 // its Session Expiry Interval (5.0)
	endedAt   int64  // virtual time its connection ended, when !online
	createdAt int    // step of the CONNACK that accepted it
	endStep   int    // step of the end, or -1

	pending    bool // a CONNECT was received and awaits its CONNACK
	pendClean  bool
	pendExpiry uint32
	pendStep   int
	version    uint8 // the client's protocol level (Connected), 0 unknown
}

// ExpiryNever is the Session Expiry Interval that never ends (5.0
// §3.1.2.11.2).
const ExpiryNever = 0xFFFFFFFF

// persistent reports whether the session outlives its connection.
func (s *keptSession) persistent() bool {
	if s.version == 4 || s.version == 3 {
		return !s.clean // 3.1.1: CleanSession=0 [MQTT-3.1.2-4]
	}
	return s.expiry > 0 // [MQTT-3.1.2-23]
}

// existsAt reports whether the session surely exists at time t.
func (s *keptSession) existsAt(t int64) bool {
	switch {
	case !s.known:
		return false
	case s.online:
		return true
	case !s.persistent():
		return false
	case s.version != 5 && s.version != 0, s.expiry == ExpiryNever:
		return true
	}
	return t-s.endedAt < int64(s.expiry)*1e9
}

func checkSessionKept(x *index) []Violation {
	ss := make([]keptSession, len(x.nodes))
	var out []Violation
	for i, k := range x.kinds {
		if !keptEvents.has(k) {
			continue
		}
		e, d := &x.h.Events[i], &x.ev[i]
		if d.node != brokerID {
			if e.Kind == Connected {
				ss[d.node].version = e.Version
			}
			continue
		}
		switch e.Kind {
		case Crash:
			for c := range ss {
				ss[c].crashed(e.Time, i)
			}
		case ConnClosed:
			ss[x.peerOf(i)].end(e.Time, i)
		case Received:
			keptReceived(&ss[x.peerOf(i)], i, e)
		case Sent:
			if v := keptConnack(&ss[x.peerOf(i)], i, e); v != nil {
				out = append(out, *v)
			}
		}
	}
	return out
}

// end marks the session's connection ended at t (step i), if it was open.
func (s *keptSession) end(t int64, i int) {
	if s.online {
		s.online, s.endedAt, s.endStep = false, t, i
	}
}

// crashed ends the session's connection at a broker crash (step i, time
// t). A CONNECT the broker received and had not answered may have taken
// effect: one with Clean Start discards the session [MQTT-3.1.2-4], and a
// 5.0 one with a Session Expiry Interval of 0 makes it end with the
// connection [MQTT-3.1.2-23], which the crash closed. Either leaves the
// session unknown (doubt goes to the broker).
func (s *keptSession) crashed(t int64, i int) {
	s.end(t, i)
	if s.pending && (s.pendClean || (s.version == 5 && s.pendExpiry == 0)) {
		s.known = false
	}
	s.pending = false
}

// keptReceived follows a CONNECT or DISCONNECT the broker received.
func keptReceived(s *keptSession, i int, e *Event) {
	p := &e.Packet
	if p.Type == CONNECT {
		s.pending, s.pendClean, s.pendExpiry, s.pendStep = true, p.Clean, p.Expiry, i
		return
	}
	// DISCONNECT: a Session Expiry Interval replaces the session's,
	// except 0 to non-zero, a protocol error that changes nothing
	// (5.0 §3.14.2.2.2).
	if p.ExpirySet && s.known && (s.expiry != 0 || p.Expiry == 0) {
		s.expiry = p.Expiry
	}
}

// keptConnack judges a CONNACK the broker sent and starts the session it
// accepts.
func keptConnack(s *keptSession, i int, e *Event) *Violation {
	p := &e.Packet
	if !s.pending {
		return nil // a CONNACK to no CONNECT the history shows
	}
	s.pending = false
	if p.Reason != 0 {
		s.known = false // refused: whatever the broker did to the session is unknown
		return nil
	}
	var v *Violation
	if !s.pendClean && !p.Sessions && s.existsAt(e.Time) {
		nv := NewViolation(SessionPresent, i, BrokerNode, s.keptReason(e), s.pendStep, s.createdAt, s.endStep)
		v = &nv
	}
	*s = keptSession{known: true, online: true, clean: s.pendClean, expiry: s.pendExpiry,
		createdAt: i, endStep: -1, version: s.version}
	return v
}

// keptReason explains a Session Present=0 for a kept session.
func (s *keptSession) keptReason(e *Event) string {
	rule := "[MQTT-3.2.2-3]"
	if s.version != 5 && s.version != 0 {
		rule = "[MQTT-3.2.2-2]"
	}
	life := "its connection is still open"
	if !s.online {
		ago := (e.Time - s.endedAt) / 1e9
		if s.version == 5 && s.expiry != ExpiryNever {
			life = fmt.Sprintf("its connection ended at step %d, %d s ago, within its Session Expiry Interval of %d s", s.endStep, ago, s.expiry)
		} else {
			life = fmt.Sprintf("its connection ended at step %d, %d s ago, and it never expires", s.endStep, ago)
		}
	}
	return fmt.Sprintf("CONNACK to %s has Session Present=0 for Clean Start=0, but the broker kept its session (accepted at step %d; %s) %s",
		e.Peer, s.createdAt, life, rule)
}
