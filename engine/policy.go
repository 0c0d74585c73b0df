package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

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
type Mutation uint64

// Mutations of the fixes.
const (
	MutDeleteBeforeUpdate     Mutation = 1 << iota // delete the stored copy before the ack's state update
	MutResendWithoutDup                            // resend PUBLISH with DUP=0
	MutReuseInflightID                             // allocate a packet id that is still in flight
	MutPublishAfterPubrel                          // resend the PUBLISH of a message already PUBREL'd
	MutAckBeforePersist                            // broker: PUBACK/PUBREC before the message is persisted
	MutIgnoreReceiveMax                            // broker: send QoS>0 PUBLISHes beyond the client's Receive Maximum
	MutIgnoreGrantedQoS                            // broker: forward at the publish QoS, not min(publish, granted) [MQTT-3.8.4-8]
	MutCopyPerSubscription                         // broker: one copy per matching subscription, each at its own QoS (mosquitto's allow_duplicate_messages)
	MutKeepUnsubscribed                            // broker: answer UNSUBACK but keep the subscription
	MutRetainEmptyPayload                          // broker: store an empty retained PUBLISH as the topic's retained message instead of clearing it
	MutExpiryUnchanged                             // broker: forward the publisher's Message Expiry Interval unchanged and never drop an expired message
	MutPacketIDZero                                // id allocator: wrap from 65535 to 0 (a uint16 overflow), handing out id 0
	MutKeepAliveOnReceive                          // client: a received packet restarts the keep-alive timer, so a client that only receives never pings
	MutSharedDropOnEnd                             // broker: a shared subscription member's messages die with its session instead of going to another member
	MutSharedToAll                                 // broker: a shared subscription's message goes to every member, not one
	MutAliasAboveMax                               // broker: assign up to TopicAliasesOut topic aliases whatever Topic Alias Maximum the client announced [MQTT-3.3.2-11]
	MutNoPumpOnAck                                 // broker: an ack that opens the client's receive window sends nothing; the queue waits for the next publication
	MutSessionPresentZero                          // broker: resume a kept session but answer Session Present=0 [MQTT-3.2.2-3]
	MutKeepAliveNoReset                            // broker: count the keep-alive from the CONNECT, not from the last packet received [MQTT-3.1.2-22]
	MutSkipSync                                    // broker: write its records without fsync (no Persist has Sync), then ack as if durable
	MutIgnoreSessionExpiry                         // broker: keep every v5 session for good, whatever its Session Expiry Interval
	MutSubIDsFirstOnly                             // broker: a PUBLISH carries the Subscription Identifier of the first matching subscription only [MQTT-3.3.4-4]
	MutWillOnNormalDisconnect                      // broker: keep the will on DISCONNECT 0x00 and publish it when the connection closes
	MutVolatileRetained                            // broker: never persist retained messages, so a restart forgets them
	MutMaxSizeEstimate                             // broker: judge a copy's fit by its topic and payload plus 64 bytes, not its encoded size, so copies that fit a client's Maximum Packet Size are dropped [MQTT-3.1.2-25]
	MutWillDropOnDisconnect                        // broker: discard the will on every DISCONNECT, 0x04 and error reasons too [MQTT-3.14.4-3]
	MutIgnoreMaxSize                               // broker: ignore the client's Maximum Packet Size and send packets of any size [MQTT-3.1.2-25]
	MutExhaustedReuse                              // id allocator: with all 65535 ids in flight, hand out the last id again (in flight) instead of refusing [MQTT-2.2.1-3]
	MutDollarWildcard                              // broker: first-level wildcards (# and +) match topics starting with $ too [MQTT-4.7.2-1]
	MutHalfDelete                                  // broker: discard a session without its tombstone, deleting its session and subscription records but not its message records, so a restart gives them to the client id's next session (half the old session) [MQTT-3.1.2-4]
	MutExpiryRestart                               // broker: a restart restarts every restored session's expiry clock (offline time = restart), so a session offline across a crash outlives its Session Expiry Interval [MQTT-4.1.0-2]
	MutRepublishLostQoS2                           // client: after Session Present 0, publish the lost session's QoS 2 messages already sent again as new messages, so one the broker had gets delivered twice [MQTT-3.2.2-5] [MQTT-4.3.3-10]
	MutIgnoreBrokerMaxSize                         // client: ignore the broker's Maximum Packet Size (CONNACK) and send packets of any size [MQTT-3.2.2-15]
	MutQueueBelowBound                             // broker: a session's queue is full one copy short of MaxQueued, so it drops a copy its declared bound keeps [MQTT-4.1.0-1]
	MutIgnoreServerKeepAlive                       // client: keep its own Keep Alive when the CONNACK carries a Server Keep Alive [MQTT-3.2.2-21]
	MutFiniteSessionNoQueue                        // broker: a session with a finite non-zero Session Expiry Interval keeps its subscriptions while away, but its unsent messages are dropped when its connection ends and none is queued for it while it is away, as if its interval were 0 [MQTT-4.1.0-2] [MQTT-3.1.2-23]
	MutACLWildcardSubscribe                        // broker: grant every SUBSCRIBE to a filter with a wildcard without asking the ACL (exact filters are still checked; delivery still is) (MQTT 5.0 §5.4.2)
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

// ErrPolicyText is wrapped by every error parsing a policy's text name.
var ErrPolicyText = errors.New("engine: bad policy text")

// Text names of the policy values: stable, used by plan files (sim's policy
// header line). Index = value; index 0 (unset) has no name.
var (
	retransmitNames  = []string{"", "none", "memory", "durable"}
	unknownAckNames  = []string{"", "fail", "answer"}
	ackOrderNames    = []string{"", "before-callback", "after-callback"}
	qos2StateNames   = []string{"", "volatile", "durable"}
	persistenceNames = []string{"", "none", "periodic", "every-change"}
	mutationNames    = []string{"delete-before-update", "resend-without-dup", "reuse-inflight-id", "publish-after-pubrel", "ack-before-persist", "ignore-receive-max",
		"ignore-granted-qos", "copy-per-subscription", "keep-unsubscribed", "retain-empty-payload", "expiry-unchanged", "packet-id-zero",
		"keep-alive-on-receive", "shared-drop-on-end", "shared-to-all", "alias-above-max", "no-pump-on-ack",
		"session-present-zero", "keep-alive-no-reset", "skip-sync", "ignore-session-expiry",
		"subids-first-only", "will-on-normal-disconnect", "volatile-retained", "max-size-estimate", "will-drop-on-disconnect",
		"ignore-max-size", "exhausted-reuse", "dollar-wildcard", "half-delete", "expiry-restart", "republish-lost-qos2",
		"ignore-broker-max-size",
		"queue-below-bound", "ignore-server-keep-alive",
		"finite-session-no-queue", "acl-wildcard-subscribe"}
)

// enumName returns names[v], or kind(v) for a value without a name.
func enumName[T ~uint8](v T, names []string, kind string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return kind + "(" + strconv.Itoa(int(v)) + ")"
}

// parseEnum returns the value whose name is s.
func parseEnum[T ~uint8](s string, names []string, kind string) (T, error) {
	for i, n := range names {
		if n != "" && n == s {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q is not one of %s", ErrPolicyText, kind, s, strings.Join(names[1:], ", "))
}

// String returns the store's text name: none, memory or durable.
func (s RetransmitStore) String() string { return enumName(s, retransmitNames, "retransmit") }

// ParseRetransmitStore reads RetransmitStore.String.
func ParseRetransmitStore(s string) (RetransmitStore, error) {
	return parseEnum[RetransmitStore](s, retransmitNames, "retransmit store")
}

// String returns the policy's text name: fail or answer.
func (a UnknownAck) String() string { return enumName(a, unknownAckNames, "unknown-ack") }

// ParseUnknownAck reads UnknownAck.String.
func ParseUnknownAck(s string) (UnknownAck, error) {
	return parseEnum[UnknownAck](s, unknownAckNames, "unknown-ack policy")
}

// String returns the order's text name: before-callback or after-callback.
func (o AckOrder) String() string { return enumName(o, ackOrderNames, "ack-order") }

// ParseAckOrder reads AckOrder.String.
func ParseAckOrder(s string) (AckOrder, error) {
	return parseEnum[AckOrder](s, ackOrderNames, "ack order")
}

// String returns the state kind's text name: volatile or durable.
func (q QoS2State) String() string { return enumName(q, qos2StateNames, "qos2-state") }

// ParseQoS2State reads QoS2State.String.
func ParseQoS2State(s string) (QoS2State, error) {
	return parseEnum[QoS2State](s, qos2StateNames, "QoS2 state")
}

// String returns the mode's text name: none, periodic or every-change.
func (p BrokerPersistence) String() string { return enumName(p, persistenceNames, "persistence") }

// ParseBrokerPersistence reads BrokerPersistence.String.
func ParseBrokerPersistence(s string) (BrokerPersistence, error) {
	return parseEnum[BrokerPersistence](s, persistenceNames, "broker persistence")
}

// String returns the mutation set's text: "none", or the names of its bits
// joined by "+" (lowest bit first), bits without a name as one hex number
// last: "resend-without-dup+0x80".
func (m Mutation) String() string {
	if m == 0 {
		return "none"
	}
	var parts []string
	for i, n := range mutationNames {
		if m&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := m &^ (1<<len(mutationNames) - 1); rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(uint64(rest), 16))
	}
	return strings.Join(parts, "+")
}

// ParseMutation reads Mutation.String: "none", or names and hex numbers
// joined by "+".
func ParseMutation(s string) (Mutation, error) {
	if s == "none" {
		return 0, nil
	}
	var m Mutation
	for _, part := range strings.Split(s, "+") {
		bit, err := parseMutationPart(part)
		if err != nil {
			return 0, fmt.Errorf("%w: mutations %q: %w", ErrPolicyText, s, err)
		}
		m |= bit
	}
	return m, nil
}

func parseMutationPart(part string) (Mutation, error) {
	for i, n := range mutationNames {
		if n == part {
			return 1 << i, nil
		}
	}
	if hex, ok := strings.CutPrefix(part, "0x"); ok {
		v, err := strconv.ParseUint(hex, 16, 64)
		if err == nil && v != 0 {
			return Mutation(v), nil
		}
	}
	return 0, fmt.Errorf("%q is not none, a hex number or one of %s", part, strings.Join(mutationNames, ", "))
}
