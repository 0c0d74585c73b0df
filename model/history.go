package model

// Kind is the kind of a history event.
type Kind uint8

// History event kinds. Node names are "broker" and client ids ("p1", "s1", ...).
const (
	// Accepted: a publisher app's Publish completed Accepted (the engine owns
	// the message). Node, Msg, Topic, QoS, Retain.
	Accepted Kind = iota + 1
	// Acknowledged: a publisher's Publish completed Acknowledged. Node, Msg.
	Acknowledged
	// Sent: Node wrote a packet towards Peer (the Send action took effect).
	// A client's CONNECT carries in ReceiveMax the Receive Maximum property
	// it announced (0 when absent, which means 65535).
	Sent
	// Received: Node decoded a packet that came from Peer.
	Received
	// Delivered: a subscriber app took ownership of a message (its durable
	// write inside the callback is done). Node, Msg, Topic, QoS, Packet.Dup.
	Delivered
	// Subscribed: a SUBACK granted Node the subscription Filter at QoS.
	// Persistent is true when the session outlives the connection.
	Subscribed
	// Unsubscribed: an UNSUBACK removed Filter for Node.
	Unsubscribed
	// ConnOpened: Node's network connection to Peer opened.
	ConnOpened
	// ConnClosed: Node saw its connection to Peer close or reset, or closed
	// it itself. Packet.Reason is KeepAliveTimeout (0x8D) when Node closed
	// it for keep-alive (a recorder that cannot tell leaves it 0).
	ConnClosed
	// Connected: client Node received CONNACK. CleanStart is what it asked,
	// SessionPresent what it got, HadState whether it held session state,
	// Version its protocol level, ReceiveMax the broker's Receive Maximum.
	Connected
	// Crash: Node crashed (memory and unsynced writes lost). Point says where;
	// Point CrashStop is a clean stop (memory lost, every write synced).
	// Reason, when the simulator lost writes, says how many ("2 unsynced
	// writes lost", ", last one torn").
	Crash
	// Restart: Node was rebuilt from its durable records.
	Restart
	// StateLost: Node lost its incoming QoS2 state on purpose (a fault).
	StateLost
	// Partition and Heal: Node was cut from / rejoined the broker.
	Partition
	Heal
	// LivenessStart: the safety phase ended; every fault is off from here.
	LivenessStart
	// Quiescent: the world went quiet at Time.
	Quiescent
	// Stuck: liveness bound passed with work pending; Reason lists it.
	Stuck
	// Failed: an engine reported a permanent error (Reason).
	Failed
	// Cut: the network cut client Node's connection to Peer (Reason
	// "reset": both sides learn of it; "half-open": the bytes vanish
	// silently). What was in flight on it is lost. A record for readers
	// (the sequence chart): no check reads it; each side's ConnClosed,
	// when it learns, is what the checks see.
	Cut
	// Refused: client Node's engine built a packet for a command of its
	// app (a PUBLISH, SUBSCRIBE or UNSUBSCRIBE towards Peer) that its own
	// codec refused to write, so the command failed and nothing reached
	// the wire. Packet.Type and Packet.QoS say what was refused, Msg and
	// Topic (a PUBLISH) or Filter (a SUBSCRIBE or UNSUBSCRIBE) which
	// command; Reason is the codec's refusal, "[rule] message", naming the
	// rule the packet broke. The simulator's commands are valid, so the
	// packet is the engine's fault: CheckPacketIDUnique judges a refusal
	// for its packet identifier.
	Refused
	// Cutoff: the liveness phase reached its bound while the world was
	// still making progress (deliveries kept coming): the history ends
	// unfinished at Time (Reason says what was still pending). What was
	// still in flight then is unfinished, not lost: NoLoss owes a
	// subscriber only messages of a publisher that it delivered a later
	// message of (the stream got past them), PubrelAnswered only PUBRELs
	// received before one the node answered, and the end-of-history
	// obligations of the routing rules (FlowResume, Retained, Will) and
	// SharedDelivery are not judged; NoStuck takes it as the end of the
	// phase. A world with no progress ends in Stuck instead.
	Cutoff
	// Dropped: the broker (Node BrokerNode) said it discarded its copy of
	// message Msg (Topic) for client Peer undelivered. Reason is the
	// broker's own words, starting with why: "queue-full bound=1000
	// policy=drop-oldest" (its per-session queue was at its bound),
	// "expired", "too-large", "qos0-offline". A record of the broker's
	// log, read by the live tester; NoLoss and FlowResume excuse a
	// queue-full drop only as far as the limits the broker declares allow
	// (BrokerLimits, droplimits.go).
	Dropped
	// ACL: a declaration of the broker's access control, at the start of
	// the history (access.go). Node BrokerNode: Reason is one line of its
	// ACL file, in file order ("user NAME", "topic read|write|readwrite|deny
	// FILTER", "pattern ... FILTER"): an ACL is in force. Node a client:
	// Reason "user NAME", the user name every CONNECT of the client
	// carries (a client without one connects anonymously).
	ACL
)

// CrashPoint says where inside a step a node crashed.
type CrashPoint uint8

// Crash points.
const (
	CrashBetweenSteps   CrashPoint = iota + 1 // a plan-level crash between steps
	CrashBeforeAction                         // before an action of a Step took effect
	CrashAfterAction                          // after an action of a Step took effect
	CrashInCallbackPre                        // inside the app callback, before its durable write
	CrashInCallbackPost                       // inside the app callback, after its durable write, before Ack
	// CrashStop: a clean stop (sim's "stop"): the engine was told Shutdown
	// and its actions took effect, every write was synced, then the node
	// went down. Its memory is lost as in a crash; its disk is not.
	CrashStop
)

// Packet describes one MQTT packet in the model's own terms.
type Packet struct {
	Type     uint8 // MQTT control packet type, 1..15
	ID       uint16
	QoS      uint8
	Dup      bool
	Retain   bool
	Reason   uint8 // acks, CONNACK, DISCONNECT; SUBACK and UNSUBACK of one filter: its reason code (SUBACK: the granted QoS, or >= 0x80)
	Topic    string
	Msg      string // the message id carried in a PUBLISH payload, "" if none
	Payload  string // the payload bytes, for same-payload checks
	Sessions bool   // CONNACK Session Present
	Clean    bool   // CONNECT Clean Start
	Filter   string // SUBSCRIBE/UNSUBSCRIBE of one filter: it ("" if not recorded); SUBSCRIBE's requested QoS is QoS
	// Opts: a SUBSCRIBE of one filter's v5 subscription options besides
	// its QoS, as on the wire: OptNoLocal, OptRetainAsPublished and the
	// Retain Handling in bits 4-5 (see RetainHandling).
	Opts      uint8
	KeepAlive uint16 // CONNECT: Keep Alive in seconds; CONNACK: Server Keep Alive (0 when absent)
	MaxSize   uint32 // CONNECT, CONNACK: the v5 Maximum Packet Size the client, or the broker, accepts (0 when absent: no limit)
	// Size: a PUBLISH's encoded size on the wire in bytes, fixed header
	// included (MQTT 5.0 §3.1.2.11.4: what a Maximum Packet Size bounds);
	// 0 when not recorded.
	Size uint32
	// TopicAlias: a PUBLISH's Topic Alias, a CONNECT's Topic Alias
	// Maximum; 0 when absent. A PUBLISH that names its topic by the alias
	// alone has an empty Topic.
	TopicAlias uint16
	// Expiry: a PUBLISH's Message Expiry Interval, a CONNECT's Session
	// Expiry Interval, in seconds; 0 when absent. A DISCONNECT's Session
	// Expiry Interval when ExpirySet.
	Expiry    uint32
	ExpirySet bool // DISCONNECT: it carries a Session Expiry Interval (Expiry)
	// Will: a CONNECT carries a will message, described by Topic, Payload,
	// Msg, QoS and Retain, to be published WillDelay seconds after the
	// session's connection ends without a normal DISCONNECT.
	Will      bool
	WillDelay uint32
	// SubIDs: a PUBLISH's Subscription Identifiers (MQTT 5.0 §3.3.2.3.8),
	// a SUBSCRIBE's one (§3.8.2.1.2); nil when absent.
	SubIDs []uint32
}

// Subscription option bits of Packet.Opts [MQTT-3.8.3-1].
const (
	OptNoLocal           uint8 = 1 << 2
	OptRetainAsPublished uint8 = 1 << 3
)

// RetainHandling is the Retain Handling option of a SUBSCRIBE's Opts: 0
// send retained messages on subscribe, 1 only for a new subscription, 2
// never [MQTT-3.3.1-9] [MQTT-3.3.1-10] [MQTT-3.3.1-11].
func (p *Packet) RetainHandling() uint8 { return p.Opts >> 4 & 3 }

// Event is one step of a history.
type Event struct {
	Kind   Kind
	Time   int64 // virtual nanoseconds
	Node   string
	Peer   string
	Packet Packet

	Msg            string // message id (Accepted, Acknowledged, Delivered)
	Topic          string
	Filter         string
	QoS            uint8
	Retain         bool
	Persistent     bool
	CleanStart     bool
	SessionPresent bool
	HadState       bool
	Version        uint8
	ReceiveMax     uint16
	Point          CrashPoint
	Reason         string
}

// History is what a run produced, in order. The step index of an event is its
// position in Events.
type History struct {
	Events []Event
}

// Add appends an event.
func (h *History) Add(e Event) { h.Events = append(h.Events, e) }

// KeepAliveTimeout is the reason code a ConnClosed event's Packet.Reason
// carries when the node closed the connection for keep-alive (5.0's 0x8D).
const KeepAliveTimeout = 0x8D
