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

// faultScan is the per-node state FaultsOf keeps while scanning.
type faultScan struct {
	roles      map[string]Role
	unacked    map[string]map[string]bool   // publisher -> accepted, unacknowledged msgs
	undeliv    map[string]map[string]bool   // node -> received PUBLISH msgs not yet delivered
	qos2ID     map[string]map[string]uint16 // node -> msg -> id of its last received QoS2 PUBLISH
	pubrecSent map[string]map[uint16]bool   // node -> id -> PUBREC sent since that PUBLISH
	window     map[string]map[uint16]bool   // node -> ids delivered, PUBREC not yet sent
	connects   map[string]bool              // node -> sent a CONNECT whose connection has not been seen to end
}

// FaultsOf derives the faults of a history. A lost connection is a client's
// ConnClosed after its CONNECT (without a DISCONNECT it sent first), a
// client's CONNECT while its previous connection was never seen to end
// (the broker's side of a connection is not counted again). A crash ends the node's connection without counting as
// a connection loss of its own. A clean stop (Crash at CrashStop) counts as
// a crash of a client, whose memory it loses; the broker's stops are
// counted apart, in BrokerStops.
func FaultsOf(h History) Faults {
	s := faultScan{
		roles:      Roles(h),
		unacked:    map[string]map[string]bool{},
		undeliv:    map[string]map[string]bool{},
		qos2ID:     map[string]map[string]uint16{},
		pubrecSent: map[string]map[uint16]bool{},
		window:     map[string]map[uint16]bool{},
		connects:   map[string]bool{},
	}
	var f Faults
	for i := range h.Events {
		s.step(&f, i, &h.Events[i])
	}
	return f
}

func (s *faultScan) step(f *Faults, i int, e *Event) {
	role := s.roles[e.Node]
	switch e.Kind {
	case Accepted:
		if e.QoS >= 1 {
			inner(s.unacked, e.Node)[e.Msg] = true
		}
	case Acknowledged:
		delete(s.unacked[e.Node], e.Msg)
	case Received:
		s.received(e)
	case Sent:
		switch e.Packet.Type {
		case PUBREC:
			delete(s.window[e.Node], e.Packet.ID)
			innerID(s.pubrecSent, e.Node)[e.Packet.ID] = true
		case CONNECT:
			if s.connects[e.Node] {
				s.connLost(f, e.Node, role) // a reconnect: the last connection ended unseen
			}
			s.connects[e.Node] = true
		case DISCONNECT:
			delete(s.connects, e.Node)
		}
	case Delivered:
		s.delivered(e)
	case Crash:
		s.crash(f, i, e, role)
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
		if s.connects[e.Node] {
			s.connLost(f, e.Node, role)
		}
		delete(s.connects, e.Node)
	case LivenessStart:
		f.LivenessRan = true
	}
}

// connLost counts the end of a connection of node.
func (s *faultScan) connLost(f *Faults, node string, role Role) {
	f.ConnLosses++
	if role&RoleSubscriber != 0 {
		f.SubscriberConnLosses++
	}
	if role&RolePublisher != 0 && len(s.unacked[node]) > 0 {
		f.PublisherConnLosses++
	}
}

func (s *faultScan) received(e *Event) {
	p := &e.Packet
	if p.Type != PUBLISH || p.QoS == 0 || p.Msg == "" {
		return
	}
	inner(s.undeliv, e.Node)[p.Msg] = true
	if p.QoS == 2 {
		m, ok := s.qos2ID[e.Node]
		if !ok {
			m = map[string]uint16{}
			s.qos2ID[e.Node] = m
		}
		m[p.Msg] = p.ID
		delete(s.pubrecSent[e.Node], p.ID)
	}
}

func (s *faultScan) delivered(e *Event) {
	delete(s.undeliv[e.Node], e.Msg)
	if e.QoS != 2 {
		return
	}
	id, ok := s.qos2ID[e.Node][e.Msg]
	if ok && !s.pubrecSent[e.Node][id] {
		innerID(s.window, e.Node)[id] = true
	}
}

func (s *faultScan) crash(f *Faults, i int, e *Event, role Role) {
	f.Crashes = append(f.Crashes, CrashFault{Step: i, Node: e.Node, Role: role, Point: e.Point})
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
		if len(s.unacked[e.Node]) > 0 {
			f.PublisherCrashesUnacked++
		}
	}
	if role&RoleSubscriber != 0 {
		f.SubscriberCrashes++
		if len(s.undeliv[e.Node]) > 0 {
			f.SubscriberMidDelivery++
		}
	}
	if len(s.window[e.Node]) > 0 {
		f.QoS2WindowCrashes++
	}
	// A crash ends every in-progress delivery and window of the node, and
	// its connection (counted as lost only through ConnClosed).
	delete(s.undeliv, e.Node)
	delete(s.window, e.Node)
	delete(s.connects, e.Node)
}

// inner returns m[k], creating it if needed.
func inner(m map[string]map[string]bool, k string) map[string]bool {
	v, ok := m[k]
	if !ok {
		v = map[string]bool{}
		m[k] = v
	}
	return v
}

// innerID returns m[k], creating it if needed.
func innerID(m map[string]map[uint16]bool, k string) map[uint16]bool {
	v, ok := m[k]
	if !ok {
		v = map[uint16]bool{}
		m[k] = v
	}
	return v
}
