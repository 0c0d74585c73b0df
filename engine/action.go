package engine

import "github.com/mqttlab/mqttlab/engine/packet"

// Action is an output of Step that the world must carry out, in order.
type Action interface{ isAction() }

// Dial asks the world to open a connection to the broker (client only). The
// world answers with ConnOpened or, if the dial fails, ConnClosed, either
// carrying a ConnID fresh for this dial.
type Dial struct{}

// Send writes bytes to a connection. Packet is the packet the bytes encode,
// for tracing and history only; the world must not modify it.
type Send struct {
	Conn   ConnID
	Data   []byte
	Packet packet.Packet
}

// CloseConn closes a connection. Reason says why (nil for a normal close).
type CloseConn struct {
	Conn   ConnID
	Reason error
}

// PersistOp is what a Persist action does to its key.
type PersistOp uint8

// Persist operations.
const (
	Put    PersistOp = iota + 1 // write Value under Key
	Delete                      // remove Key
)

// Persist changes one durable record of the node. Sync means the change must
// be durable before the next action takes effect; without it the write may be
// lost by a crash until a later synced Persist.
type Persist struct {
	Op    PersistOp
	Sync  bool
	Key   string
	Value []byte
}

// SetTimer asks for TimerFired at time At. Setting an id again moves it.
type SetTimer struct {
	Timer TimerID
	At    Time
}

// CancelTimer cancels a timer; cancelling an unknown timer is a no-op.
type CancelTimer struct{ Timer TimerID }

// Message is an application message as delivered to a subscriber.
type Message struct {
	Topic    string
	Payload  []byte
	QoS      packet.QoS
	Retain   bool
	Dup      bool
	PacketID uint16
}

// Deliver hands a message to the application (client only). The application
// answers with Ack{Delivery} once it owns it.
type Deliver struct {
	Delivery DeliveryID
	Msg      Message
}

// Result is the outcome of a command.
type Result uint8

// Command outcomes.
const (
	Accepted     Result = iota + 1 // the engine owns the command (Publish: stored as the policy requires)
	Acknowledged                   // the broker acknowledged it (PUBACK, PUBCOMP, SUBACK, UNSUBACK, CONNACK)
	Failed                         // it failed; Err says why
)

// Complete reports a command's outcome. A Publish of QoS 1 or 2 completes
// twice: Accepted, then Acknowledged (or Failed).
type Complete struct {
	Cmd     CmdID
	Result  Result
	Session bool // CONNACK Session Present
	Err     error
	Reasons []packet.ReasonCode // SUBACK/UNSUBACK codes, CONNACK reason
}

func (Dial) isAction()        {}
func (Send) isAction()        {}
func (CloseConn) isAction()   {}
func (Persist) isAction()     {}
func (SetTimer) isAction()    {}
func (CancelTimer) isAction() {}
func (Deliver) isAction()     {}
func (Complete) isAction()    {}

// Record is one durable record as the world stored it; NewClient and
// NewBroker rebuild an engine from the records that survived.
type Record struct {
	Key   string
	Value []byte
}
