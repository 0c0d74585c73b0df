package model

// Role says what a node did in a run; a client may be both.
type Role uint8

// Roles (bit flags).
const (
	RoleBroker     Role = 1 << iota // the broker node
	RolePublisher                   // has at least one Accepted event
	RoleSubscriber                  // subscribed, or received or delivered a message (see Roles)
)

// CrashFault is one Crash event of a history.
type CrashFault struct {
	Step  int
	Node  string
	Role  Role
	Point CrashPoint
}

// Faults summarises the faults a history shows; Promises reads it. The
// counters are derived from Crash, Restart, StateLost, Partition, ConnClosed
// and LivenessStart events (see FaultsOf).
type Faults struct {
	Crashes []CrashFault // every crash, in history order

	BrokerCrashes int // crashes of the broker (clean stops excluded)
	BrokerStops   int // clean stops of the broker (Crash at CrashStop)

	PublisherCrashes        int // crashes of publisher nodes
	PublisherCrashesUnacked int // ... while holding an Accepted QoS>=1 message not yet Acknowledged
	PublisherConnLosses     int // lost connections of a publisher holding an unacked message
	PublisherRestarts       int // Restart events of publisher nodes

	SubscriberCrashes     int  // crashes of subscriber nodes
	SubscriberMidDelivery int  // ... while holding a received PUBLISH not yet Delivered
	CallbackPreCrashes    int  // CrashInCallbackPre on any node
	CallbackPostCrashes   int  // CrashInCallbackPost on any node
	QoS2WindowCrashes     int  // crash after a QoS2 Delivered, before that node Sent its PUBREC
	SessionLostCrashes    int  // a publisher holding unacked messages crashed after it read Session Present 0 to Clean Start 0, before it acted on it, or crashed or lost the connection before it read the Session Present 0 the broker sent it (its reboot or reconnect resends to the broker's new session)
	SubscriberStateLosses int  // StateLost events of subscriber nodes
	SubscriberConnLosses  int  // ConnClosed seen by subscriber nodes
	StateLosses           int  // StateLost events of any node
	Partitions            int  // Partition events
	ConnLosses            int  // ConnClosed events of any node
	LivenessRan           bool // a LivenessStart event exists
}

// Any reports whether the history shows any fault at all: crash, state loss,
// partition or lost connection.
func (f Faults) Any() bool {
	return len(f.Crashes) > 0 || f.StateLosses > 0 || f.Partitions > 0 || f.ConnLosses > 0
}

// Roles returns each node's role: RoleBroker for BrokerNode, RolePublisher
// for nodes with an Accepted event, RoleSubscriber for clients with a
// Subscribed or Delivered event or a PUBLISH received from the broker. A
// client whose SUBACK was lost still receives what the broker routes to the
// subscription it installed, and holds incoming QoS2 state for it: it is a
// subscriber for every fault that touches that state (StateLost, crashes).
func Roles(h History) map[string]Role {
	roles := map[string]Role{BrokerNode: RoleBroker}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == Accepted:
			roles[e.Node] |= RolePublisher
		case e.Kind == Subscribed || e.Kind == Delivered:
			roles[e.Node] |= RoleSubscriber
		case e.Kind == Received && e.Node != BrokerNode && e.Packet.Type == PUBLISH:
			roles[e.Node] |= RoleSubscriber
		}
	}
	return roles
}

// nodeFaults is what FaultsOf keeps of one node while scanning.
type nodeFaults struct {
	role       Role
	unacked    int   // accepted QoS>=1 msgs not yet acknowledged (in faultScan.unacked)
	undeliv    int   // received PUBLISH msgs not yet delivered (in faultScan.undeliv)
	undelivGen int32 // the mark of this node's live entries in faultScan.undeliv
	pubrecSent idSet // ids whose PUBREC was sent since the last QoS2 PUBLISH of that id
	window     idSet // ids delivered, PUBREC not yet sent
	windowN    int   // how many
	connects   bool  // sent a CONNECT whose connection has not been seen to end
	cleanConn  bool  // its last CONNECT asked Clean Start
	spZero     bool  // read Session Present 0 to Clean Start 0; its Connected event not yet come
	spZeroSent bool  // the broker sent it Session Present 0 to its Clean Start 0 CONNECT, not read yet
}

// faultScan is the state FaultsOf keeps while scanning.
type faultScan struct {
	x       *index
	nodes   []nodeFaults
	unacked pairs[bool]  // publisher, msg -> true while accepted and unacknowledged
	undeliv pairs[int32] // node, msg -> the node's undelivGen while received and not yet delivered
	qos2ID  pairs[int32] // node, msg -> 1 + id of its last received QoS2 PUBLISH
}

// FaultsOf derives the faults of a history. A lost connection is a client's
// ConnClosed after its CONNECT (without a DISCONNECT it sent first), a
// client's CONNECT while its previous connection was never seen to end
// (the broker's side of a connection is not counted again). A crash ends the node's connection without counting as
// a connection loss of its own. A clean stop (Crash at CrashStop) counts as
// a crash of a client, whose memory it loses; the broker's stops are
// counted apart, in BrokerStops.
func FaultsOf(h History) Faults {
	x := borrowIndex(&h)
	f := faultsOf(x)
	x.release()
	return f
}

func faultsOf(x *index) Faults { return faultsOfNodes(x, nil) }

// faultsOfNodes is faultsOf counting only the events of the nodes keep
// accepts (nil: every node); events of no node (LivenessStart) always
// count. A node's own state (unacked messages, QoS 2 windows) depends on
// its own events only, so skipping another node's events changes nothing
// of it.
func faultsOfNodes(x *index, keep func(node int32) bool) Faults {
	s := faultScan{x: x, nodes: make([]nodeFaults, len(x.nodes)),
		unacked: newPairs[bool](x), undeliv: newPairs[int32](x), qos2ID: newPairs[int32](x)}
	for id, r := range x.roles {
		s.nodes[id] = nodeFaults{role: r, undelivGen: 1}
	}
	var f Faults
	for i, k := range x.kinds {
		if faultEvents.has(k) && (keep == nil || x.ev[i].node == emptyID || keep(x.ev[i].node)) {
			s.step(&f, i, &x.h.Events[i])
		}
	}
	releasePairs(x, &s.unacked)
	releasePairs(x, &s.undeliv)
	releasePairs(x, &s.qos2ID)
	return f
}

// faultEvents are the events faultScan.step reads.
var faultEvents = eventSet{
	kinds:    kindBits(Accepted, Acknowledged, Delivered, Crash, Restart, StateLost, Partition, ConnClosed, LivenessStart, Connected),
	sent:     typeBits(PUBREC, CONNECT, DISCONNECT, CONNACK),
	received: typeBits(PUBLISH, CONNACK),
}.codes()

func (s *faultScan) step(f *Faults, i int, e *Event) {
	d := &s.x.ev[i]
	n := &s.nodes[d.node]
	role := n.role
	switch e.Kind {
	case Accepted:
		if e.QoS >= 1 && !s.unacked.get(d.node, d.msg) {
			s.unacked.set(d.node, d.msg, true)
			n.unacked++
		}
	case Acknowledged:
		if s.unacked.get(d.node, d.msg) {
			s.unacked.set(d.node, d.msg, false)
			n.unacked--
		}
	case Received:
		s.received(n, e, d)
	case Sent:
		switch e.Packet.Type {
		case PUBREC:
			if n.window.del(e.Packet.ID) {
				n.windowN--
			}
			n.pubrecSent.add(e.Packet.ID)
		case CONNECT:
			if n.connects {
				s.connLost(f, n) // a reconnect: the last connection ended unseen
			}
			n.connects, n.cleanConn = true, e.Packet.Clean
		case DISCONNECT:
			n.connects = false
		case CONNACK:
			if d.node == brokerID { // the client's session went unless it reads this [MQTT-3.2.2-5]
				c := &s.nodes[d.peer]
				c.spZeroSent = !e.Packet.Sessions && e.Packet.Reason < 0x80 && !c.cleanConn
			}
		}
	case Delivered:
		s.delivered(n, e, d)
	case Crash:
		s.crash(f, i, e, n)
	case Restart:
		if role&RolePublisher != 0 {
			f.PublisherRestarts++
		}
	case StateLost:
		f.StateLosses++
		if role&RoleSubscriber != 0 {
			f.SubscriberStateLosses++
		}
	case Partition:
		f.Partitions++
	case ConnClosed:
		if n.connects {
			s.connLost(f, n)
		}
		n.connects = false
		if d.node != brokerID {
			s.sessionLostUnread(f, n)
		}
	case LivenessStart:
		f.LivenessRan = true
	case Connected:
		n.spZero, n.spZeroSent = false, false
	}
}

// sessionLostUnread: client n crashed or lost its connection holding
// unacknowledged messages before it read the Session Present 0 the broker
// sent it (the session it had expired, or was never accepted:
// [MQTT-4.1.0-2] [MQTT-3.2.2-5]). It never learns its session went: its
// next CONNECT may find the session that CONNACK started (Session Present
// 1), and its resent QoS 2 PUBLISH is a new message there.
func (s *faultScan) sessionLostUnread(f *Faults, n *nodeFaults) {
	if n.spZeroSent && n.unacked > 0 {
		f.SessionLostCrashes++
	}
	n.spZeroSent = false
}

// connLost counts the end of a connection of node n.
func (s *faultScan) connLost(f *Faults, n *nodeFaults) {
	f.ConnLosses++
	if n.role&RoleSubscriber != 0 {
		f.SubscriberConnLosses++
	}
	if n.role&RolePublisher != 0 && n.unacked > 0 {
		f.PublisherConnLosses++
	}
}

func (s *faultScan) received(n *nodeFaults, e *Event, d *evIDs) {
	p := &e.Packet
	if p.Type == CONNACK {
		// [MQTT-3.2.2-5] the session went; the client learns it when it acts on this CONNACK
		n.spZero = d.node != brokerID && !p.Sessions && p.Reason < 0x80 && !n.cleanConn
		n.spZeroSent = false
		return
	}
	if p.Type != PUBLISH || p.QoS == 0 || p.Msg == "" {
		return
	}
	if s.undeliv.get(d.node, d.msg) != n.undelivGen {
		s.undeliv.set(d.node, d.msg, n.undelivGen)
		n.undeliv++
	}
	if p.QoS == 2 {
		s.qos2ID.set(d.node, d.msg, int32(p.ID)+1)
		n.pubrecSent.del(p.ID)
	}
}

func (s *faultScan) delivered(n *nodeFaults, e *Event, d *evIDs) {
	if s.undeliv.get(d.node, d.msg) == n.undelivGen {
		s.undeliv.set(d.node, d.msg, 0)
		n.undeliv--
	}
	if e.QoS != 2 {
		return
	}
	id := s.qos2ID.get(d.node, d.msg)
	if id != 0 && !n.pubrecSent.has(uint16(id-1)) && n.window.add(uint16(id-1)) {
		n.windowN++
	}
}

func (s *faultScan) crash(f *Faults, i int, e *Event, n *nodeFaults) {
	role := n.role
	f.Crashes = append(f.Crashes, CrashFault{Step: i, Node: e.Node, Role: role, Point: e.Point})
	if n.spZero && n.unacked > 0 {
		f.SessionLostCrashes++
	} else {
		s.sessionLostUnread(f, n)
	}
	n.spZero, n.spZeroSent = false, false
	switch e.Point {
	case CrashInCallbackPre:
		f.CallbackPreCrashes++
	case CrashInCallbackPost:
		f.CallbackPostCrashes++
	}
	if role&RoleBroker != 0 {
		// A clean stop loses only what the broker keeps in memory: after
		// its Shutdown snapshot that is everything only without persistence
		// (Promises reads BrokerStops with the policy).
		if e.Point == CrashStop {
			f.BrokerStops++
		} else {
			f.BrokerCrashes++
		}
	}
	if role&RolePublisher != 0 {
		f.PublisherCrashes++
		if n.unacked > 0 {
			f.PublisherCrashesUnacked++
		}
	}
	if role&RoleSubscriber != 0 {
		f.SubscriberCrashes++
		if n.undeliv > 0 {
			f.SubscriberMidDelivery++
		}
	}
	if n.windowN > 0 {
		f.QoS2WindowCrashes++
	}
	// A crash ends every in-progress delivery and window of the node, and
	// its connection (counted as lost only through ConnClosed).
	n.undelivGen++
	n.undeliv = 0
	n.window.reset()
	n.windowN = 0
	n.connects = false
}
