package sim

import (
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// brokerSess is a client's session as the observer sees the broker hold
// it: enough to tell when the broker may have discarded it with no CONNACK
// to show for it. A v5 broker MUST discard a session once its Session
// Expiry Interval has passed after its connection closed [MQTT-4.1.0-2];
// it says so in the CONNACK to the client's next CONNECT. When the broker
// crashes (or closes the connection) between that CONNECT and its CONNACK,
// the old session may be gone, and a later CONNACK with Session Present=1
// resumes the new one: the old session's ids are owed no more. The model's
// SessionWatch is that definition; the observer feeds it the broker's
// packets as the world carries them, so the two judge alike.
type brokerSess struct{ model.SessionWatch }

// received follows a CONNECT or DISCONNECT the broker received at t from
// a client of the given protocol level.
func (s *brokerSess) received(p *cpacket, t int64, version uint8) {
	if packet.Type(p.typ) == packet.CONNECT {
		s.Connect(t, version == 5, p.flags&pktClean != 0, p.expiry)
		return
	}
	s.Disconnect(p.flags&pktExpirySet != 0, p.expiry)
}

// connack follows a CONNACK the broker sent: it answers the pending CONNECT.
func (s *brokerSess) connack(p *cpacket) { s.Connack(p.reason) }

// ended follows the end of the broker's connection of the client at t (a
// close, or the broker's crash) and reports whether the session may have
// been discarded unseen.
func (s *brokerSess) ended(t int64) bool { return s.Ended(t) }

// brokerEnded: the broker's connection of client c ended at t (its own
// close, a close it was told of by the network, as a reset or a half-open
// connection whose broker side learns it, or its crash); a session it may
// have discarded unseen owes nothing any more.
func (o *observer) brokerEnded(c int32, t int64) {
	if o.sess[c].ended(t) {
		o.brokerDiscarded(c)
		o.sessionEnded(c)
	}
}

// brokerDown: the broker crashed or stopped at t, which ends every
// connection it held.
func (o *observer) brokerDown(t int64) {
	for c := range o.sess {
		o.brokerEnded(int32(c), t)
	}
}
