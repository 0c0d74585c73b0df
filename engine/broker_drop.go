package engine

// DropReason says why the broker discarded a message copy undelivered.
type DropReason uint8

// Drop reasons; each is counted in BrokerStats too.
const (
	DropQueueFull   DropReason = iota + 1 // the session's queue held MaxQueued (QueueFull says which copy went)
	DropExpired                           // its Message Expiry ran out before delivery started [MQTT-3.3.2-5]
	DropTooLarge                          // larger than the client's Maximum Packet Size [MQTT-3.1.2-25]
	DropQoS0Offline                       // a QoS 0 copy for a session with no connection
)

// String names the reason as the broker's drop log writes it.
func (r DropReason) String() string {
	switch r {
	case DropQueueFull:
		return "queue-full"
	case DropExpired:
		return "expired"
	case DropTooLarge:
		return "too-large"
	case DropQoS0Offline:
		return "qos0-offline"
	}
	return "unknown"
}

// Drop is one message copy the broker discarded undelivered: for which
// session, which message, and why. A queue-full drop names the bound and
// the policy that chose the copy.
type Drop struct {
	Client  string
	Topic   string
	Payload []byte
	Reason  DropReason
	Bound   int       // DropQueueFull: MaxQueued
	Policy  QueueFull // DropQueueFull: DropOldest (a queued copy went) or DropNewest (the arriving one)
	// PacketID is, for a DropTooLarge of a resend (its PUBLISH went out
	// before, on an earlier connection), the packet id the copy held, which
	// the drop frees as if its delivery completed [MQTT-3.1.2-25] (a QoS 2
	// copy's at the PUBCOMP of the PUBREL the broker sends in its place:
	// releaseTooLarge); 0 for a copy that never went out.
	PacketID uint16
}

// dropped reports a discarded copy of m for session s to the OnDrop hook.
func (b *Broker) dropped(s *brokerSession, m *brokerMsg, r DropReason) { b.droppedID(s, m, r, 0) }

// droppedID is dropped for a copy that held packet id id on the wire.
func (b *Broker) droppedID(s *brokerSession, m *brokerMsg, r DropReason, id uint16) {
	if b.cfg.OnDrop == nil {
		return
	}
	d := Drop{Client: s.id, Topic: string(m.topic()), Payload: append([]byte(nil), m.payload()...), Reason: r, PacketID: id}
	if r == DropQueueFull {
		d.Bound, d.Policy = b.cfg.MaxQueued, b.cfg.QueueFull
	}
	b.cfg.OnDrop(d)
}
