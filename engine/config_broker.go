package engine

import (
	"errors"
	"fmt"
)

// ErrBrokerConfig is the sentinel every broker configuration error wraps.
var ErrBrokerConfig = errors.New("engine: invalid broker config")

// QueueFull is what a session's pending queue does when a message arrives and
// it already holds MaxQueued messages.
type QueueFull uint8

// Queue-full behaviours. Every dropped message is counted in BrokerStats.
const (
	// DropOldest discards the oldest queued message to make room.
	DropOldest QueueFull = iota + 1
	// DropNewest discards the arriving message.
	DropNewest
)

// String names the behaviour.
func (q QueueFull) String() string {
	switch q {
	case DropOldest:
		return "drop-oldest"
	case DropNewest:
		return "drop-newest"
	}
	return fmt.Sprintf("QueueFull(%d)", uint8(q))
}

// BrokerConfig configures a Broker. Every field is validated by NewBroker.
type BrokerConfig struct {
	// Policy selects the broker's seed behaviours (persistence, unknown acks,
	// ack order, mutations).
	Policy BrokerPolicy
	// MaxPacketSize is the largest packet accepted from a client (the stream
	// decoder refuses larger ones with 0x95); it is advertised in v5 CONNACK.
	MaxPacketSize uint32
	// ReceiveMaximum is how many QoS 1/2 PUBLISH packets a v5 client may have
	// unacknowledged towards the broker; advertised in CONNACK. More is
	// answered with DISCONNECT 0x93.
	ReceiveMaximum uint16
	// InflightV311 is the outbound inflight window for 3.1.1 clients (v5
	// clients set theirs with Receive Maximum).
	InflightV311 uint16
	// MaxQueued bounds each session's pending queue of QoS 1/2 messages that
	// wait for the inflight window or for the client to come back.
	MaxQueued int
	// StartPacketID is where each new session's packet-id counter starts:
	// the broker's first PUBLISH to it gets the lowest free id above it (0,
	// the default: 1). Near 65535 it makes the counter wrap to 1 after a
	// few messages instead of 65,535 [MQTT-2.2.1-4].
	StartPacketID uint16
	// QueueFull says what happens at that bound.
	QueueFull QueueFull
	// OnDrop, when set, is told of every message copy the broker
	// discards undelivered (Drop: the session, the message, why), in the
	// step that discards it. It must not call the broker.
	OnDrop func(Drop)
	// TopicAliasMaximum is the highest topic alias a v5 client may use
	// towards the broker (0: none).
	TopicAliasMaximum uint16
	// TopicAliasesOut is the most topic aliases the broker assigns on its
	// PUBLISHes to each v5 client (0, the default: none). The client's own
	// Topic Alias Maximum caps it further, and a client that announces none
	// gets none [MQTT-3.1.2-26] [MQTT-3.1.2-27]. When a connection's table
	// is full, the least recently used alias is reassigned
	// (broker_alias_out.go).
	TopicAliasesOut uint16
	// MaxKeepAlive is the longest Keep Alive the broker lets a client use,
	// in seconds (0: no limit). A v5 client that asks for more, or for none,
	// is told MaxKeepAlive as Server Keep Alive in CONNACK [MQTT-3.2.2-21];
	// a 3.1.1 client, which has no way to be told, is refused with return
	// code 0x02 as mosquitto does. Either way the broker enforces 1.5 times
	// the Keep Alive in force (3.1.1 [MQTT-3.1.2-24], v5 [MQTT-3.1.2-22]).
	MaxKeepAlive uint16
	// SubscriptionIDs makes the broker accept v5 Subscription Identifiers
	// (announced in CONNACK as Subscription Identifiers Available = 1): each
	// is stored with its subscription and sent on every PUBLISH the
	// subscription matches [MQTT-3.3.4-3]. Without it a SUBSCRIBE that
	// carries one is answered DISCONNECT 0xA1.
	SubscriptionIDs bool
	// SharedSubscriptions makes the broker accept v5 shared subscriptions
	// ($share/{ShareName}/{filter}, §4.8.2; announced in CONNACK as Shared
	// Subscription Available = 1): each message goes to one member of each
	// group. Without it they are refused with SUBACK 0x9E.
	SharedSubscriptions bool
	// Access is the authentication and authorization: nil lets every
	// client connect, publish and subscribe.
	Access *Access
	// AssignedIDPrefix prefixes the client ids the broker assigns to v5
	// clients that connect with an empty one.
	AssignedIDPrefix string
	// ReuseActions says the caller is done with every Action a Step
	// returned before it calls Step again: the engine then boxes the next
	// Step's actions in the same memory instead of fresh memory. Only the
	// boxes are reused; the bytes, packets, strings and messages the
	// actions point to are never written again either way (the sim's
	// worlds set it; a driver that keeps Actions must not).
	ReuseActions bool
}

// DefaultBrokerConfig returns a valid configuration with the given policy:
// 1 MiB packets, Receive Maximum 32, inflight 32 for 3.1.1, 1000 queued
// messages per session dropping the oldest, 16 topic aliases.
func DefaultBrokerConfig(p BrokerPolicy) BrokerConfig {
	return BrokerConfig{
		Policy:            p,
		MaxPacketSize:     1 << 20,
		ReceiveMaximum:    32,
		InflightV311:      32,
		MaxQueued:         1000,
		QueueFull:         DropOldest,
		TopicAliasMaximum: 16,
		AssignedIDPrefix:  "auto-",
	}
}

// Validate reports the first problem of the configuration, wrapping
// ErrBrokerConfig.
func (c BrokerConfig) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBrokerConfig, fmt.Sprintf(format, args...))
	}
	p := c.Policy
	switch p.Persistence {
	case LegacyPersistNone, PersistEveryChange:
	case PersistPeriodic:
		if p.SnapshotEvery < 1 {
			return bad("Policy.SnapshotEvery is %d; PersistPeriodic needs at least 1", p.SnapshotEvery)
		}
	default:
		return bad("Policy.Persistence %d is not a BrokerPersistence", p.Persistence)
	}
	if p.UnknownPubrel != LegacyUnknownAckFail && p.UnknownPubrel != UnknownAckAnswer {
		return bad("Policy.UnknownPubrel %d is not an UnknownAck", p.UnknownPubrel)
	}
	if p.UnknownPubrec != LegacyUnknownAckFail && p.UnknownPubrec != UnknownAckAnswer {
		return bad("Policy.UnknownPubrec %d is not an UnknownAck", p.UnknownPubrec)
	}
	if p.AckOrder != LegacyAckBeforeCallback && p.AckOrder != AckAfterCallback {
		return bad("Policy.AckOrder %d is not an AckOrder", p.AckOrder)
	}
	if c.MaxPacketSize < 64 || c.MaxPacketSize > 268_435_455+5 {
		return bad("MaxPacketSize %d is outside [64, 268435460]", c.MaxPacketSize)
	}
	if c.ReceiveMaximum == 0 {
		return bad("ReceiveMaximum is 0; it must be at least 1")
	}
	if c.InflightV311 == 0 {
		return bad("InflightV311 is 0; it must be at least 1")
	}
	if c.MaxQueued < 1 {
		return bad("MaxQueued is %d; it must be at least 1", c.MaxQueued)
	}
	if c.QueueFull != DropOldest && c.QueueFull != DropNewest {
		return bad("QueueFull %d is neither DropOldest nor DropNewest", c.QueueFull)
	}
	if c.AssignedIDPrefix == "" {
		return bad("AssignedIDPrefix is empty")
	}
	if c.Access != nil {
		for i, r := range c.Access.Rules {
			if !validFilter(r.Topic) || r.Access == 0 || r.Access > ACLReadWrite|ACLDeny {
				return bad("Access.Rules[%d] (topic %q, access %d) is not a valid rule", i, r.Topic, r.Access)
			}
		}
	}
	return nil
}
