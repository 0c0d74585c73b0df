package model

// Promises returns the invariants a configuration guarantees under the faults
// that happened. The fixed engine must show no violation of a promised
// invariant under any faults; every weakening below is a documented way a
// legacy knob (or a weaker durability choice) may break one. The table in
// doc.go mirrors this function. Unset policy fields count as their weakest
// value.
func Promises(p Policy, f Faults) Set {
	s := All()
	if !noLossPromised(p, f) {
		// A lost message is pending work the liveness phase never finishes:
		// the simulator's Stuck lists undelivered messages, and a client
		// without a store keeps ids it will never resend.
		s = s.Without(NoLoss).Without(NoStuck).Without(SharedDelivery)
	}
	if !exactlyOncePromised(p, f) {
		s = s.Without(QoS2ExactlyOnce).Without(SharedDelivery)
	}
	if brokerLostState(p, f) {
		// A stale or empty broker may resend what it already completed or
		// reuse ids it forgot were in flight.
		s = s.Without(Retransmit).Without(PacketIDUnique).Without(Order)
		// A broker that rolled back or lost its subscriptions and retained
		// messages routes by stale ones.
		s &^= routingSet
		s = s.Without(SessionExpiry) // a rolled-back store may revive an expired session
		// A broker that lost its sessions answers Session Present=0 to
		// clients whose sessions it should have kept.
		s = s.Without(SessionPresent)
	}
	if p.Retransmit != RetransmitDurable && f.PublisherCrashes > 0 {
		// A rebooted publisher forgot its in-flight ids and messages.
		s = s.Without(PacketIDUnique).Without(Order)
	}
	if p.Retransmit < RetransmitMemory && f.PublisherConnLosses > 0 {
		// Without a store the client drops unacked ids on reconnect.
		s = s.Without(PacketIDUnique)
	}
	if unknownAckMayFail(p, f) {
		s &^= failedSet
	}
	return s
}

// failedSet is what a receiver that fails for good on an unknown PUBREL or
// PUBREC takes away: a failed client sends nothing more, pings included,
// and acks nothing more, so the broker's queue for it parks.
var failedSet = SetOf(NoStuck, PubrelAnswered, NoLoss, ClientKeepAlive, SharedDelivery, FlowResume)

// brokerLostState reports a broker crash that may have lost or rolled back
// broker state, or a clean stop of a broker that keeps nothing durable (a
// stopping broker writes all it persists at all, so only PersistNone loses
// state on a stop).
func brokerLostState(p Policy, f Faults) bool {
	crashLost := f.BrokerCrashes > 0 && (p.Broker != PersistEveryChange || p.BrokerAckBeforeStore)
	return crashLost || (f.BrokerStops > 0 && p.Broker < PersistPeriodic)
}

// noLossPromised: lost publisher copies, acks sent before the app has the
// message, and lost broker state all permit loss.
func noLossPromised(p Policy, f Faults) bool {
	switch {
	case p.Retransmit < RetransmitMemory && (f.PublisherCrashesUnacked > 0 || f.PublisherConnLosses > 0):
		return false
	case p.Retransmit < RetransmitDurable && f.PublisherCrashesUnacked > 0:
		return false
	case p.AckBeforeCallback && (f.SubscriberMidDelivery > 0 || f.CallbackPreCrashes > 0):
		return false
	case brokerLostState(p, f):
		return false
	}
	return true
}

// exactlyOncePromised: a subscriber that forgets which QoS2 ids it delivered
// delivers a resent PUBLISH again; a durable store still has the window
// between the app's durable write and the persisted id; a publisher that
// crashed before it acted on Session Present 0 resends to a new session.
func exactlyOncePromised(p Policy, f Faults) bool {
	switch {
	case f.SubscriberStateLosses > 0:
		return false
	case !p.QoS2Durable && f.SubscriberCrashes > 0:
		return false
	case f.CallbackPostCrashes > 0 || f.QoS2WindowCrashes > 0:
		return false
	case f.SessionLostCrashes > 0:
		return false // a QoS 2 resend to the broker's new session is a new message
	case brokerLostState(p, f):
		return false
	}
	return true
}

// unknownAckMayFail: with UnknownAckFail on either side, any crash, state
// loss or lost connection can produce a PUBREL/PUBREC for a forgotten id
// (a resent PUBREL whose PUBCOMP was lost, a rebooted receiver), and the
// receiver then fails for good (coreMQTT #271).
func unknownAckMayFail(p Policy, f Faults) bool {
	failing := p.UnknownAck != UnknownAckAnswer || p.BrokerUnknownAck != UnknownAckAnswer
	return failing && f.Any()
}
