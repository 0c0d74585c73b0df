package engine

// RetransmitStore is where a client keeps its unacknowledged outgoing
// PUBLISH and PUBREL packets (seed coremqtt-unclean-session-retransmits).
type RetransmitStore uint8

// Retransmit stores.
const (
	// LegacyRetransmitNone keeps no copy: unacked QoS1/2 messages are lost on
	// reconnect (coreMQTT before the retransmit hooks).
	LegacyRetransmitNone RetransmitStore = iota + 1
	// RetransmitMemory keeps copies in memory: they survive a reconnect, not a
	// reboot.
	RetransmitMemory
	// RetransmitDurable persists a copy with DUP set before the first send,
	// deletes it only after the ack's state update, and resends in order on a
	// session-present reconnect.
	RetransmitDurable
)

// UnknownAck is what a receiver does with a PUBREL (or PUBREC) whose packet
// id it does not know (seed coremqtt-unknown-pubrel-0x92).
type UnknownAck uint8

// Unknown-ack policies.
const (
	// LegacyUnknownAckFail answers nothing and fails every later Step: the
	// session is stuck (coreMQTT issue #271).
	LegacyUnknownAckFail UnknownAck = iota + 1
	// UnknownAckAnswer answers PUBCOMP (PUBREL for an unknown PUBREC) with
	// reason 0x92 in v5, a plain ack in 3.1.1; no callback, no record.
	UnknownAckAnswer
)

// AckOrder is when a receiver acknowledges an incoming PUBLISH relative to
// the application callback (seed mosquitto-ack-after-callback).
type AckOrder uint8

// Ack orders.
const (
	// LegacyAckBeforeCallback sends PUBACK/PUBREC, then delivers: a crash in
	// the callback loses the message.
	LegacyAckBeforeCallback AckOrder = iota + 1
	// AckAfterCallback delivers first and sends PUBACK/PUBREC only when the
	// application's Ack for that delivery arrives.
	AckAfterCallback
)

// QoS2State is where a receiver keeps the ids of QoS2 messages delivered and
// awaiting PUBREL.
type QoS2State uint8

// Incoming QoS2 state kinds.
const (
	// LegacyQoS2Volatile keeps them in memory: a reboot forgets them, so a
	// resent PUBLISH is delivered again.
	LegacyQoS2Volatile QoS2State = iota + 1
	// QoS2Durable persists them, so exactly-once survives a reboot.
	QoS2Durable
)

// BrokerPersistence is how the broker makes its state durable.
type BrokerPersistence uint8

// Broker persistence modes.
const (
	// LegacyPersistNone keeps everything in memory: a broker crash loses all.
	LegacyPersistNone BrokerPersistence = iota + 1
	// PersistPeriodic writes a snapshot every SnapshotEvery changes, as
	// mosquitto's autosave does.
	PersistPeriodic
	// PersistEveryChange persists and syncs every change before acting on it.
	PersistEveryChange
)

// Mutation is a deliberate bug in a fixed behaviour, used only by the lab's
// canary tests to prove the checkers catch it. Zero means none.
type Mutation uint32

// Mutations of the fixes.
const (
	MutDeleteBeforeUpdate Mutation = 1 << iota // delete the stored copy before the ack's state update
	MutResendWithoutDup                        // resend PUBLISH with DUP=0
	MutReuseInflightID                         // allocate a packet id that is still in flight
	MutPublishAfterPubrel                      // resend the PUBLISH of a message already PUBREL'd
	MutAckBeforePersist                        // broker: PUBACK/PUBREC before the message is persisted
)

// ClientPolicy selects the client's behaviour for each seed.
type ClientPolicy struct {
	Retransmit    RetransmitStore
	UnknownPubrel UnknownAck
	UnknownPubrec UnknownAck
	AckOrder      AckOrder
	IncomingQoS2  QoS2State
	Mutations     Mutation
}

// BrokerPolicy selects the broker's behaviour.
type BrokerPolicy struct {
	Persistence   BrokerPersistence
	SnapshotEvery int // changes between snapshots with PersistPeriodic
	UnknownPubrel UnknownAck
	UnknownPubrec UnknownAck
	AckOrder      AckOrder // towards publishers: ack before or after the message is stored
	Mutations     Mutation
}

// Preset is a named pair of policies.
type Preset struct {
	Name   string
	Doc    string
	Client ClientPolicy
	Broker BrokerPolicy
}
