package sim

import "github.com/mqttlab/mqttlab/engine/packet"

// brokerSess is a client's session as the observer sees the broker hold
// it: enough to tell when the broker may have discarded it with no
// CONNACK to show for it. A v5 broker MUST discard a session once its
// Session Expiry Interval has passed after its connection closed
// [MQTT-4.1.0-2] (its clock may stop while it is down, which only delays
// the discard); it says so in the CONNACK to the client's next CONNECT.
// When the broker crashes (or closes the connection) between that CONNECT
// and its CONNACK, the old session may be gone, and a later CONNACK with
// Session Present=1 resumes the new one: the old session's ids are owed
// no more. The model judges the same way (model/expirydoubt.go).
type brokerSess struct {
	known   bool   // the broker accepted a CONNECT of the client
	online  bool   // ... and holds its connection
	v5      bool   // the client speaks 5.0
	expiry  uint32 // the session's Session Expiry Interval
	offAt   int64  // when the broker's end of its last connection came
	pend    bool   // a CONNECT awaits its CONNACK
	pendExp uint32 // that CONNECT's interval
	late    bool   // ... and it came after the session may have expired
}

// expired reports whether the broker may have discarded the session by t.
func (s *brokerSess) expired(t int64) bool {
	if !s.known || s.online || !s.v5 || s.expiry == 0xFFFFFFFF {
		return false
	}
	return t > s.offAt+int64(s.expiry)*1e9
}

// received follows a CONNECT or DISCONNECT the broker received at t.
func (s *brokerSess) received(p *cpacket, t int64, version uint8) {
	if packet.Type(p.typ) == packet.CONNECT {
		s.v5 = version == 5
		s.pend, s.pendExp, s.late = true, p.expiry, p.flags&pktClean == 0 && s.expired(t)
		return
	}
	// A DISCONNECT's interval replaces the session's, except 0 to non-zero
	// (a Protocol Error that changes nothing, 5.0 §3.14.2.2.2).
	if p.flags&pktExpirySet != 0 && (s.expiry != 0 || p.expiry == 0) {
		s.expiry = p.expiry
	}
}

// connack follows a CONNACK the broker sent: it answers the pending CONNECT.
func (s *brokerSess) connack(p *cpacket) {
	s.pend, s.late = false, false
	if p.reason < 0x80 {
		s.known, s.online, s.expiry = true, true, s.pendExp
	}
}

// ended follows the end of the broker's connection of the client at t (a
// close, or the broker's crash) and reports whether the session may have
// been discarded unseen.
func (s *brokerSess) ended(t int64) bool {
	if s.online {
		s.online, s.offAt = false, t
	}
	doubt := s.pend && s.late
	s.pend, s.late = false, false
	return doubt
}

// brokerEnded: the broker's connection of client c ended at t (its own
// close, a close it was told of by the network, as a reset or a half-open
// connection whose broker side learns it, or its crash); a session it may
// have discarded unseen owes nothing any more.
func (o *observer) brokerEnded(c int32, t int64) {
	if o.sess[c].ended(t) {
		o.brokerDiscarded(c)
	}
}

// brokerDown: the broker crashed or stopped at t, which ends every
// connection it held.
func (o *observer) brokerDown(t int64) {
	for c := range o.sess {
		o.brokerEnded(int32(c), t)
	}
}
