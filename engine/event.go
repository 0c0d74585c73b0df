package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// Time is virtual time in nanoseconds since the world began. The engine never
// reads a wall clock; every Step is told the time.
type Time int64

// Duration is a span of virtual time in nanoseconds.
type Duration = int64

// Common durations in virtual nanoseconds.
const (
	Millisecond Duration = 1_000_000
	Second      Duration = 1_000 * Millisecond
)

// ConnID names one network connection. The world assigns it when the
// connection opens; events and actions carry it so that an engine can tell a
// stale event of an old connection from one of the current connection.
type ConnID uint64

// TimerID names a timer the engine asked for. It is opaque to the world.
type TimerID uint64

// CmdID names an application command so its Complete can be matched to it.
type CmdID uint64

// DeliveryID names one delivery to the application so its Ack can be matched.
type DeliveryID uint64

// Event is an input to Step.
type Event interface{ isEvent() }

// ConnOpened reports that the connection the engine asked for with Dial
// (client) or that a peer opened (broker) is now established.
type ConnOpened struct{ Conn ConnID }

// ConnClosed reports that the connection was closed or reset, as seen by this
// side. It may arrive for a connection the engine already closed itself.
type ConnClosed struct{ Conn ConnID }

// BytesReceived carries bytes read from a connection, in any chunking. The
// engine copies what it keeps; Data may be reused after Step returns.
type BytesReceived struct {
	Conn ConnID
	Data []byte
}

// TimerFired reports that a timer set with SetTimer reached its time.
type TimerFired struct{ Timer TimerID }

// Shutdown: the node is stopping cleanly; flush what the policy keeps
// durable. The broker writes its full snapshot (PersistPeriodic; nothing
// under LegacyPersistNone) and closes every connection, in v5 with
// DISCONNECT 0x8B Server shutting down; the client sends a clean DISCONNECT.
// The world carries the actions out, syncs the disk and takes the node down;
// what the policy keeps only in memory is lost as in a crash.
type Shutdown struct{}

func (ConnOpened) isEvent()    {}
func (ConnClosed) isEvent()    {}
func (BytesReceived) isEvent() {}
func (TimerFired) isEvent()    {}
func (Shutdown) isEvent()      {}

// Connect asks the client to open its session: it answers with Dial, then
// sends CONNECT on ConnOpened. CleanStart overrides the config for this
// connection attempt, and so does Will (nil: the config's will, if any).
// An invalid Will fails the command with ErrClientBadCommand.
type Connect struct {
	Cmd        CmdID
	CleanStart bool
	Will       *Will
}

// Publish asks the client to publish a message. Its Complete reports Accepted
// once the engine owns the message (stored durably if the policy says so), and
// Acknowledged when the broker's PUBACK/PUBCOMP arrives (QoS 0: Accepted only).
type Publish struct {
	Cmd     CmdID
	Topic   string
	Payload []byte
	QoS     packet.QoS
	Retain  bool
	// MessageExpiry is the v5 Message Expiry Interval in seconds (0: the
	// message does not expire) [MQTT-3.3.2-5]; a 3.1.1 client fails a
	// Publish that sets it with ErrClientBadCommand.
	MessageExpiry uint32
}

// Subscribe asks the client to subscribe; Complete carries the SUBACK codes.
type Subscribe struct {
	Cmd  CmdID
	Subs []packet.Subscription
	// SubscriptionID is the v5 Subscription Identifier the SUBSCRIBE
	// carries, 1 to 268,435,455, for every filter of it (0: none); the
	// broker sends it on each PUBLISH these subscriptions match
	// (§3.8.2.1.2). A 3.1.1 client fails a Subscribe that sets it with
	// ErrClientBadCommand; so does a v5 client for 0x0FFFFFFF and above.
	SubscriptionID uint32
}

// Unsubscribe asks the client to unsubscribe.
type Unsubscribe struct {
	Cmd     CmdID
	Filters []string
}

// Disconnect asks the client to send DISCONNECT 0x00 and close: a normal
// disconnect, after which the broker discards the will [MQTT-3.14.4-3].
// With Abnormal the client closes the connection without DISCONNECT, as a
// killed process or a dropped network would: the broker then publishes the
// will [MQTT-3.1.2-8]. Either way the session stays as the Session Expiry
// says.
//
// Reason (v5 only) is the DISCONNECT's reason code instead of 0x00: 0x04
// Disconnect with Will Message, or an error a client may send (0x80 to
// 0x83, 0x90, 0x93 to 0x99; MQTT 5.0 §3.14.2.1); after any of them the
// broker publishes the will, which only a Normal disconnection removes
// [MQTT-3.1.2-10] [MQTT-3.14.4-3]. Another code, a Reason in 3.1.1 or with
// Abnormal fails the command with ErrClientBadCommand.
type Disconnect struct {
	Cmd      CmdID
	Abnormal bool
	Reason   packet.ReasonCode
}

// Ack tells the engine the application has taken ownership of a delivery. With
// the ack-after-callback policy the PUBACK/PUBREC leaves only now.
type Ack struct{ Delivery DeliveryID }

func (Connect) isEvent()     {}
func (Publish) isEvent()     {}
func (Subscribe) isEvent()   {}
func (Unsubscribe) isEvent() {}
func (Disconnect) isEvent()  {}
func (Ack) isEvent()         {}
