package model

import (
	"fmt"
	"slices"
	"strings"
)

// Invariant names one property of the abstract spec the checker enforces.
type Invariant uint8

// The invariants, in the order of SPEC-NOTES.md "Invariants".
const (
	// NoLoss: every accepted QoS>=1 message reaches every matching persistent
	// subscriber (SPEC-NOTES invariant 1, 10).
	NoLoss Invariant = iota + 1
	// QoS2ExactlyOnce: a QoS2 (and QoS0) message is delivered at most once per
	// subscriber, and nothing is delivered that was never accepted
	// [MQTT-4.3.3-10] (invariant 2).
	QoS2ExactlyOnce
	// Retransmit: resends only after a session-present CONNACK on a new
	// connection, with DUP=1, the same id and payload, in original order, and
	// never a PUBLISH after its PUBREL [MQTT-4.4.0-1] [MQTT-3.3.1-1]
	// [MQTT-4.6.0-1] [MQTT-4.3.3-6] (invariants 3, 6).
	Retransmit
	// PubrelAnswered: every PUBREL gets a PUBCOMP on the same connection
	// [MQTT-4.3.3-11] (invariant 4).
	PubrelAnswered
	// PacketIDUnique: a new packet never reuses an id in flight in the same
	// direction [MQTT-2.2.1-3] [MQTT-2.2.1-4] (invariant 5).
	PacketIDUnique
	// SendQuota: v5 unacked QoS>0 PUBLISHes on a connection stay within the
	// receiver's Receive Maximum: the client's within the broker's
	// [MQTT-3.3.4-7], the broker's within the client's [MQTT-3.3.4-9]
	// [MQTT-4.9.0-2] (invariant 7).
	SendQuota
	// Order: first deliveries per publisher, topic and QoS follow the
	// publisher's accepted order [MQTT-4.6.0-5] [MQTT-4.6.0-6] (invariant 6).
	Order
	// NoStuck: no permanent failure or stuck session once faults stop
	// (invariant 11).
	NoStuck
	// SessionPresent: Session Present is honoured by both sides, and a
	// broker that kept the session says so [MQTT-3.2.2-2] [MQTT-3.2.2-3]
	// [MQTT-3.2.2-4] [MQTT-3.2.2-5] (invariant 8; sessionkept.go).
	SessionPresent
	// GrantedQoS: the broker sends each copy at min(publish QoS, the
	// maximum QoS granted to the client's matching filters) [MQTT-3.8.4-8]
	// [MQTT-3.3.4-2] (see routing.go).
	GrantedQoS
	// Unsubscribe: nothing the broker receives after the UNSUBACK of a
	// client's last matching filter reaches that client [MQTT-3.10.4-2].
	Unsubscribe
	// Overlap: one copy per publication and client, however many of its
	// subscriptions match [MQTT-3.3.4-2].
	Overlap
	// Retained: a SUBACK brings the last retained message of each matching
	// topic with RETAIN=1 as Retain Handling asks, never a cleared or
	// replaced one [MQTT-3.3.1-6] [MQTT-3.3.1-9] [MQTT-3.3.1-10]
	// [MQTT-3.3.1-11] [MQTT-3.3.1-12].
	Retained
	// MessageExpiry: no first send after the Message Expiry Interval ran
	// out, and the interval forwarded is what remains [MQTT-3.3.2-5]
	// [MQTT-3.3.2-6].
	MessageExpiry
	// ClientKeepAlive: a connected client never stays silent longer than
	// its Keep Alive [MQTT-3.1.2-23] (see keepalive.go).
	ClientKeepAlive
	// SharedDelivery: each message on a shared subscription's filter
	// reaches one member of the group: at least one, and one only for QoS 2
	// (MQTT 5.0 §4.8.2, [MQTT-4.8.2-5]; see shared.go).
	SharedDelivery
	// FlowResume: a QoS>0 copy the broker owes a connected client is never
	// parked for good: when the receive window opens it is sent
	// [MQTT-4.9.0-2] (see routing.go).
	FlowResume
	// BrokerKeepAlive: the broker closes a connection for keep-alive only after
	// 1.5 × its Keep Alive without a packet from the client
	// [MQTT-3.1.2-22] [MQTT-3.1.2-24] (brokerkeepalive.go).
	BrokerKeepAlive
	// SessionExpiry: a v5 broker discards a session whose Session Expiry
	// Interval passed after its connection closed [MQTT-4.1.0-2] (see
	// sessionexpiry.go).
	SessionExpiry
	// TopicAlias: the broker's Topic Aliases stay within the Topic Alias
	// Maximum each client announced, and an alias sent alone was set
	// earlier on the same connection [MQTT-3.3.2-11] [MQTT-3.1.2-27]
	// [MQTT-3.3.2-7] (topicalias.go).
	TopicAlias
	// Will: a will message is published after its connection ends without
	// DISCONNECT 0x00 (no DISCONNECT, or a v5 one with 0x04 or an error
	// reason), once its Will Delay (or the session) ran out, whether or not
	// the client is back by then, and never otherwise [MQTT-3.1.2-8]
	// [MQTT-3.1.2-10] [MQTT-3.14.4-3] [MQTT-3.1.3-9] (see will.go).
	Will
	// SubscriptionIDs: a PUBLISH the broker sends a v5 client carries the
	// Subscription Identifiers of the subscriptions it is sent for: of all
	// the session's matching ordinary subscriptions in its one copy, of the
	// shared subscription in a shared subscription's copy [MQTT-3.3.4-3]
	// [MQTT-3.3.4-4] [MQTT-3.3.4-5] (see subids.go).
	SubscriptionIDs
	// MaxPacketSize: the broker never sends a client a PUBLISH larger than
	// the Maximum Packet Size the client announced in the CONNECT of that
	// connection [MQTT-3.1.2-25]; a client never sends the broker one
	// larger than the Maximum Packet Size of the broker's CONNACK, and
	// refuses as too large only one that is [MQTT-3.2.2-15] (packetsize.go).
	MaxPacketSize
	// DollarTopics: no copy of a message on a topic starting with '$'
	// reaches a client through a filter whose first level is a wildcard
	// (# or +) [MQTT-4.7.2-1] (routing.go).
	DollarTopics
	// Access: under a declared ACL (ACL events), the broker grants no
	// subscription the client's read rights do not cover, sends no client
	// a message on a topic it may not read, routes no publication its
	// publisher may not write, and refuses such a v5 PUBLISH (QoS 1/2)
	// with a reason code >= 0x80 (MQTT 5.0 §5.4.2, §3.4.2.1 0x87; 3.1.1
	// [MQTT-3.3.5-2]) (access.go).
	Access

	numInvariants = iota
)

var invariantNames = [...]string{
	NoLoss:          "NoLoss",
	QoS2ExactlyOnce: "QoS2ExactlyOnce",
	Retransmit:      "Retransmit",
	PubrelAnswered:  "PubrelAnswered",
	PacketIDUnique:  "PacketIDUnique",
	SendQuota:       "SendQuota",
	Order:           "Order",
	NoStuck:         "NoStuck",
	SessionPresent:  "SessionPresent",
	GrantedQoS:      "GrantedQoS",
	Unsubscribe:     "Unsubscribe",
	Overlap:         "Overlap",
	Retained:        "Retained",
	MessageExpiry:   "MessageExpiry",
	ClientKeepAlive: "ClientKeepAlive",
	SharedDelivery:  "SharedDelivery",
	FlowResume:      "FlowResume",
	BrokerKeepAlive: "BrokerKeepAlive",
	SessionExpiry:   "SessionExpiry",
	TopicAlias:      "TopicAlias",
	Will:            "Will",
	SubscriptionIDs: "SubscriptionIDs",
	MaxPacketSize:   "MaxPacketSize",
	DollarTopics:    "DollarTopics",
	Access:          "Access",
}

// String returns the invariant's name, e.g. "NoLoss".
func (i Invariant) String() string {
	if i >= 1 && int(i) < len(invariantNames) {
		return invariantNames[i]
	}
	return fmt.Sprintf("Invariant(%d)", uint8(i))
}

// Invariants returns every invariant in declaration order.
func Invariants() []Invariant {
	out := make([]Invariant, 0, numInvariants)
	for i := Invariant(1); i <= numInvariants; i++ {
		out = append(out, i)
	}
	return out
}

// Set is a set of invariants (a bit set; the zero value is empty).
type Set uint32

// All is the set of every invariant.
func All() Set {
	var s Set
	for _, i := range Invariants() {
		s = s.With(i)
	}
	return s
}

// SetOf returns the set holding the given invariants.
func SetOf(invs ...Invariant) Set {
	var s Set
	for _, i := range invs {
		s = s.With(i)
	}
	return s
}

// Has reports whether i is in s.
func (s Set) Has(i Invariant) bool { return s&(1<<i) != 0 }

// With returns s plus i.
func (s Set) With(i Invariant) Set { return s | 1<<i }

// Without returns s minus i.
func (s Set) Without(i Invariant) Set { return s &^ (1 << i) }

// Members returns the invariants of s in declaration order.
func (s Set) Members() []Invariant {
	var out []Invariant
	for _, i := range Invariants() {
		if s.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// String lists the members, e.g. "{NoLoss,Order}".
func (s Set) String() string {
	names := make([]string, 0, numInvariants)
	for _, i := range s.Members() {
		names = append(names, i.String())
	}
	return "{" + strings.Join(names, ",") + "}"
}

// Violation is one breach of an invariant found in a history.
type Violation struct {
	Step      int       // index in History.Events of the event that shows the breach
	Invariant Invariant // which invariant
	Node      string    // the node at fault (or whose promise was broken)
	Reason    string    // readable explanation, citing spec ids
	// Events are the indexes in History.Events of the events the violation
	// rests on, ascending and distinct, Step among them: the breach and
	// what makes it one (the first send of a reused id, the Accepted of a
	// lost message, the PUBREL a resend follows). A chart or a report
	// points at them; String does not print them.
	Events []int
	// ExplainedBy names the earlier violation this one follows from
	// ("SessionPresent at step 12"), "" when none does (see explain.go):
	// Check lists it right after its cause.
	ExplainedBy string
}

// NewViolation returns the violation of inv shown at step, with Events
// citing step and the given earlier or later events (negative indexes,
// meaning "none", are dropped). Every check builds its violations with it,
// so that each names the events it rests on.
func NewViolation(inv Invariant, step int, node, reason string, cited ...int) Violation {
	return Violation{Step: step, Invariant: inv, Node: node, Reason: reason, Events: Cite(step, cited...)}
}

// Cite returns step and the cited indexes, ascending, without duplicates
// and without negative ones.
func Cite(step int, cited ...int) []int {
	out := make([]int, 0, 1+len(cited))
	if step >= 0 {
		out = append(out, step)
	}
	for _, c := range cited {
		if c >= 0 {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String formats the violation as "step 12 NoLoss s1: reason".
func (v Violation) String() string {
	return fmt.Sprintf("step %d %s %s: %s", v.Step, v.Invariant, v.Node, v.Reason)
}
