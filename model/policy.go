package model

import (
	"errors"
	"fmt"
)

// RetransmitStore is where clients keep unacknowledged outgoing PUBLISH and
// PUBREL packets (seed coremqtt-unclean-session-retransmits).
type RetransmitStore uint8

// Retransmit stores.
const (
	RetransmitNone    RetransmitStore = iota + 1 // no copy: lost on reconnect (legacy)
	RetransmitMemory                             // in memory: survives reconnect, not reboot
	RetransmitDurable                            // persisted before first send: survives reboot
)

// UnknownAck is what a receiver does with a PUBREL/PUBREC for an unknown id
// (seed coremqtt-unknown-pubrel-0x92).
type UnknownAck uint8

// Unknown-ack behaviours.
const (
	UnknownAckFail   UnknownAck = iota + 1 // no answer, permanent failure (legacy)
	UnknownAckAnswer                       // answer PUBCOMP/PUBREL (0x92 in v5)
)

// BrokerPersistence is how the broker makes its state durable.
type BrokerPersistence uint8

// Broker persistence modes.
const (
	PersistNone        BrokerPersistence = iota + 1 // memory only (legacy)
	PersistPeriodic                                 // snapshots now and then
	PersistEveryChange                              // persisted and synced before acting
)

// Policy is the engine's configuration in the model's own terms. The client
// fields apply to every client of the run, the Broker fields to the broker.
// A field that fuses two engine knobs (e.g. UnknownAck for PUBREL and PUBREC)
// takes the weaker of the two.
type Policy struct {
	Retransmit           RetransmitStore   // clients' outgoing store
	UnknownAck           UnknownAck        // clients: unknown PUBREL / PUBREC
	AckBeforeCallback    bool              // clients: PUBACK/PUBREC before the app has the message (legacy)
	QoS2Durable          bool              // clients: incoming QoS2 ids survive a reboot
	QoS2NoDedup          bool              // clients: a QoS2 PUBLISH received again may reach the app again (no duplicate suppression)
	Broker               BrokerPersistence // broker durability
	BrokerUnknownAck     UnknownAck        // broker: unknown PUBREL / PUBREC
	BrokerAckBeforeStore bool              // broker: PUBACK/PUBREC before the message is stored (legacy)
	// Limits are the broker's declared limits (a queue bound and what it
	// drops there, its in-flight window, a longest expiry): the drops
	// NoLoss excuses (droplimits.go). Zero: none declared.
	Limits BrokerLimits
}

// ErrBadPolicy is wrapped by Policy.Validate errors.
var ErrBadPolicy = errors.New("model: invalid policy")

// FixedPolicy is every fix on: the configuration that promises the most.
func FixedPolicy() Policy {
	return Policy{
		Retransmit:       RetransmitDurable,
		UnknownAck:       UnknownAckAnswer,
		QoS2Durable:      true,
		Broker:           PersistEveryChange,
		BrokerUnknownAck: UnknownAckAnswer,
	}
}

// LegacyPolicy is every seed bug on.
func LegacyPolicy() Policy {
	return Policy{
		Retransmit:           RetransmitNone,
		UnknownAck:           UnknownAckFail,
		AckBeforeCallback:    true,
		Broker:               PersistNone,
		BrokerUnknownAck:     UnknownAckFail,
		BrokerAckBeforeStore: true,
	}
}

// Validate reports an unset or out-of-range field. Promises treats such
// fields as their weakest (legacy) value.
func (p Policy) Validate() error {
	if p.Retransmit < RetransmitNone || p.Retransmit > RetransmitDurable {
		return fmt.Errorf("%w: Retransmit %d not in 1..3", ErrBadPolicy, p.Retransmit)
	}
	if p.UnknownAck < UnknownAckFail || p.UnknownAck > UnknownAckAnswer {
		return fmt.Errorf("%w: UnknownAck %d not in 1..2", ErrBadPolicy, p.UnknownAck)
	}
	if p.BrokerUnknownAck < UnknownAckFail || p.BrokerUnknownAck > UnknownAckAnswer {
		return fmt.Errorf("%w: BrokerUnknownAck %d not in 1..2", ErrBadPolicy, p.BrokerUnknownAck)
	}
	if p.Broker < PersistNone || p.Broker > PersistEveryChange {
		return fmt.Errorf("%w: Broker persistence %d not in 1..3", ErrBadPolicy, p.Broker)
	}
	if err := p.Limits.Validate(); err != nil {
		return err
	}
	return nil
}
