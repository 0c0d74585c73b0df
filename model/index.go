package model

import (
	"slices"
	"strings"
)

// index is what several checks read of every event, computed once per
// Check: node and message names replaced by small dense ids, so the checks
// keep their state in slices and int-keyed tables instead of maps keyed by
// strings. The empty string is a name like any other (ids are exact
// stand-ins for the strings they replace).
type index struct {
	h     *History // the history the checks read: orig, or its copy with Topic Aliases resolved (resolveAliases)
	orig  *History // the history as recorded
	nodes []string // node id -> name; brokerID is BrokerNode, emptyID ""
	msgs  []string // msg id -> message id; 0 is ""
	ev    []evIDs  // per event
	kinds []evKind // per event: what a pass reads to skip the events it ignores
	roles []Role   // node id -> role (see Roles)
	maxID []uint16 // node id -> the largest id of a flight it opened (Sent QoS>0 PUBLISH, SUBSCRIBE, UNSUBSCRIBE)

	topics []string // topic id -> topic of an Accepted event
	accs   []accRef // the Accepted events, in order

	nodeMap   map[string]int32 // used once nodes outgrow a linear scan
	nodeCache [nodeSlots]int32 // recent node ids by nodeSlot of their names
	msgIDs    strIDs           // msg id -> its id in msgs
	topicMap  map[string]int32
	lastMsg   int32 // the id msgID returned last (consecutive events often share it)

	liveness   int     // the first LivenessStart, or -1
	cutoff     bool    // the history has a Cutoff event (it ends unfinished)
	slack      int64   // Options.Slack of the check running (ns)
	noDedup    []int32 // Options.NoDedup of the check running, as node ids
	connClosed bool    // the history records a ConnClosed event
	dropped    bool    // the history records a Dropped event
	acl        bool    // the history records an ACL event
	access     *aclTab // the declared access control (accessTab), once built

	limits BrokerLimits // Options.Limits of the check running
	drops  *dropJudge   // the Dropped events judged under limits (built once per check, by the first pass that asks)

	sparse bool     // tables use their map form whatever their size (tests)
	sc     *scratch // memory the checks of one call share, or nil (see withScratch)
	pooled bool     // the per-event and per-message buffers are sc's, given back with it (borrowIndex)
}

// accRef is one Accepted event: its step and its topic's id.
type accRef struct{ step, topic int32 }

// evKind is an event's Kind and, for Sent and Received, its packet's Type
// (else 0). Passes that look at a few kinds scan these three bytes per
// event and read only the events they want, not the whole history.
type evKind struct {
	kind Kind
	typ  uint8
	code uint8 // kind and typ in one byte (codeOf), what eventCodes test
}

// Event codes (codeOf): kinds below 64 are their own code, a Sent or
// Received packet of a type below 64 is sentCodes or receivedCodes plus its
// type; a Sent of a larger type is sentOther, anything else noCode.
const (
	sentCodes     = 64
	receivedCodes = 128
	sentOther     = 254
	noCode        = 255
)

// codeOf is the code of an event of kind k whose packet has type typ.
func codeOf(k Kind, typ uint8) uint8 {
	switch {
	case k == Sent && typ < 64:
		return sentCodes + typ
	case k == Sent:
		return sentOther
	case k == Received && typ < 64:
		return receivedCodes + typ
	case k == Received || k >= 64:
		return noCode
	}
	return uint8(k)
}

// evIDs are an event's names as ids.
type evIDs struct {
	node int32 // Node
	peer int32 // Peer as recorded (possibly emptyID)
	msg  int32 // Msg of Accepted, Acknowledged, Delivered, Dropped, Refused; Packet.Msg of Sent, Received; else 0
}

// Reserved node ids.
const (
	brokerID int32 = 0
	emptyID  int32 = 1
)

// maxScanNodes is how many node names are looked up by a linear scan before
// the index switches to a map.
const maxScanNodes = 16

// newIndex indexes h.
func newIndex(h *History) *index { return newIndexOf(h, false) }

// newIndexOf indexes h; sparse puts every table in its map form (the form
// large histories use), so tests can compare both forms.
func newIndexOf(h *History, sparse bool) *index { return newIndexIn(h, sparse, nil) }

// newIndexIn indexes h into the buffers of sc when it has them (see
// borrowIndex), else into new ones.
func newIndexIn(h *History, sparse bool, sc *scratch) *index {
	x := &index{
		h: h, orig: h, nodes: []string{BrokerNode, ""}, roles: []Role{RoleBroker, 0}, maxID: []uint16{0, 0},
		liveness: -1, topicMap: map[string]int32{}, sparse: sparse,
	}
	if sc != nil {
		x.ev, x.kinds = reuse(&sc.ev, len(h.Events)), reuse(&sc.kinds, len(h.Events))
	} else {
		x.ev, x.kinds = make([]evIDs, len(h.Events)), make([]evKind, len(h.Events))
	}
	// A message takes some 12 to 16 events (accepted, sent and received by both
	// hops, acknowledged, delivered): room for that many ids at first.
	msgs := len(h.Events)/12 + 1
	if sc == nil {
		sc = new(scratch) // an empty one: every buffer is new
	}
	x.msgs, x.msgIDs = reuse(&sc.names, msgs)[:0], newStrIDs(msgs, &sc.slots)
	x.msgIDs.id(&x.msgs, "") // id 0
	x.accs = reuse(&sc.accs, msgs)[:0]
	if sparse {
		x.nodeMap = map[string]int32{BrokerNode: brokerID, "": emptyID}
	}
	aliased := false // a PUBLISH names its topic by a Topic Alias alone
	for i := range h.Events {
		e := &h.Events[i]
		d := &x.ev[i]
		d.node, d.peer = x.nodeID(e.Node), x.nodeID(e.Peer)
		x.kinds[i] = evKind{kind: e.Kind, code: codeOf(e.Kind, 0)}
		switch e.Kind {
		case Accepted:
			d.msg = x.msgID(e.Msg)
			x.roles[d.node] |= RolePublisher
			x.accs = append(x.accs, accRef{step: int32(i), topic: x.topicID(e.Topic)})
		case Acknowledged:
			d.msg = x.msgID(e.Msg)
		case Delivered:
			d.msg = x.msgID(e.Msg)
			x.roles[d.node] |= RoleSubscriber
		case Dropped:
			d.msg = x.msgID(e.Msg)
			x.dropped = true
		case Refused:
			if e.Msg != "" {
				d.msg = x.msgID(e.Msg)
			}
		case Subscribed:
			x.roles[d.node] |= RoleSubscriber
		case ACL:
			x.acl = true
		case Sent, Received:
			x.kinds[i].typ, x.kinds[i].code = e.Packet.Type, codeOf(e.Kind, e.Packet.Type)
			if e.Packet.Msg != "" {
				d.msg = x.msgID(e.Packet.Msg)
			}
			if e.Kind == Received && d.node != brokerID && e.Packet.Type == PUBLISH {
				x.roles[d.node] |= RoleSubscriber
			}
			if e.Packet.TopicAlias != 0 && e.Packet.Type == PUBLISH && e.Packet.Topic == "" {
				aliased = true
			}
			if e.Kind == Sent && opensFlight(&e.Packet) && e.Packet.ID > x.maxID[d.node] {
				x.maxID[d.node] = e.Packet.ID
			}
		case LivenessStart:
			if x.liveness < 0 {
				x.liveness = i
			}
		case Cutoff:
			x.cutoff = true
		case ConnClosed:
			x.connClosed = true
		}
	}
	if aliased {
		x.h = x.resolveAliases()
	}
	return x
}

// opensFlight reports whether sending p puts its packet id in flight (see
// tracker.sent).
func opensFlight(p *Packet) bool {
	switch p.Type {
	case PUBLISH:
		return p.QoS > 0
	case SUBSCRIBE, UNSUBSCRIBE:
		return true
	}
	return false
}

// nodeSlots is the size of the index's direct-mapped cache of node ids.
const nodeSlots = 32

// nodeSlot is s's slot in that cache: a cheap mix of its length and its
// first and last bytes, which tells apart names like "p1", "p2" and "s1".
func nodeSlot(s string) int {
	if s == "" {
		return 0
	}
	return (len(s)*7 + int(s[0])*3 + int(s[len(s)-1])) & (nodeSlots - 1)
}

// nodeID returns the id of node name s, adding it. Every event names two
// nodes: the cache answers most lookups with one comparison (ids start at
// 0, the broker, which a miss only costs a comparison).
func (x *index) nodeID(s string) int32 {
	slot := nodeSlot(s)
	if id := x.nodeCache[slot]; x.nodes[id] == s {
		return id
	}
	id := x.lookupNode(s)
	x.nodeCache[slot] = id
	return id
}

// lookupNode returns the id of node name s, adding it.
func (x *index) lookupNode(s string) int32 {
	if x.nodeMap == nil {
		for id, n := range x.nodes {
			if n == s {
				return int32(id)
			}
		}
		if len(x.nodes) < maxScanNodes {
			x.nodes, x.roles, x.maxID = append(x.nodes, s), append(x.roles, 0), append(x.maxID, 0)
			return int32(len(x.nodes) - 1)
		}
		x.nodeMap = make(map[string]int32, 2*maxScanNodes)
		for id, n := range x.nodes {
			x.nodeMap[n] = int32(id)
		}
	}
	if id, ok := x.nodeMap[s]; ok {
		return id
	}
	x.nodes, x.roles, x.maxID = append(x.nodes, s), append(x.roles, 0), append(x.maxID, 0)
	x.nodeMap[s] = int32(len(x.nodes) - 1)
	return int32(len(x.nodes) - 1)
}

// topicID returns the id of topic s, adding it.
func (x *index) topicID(s string) int32 {
	if id, ok := x.topicMap[s]; ok {
		return id
	}
	x.topics = append(x.topics, s)
	id := int32(len(x.topics) - 1)
	x.topicMap[s] = id
	return id
}

// msgID returns the id of message id s, adding it.
func (x *index) msgID(s string) int32 {
	if x.msgs[x.lastMsg] == s {
		return x.lastMsg
	}
	id := x.msgIDs.id(&x.msgs, s)
	x.lastMsg = id
	return id
}

// peerOf returns the id of event i's peer, defaulting to the broker for
// client events that leave it empty (Connected).
func (x *index) peerOf(i int) int32 {
	d := &x.ev[i]
	if d.peer != emptyID {
		return d.peer
	}
	if d.node != brokerID {
		return brokerID
	}
	return emptyID
}

// pairs is a table of values keyed by (node id, msg id), the zero value
// when unset: dense while the product of nodes and messages stays within a
// small multiple of the history's length, a map beyond.
type pairs[T comparable] struct {
	width  int32 // number of msg ids
	dense  []T
	sparse map[uint64]T
}

// newPairs returns an empty table for x's nodes and messages.
func newPairs[T comparable](x *index) pairs[T] {
	n, m := len(x.nodes), len(x.msgs)
	if n*m <= 4*len(x.ev)+1024 && !x.sparse {
		return pairs[T]{width: int32(m), dense: takeDense[T](x, n*m)}
	}
	return pairs[T]{width: int32(m), sparse: map[uint64]T{}}
}

func pairKey(node, msg int32) uint64 { return uint64(uint32(node))<<32 | uint64(uint32(msg)) }

// get returns the value of (node, msg), zero if unset.
func (p *pairs[T]) get(node, msg int32) T {
	if p.dense != nil {
		return p.dense[node*p.width+msg]
	}
	return p.sparse[pairKey(node, msg)]
}

// set sets the value of (node, msg); zero unsets it.
func (p *pairs[T]) set(node, msg int32, v T) {
	if p.dense != nil {
		p.dense[node*p.width+msg] = v
		return
	}
	var zero T
	if v == zero {
		delete(p.sparse, pairKey(node, msg))
		return
	}
	p.sparse[pairKey(node, msg)] = v
}

// maxDenseDirs bounds the dense form of a dirTab (nodes × nodes entries).
const maxDenseDirs = 1 << 12

// dirTab holds one T per direction (from, to) of node ids: a dense matrix
// for the few nodes of a usual history, a map beyond.
type dirTab[T any] struct {
	n      int32
	dense  []T
	sparse map[uint64]*T
	rows   map[int32][]int32 // sparse form: from -> tos, in creation order
}

// newDirTab returns an empty table for x's nodes.
func newDirTab[T any](x *index) dirTab[T] {
	n := int32(len(x.nodes))
	if int(n)*int(n) <= maxDenseDirs && !x.sparse {
		return dirTab[T]{n: n, dense: make([]T, n*n)}
	}
	return dirTab[T]{n: n, sparse: map[uint64]*T{}, rows: map[int32][]int32{}}
}

// at returns the entry of from->to, creating it (zero) if needed.
func (t *dirTab[T]) at(from, to int32) *T {
	if t.dense != nil {
		return &t.dense[from*t.n+to]
	}
	k := pairKey(from, to)
	if v := t.sparse[k]; v != nil {
		return v
	}
	v := new(T)
	t.sparse[k] = v
	t.rows[from] = append(t.rows[from], to)
	return v
}

// row calls f on every entry from->to of from (in the dense form, for every
// node to, whether it was used or not).
func (t *dirTab[T]) row(from int32, f func(to int32, v *T)) {
	if t.dense != nil {
		for to := range t.n {
			f(to, &t.dense[from*t.n+to])
		}
		return
	}
	for _, to := range t.rows[from] {
		f(to, t.sparse[pairKey(from, to)])
	}
}

// each calls f on every entry, by from then to (dense) or creation order.
func (t *dirTab[T]) each(f func(from, to int32, v *T)) {
	for from := range t.n {
		t.row(from, func(to int32, v *T) { f(from, to, v) })
	}
}

// byName returns the node ids in ascending order of their names.
func (x *index) byName() []int32 {
	ids := make([]int32, len(x.nodes))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(x.nodes[a], x.nodes[b]) })
	return ids
}

// eventSet is a set of events by kind and, for Sent and Received, packet
// type: what a pass over the history reads. Compiled (codes), it lets a
// pass skip the events outside it on x.kinds alone, without reading them.
type eventSet struct {
	kinds          uint32 // 1 << Kind, for kinds other than Sent and Received
	sent, received uint32 // 1 << Packet.Type
	allSent        bool   // every Sent event, whatever its packet type
}

// kindBits and typeBits build the masks of an eventSet.
func kindBits(ks ...Kind) uint32 {
	var m uint32
	for _, k := range ks {
		m |= 1 << k
	}
	return m
}

func typeBits(ts ...uint8) uint32 {
	var m uint32
	for _, t := range ts {
		m |= 1 << t
	}
	return m
}

// has reports whether the event of k is in s (a kind or type beyond the
// masks never is).
func (s *eventSet) has(k evKind) bool {
	switch k.kind {
	case Sent:
		return s.allSent || s.sent&(1<<k.typ) != 0
	case Received:
		return s.received&(1<<k.typ) != 0
	}
	return s.kinds&(1<<k.kind) != 0
}

// eventCodes is an eventSet as a bit set of event codes: one bit test per
// event.
type eventCodes [4]uint64

// codes compiles s: each code stands for events that s takes or leaves
// alike (TestEventCodes).
func (s eventSet) codes() eventCodes {
	var c eventCodes
	for code := range 256 {
		var k evKind
		switch {
		case code == noCode:
			continue
		case code == sentOther:
			k = evKind{kind: Sent, typ: 200}
		case code >= receivedCodes:
			k = evKind{kind: Received, typ: uint8(code - receivedCodes)}
		case code >= sentCodes:
			k = evKind{kind: Sent, typ: uint8(code - sentCodes)}
		default:
			k = evKind{kind: Kind(code)}
		}
		if s.has(k) {
			c[code>>6] |= 1 << (code & 63)
		}
	}
	return c
}

// has reports whether the event of k is in the set.
func (c *eventCodes) has(k evKind) bool { return c[k.code>>6]&(1<<(k.code&63)) != 0 }
