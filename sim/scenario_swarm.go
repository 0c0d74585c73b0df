package sim

import (
	"slices"
	"strconv"

	"github.com/mqttlab/mqttlab/engine"
)

// SwarmScenario is the scenario whose workload is drawn from the seed
// within the pins of Config.Workload.
const SwarmScenario = "swarm"

// swarmTopics are the topics the swarm's publishers publish to; the
// filters add wildcards that match some of them.
var (
	swarmTopics    = []string{"t/a", "t/b", "t/c/x", "t/c/y", "u/a"}
	swarmWildcards = []string{"t/#", "t/+", "t/c/+", "+/a", "#", "t/c/#"}
	// swarmGroupFilters are the filters of the first shared subscription;
	// the second one's, u/a, overlaps none of them (the model counts the
	// copies of the groups of one member as duplicates).
	swarmGroupFilters = []string{"t/#", "t/+", "t/a", "t/c/+"}
	// swarmIDFilters are the extra overlapping filters of the subids
	// dimension.
	swarmIDFilters = []string{"t/#", "#", "t/+"}
)

// swarmGen is the state of one swarm plan's generation: the drawn
// dimensions and the clients.
type swarmGen struct {
	*planGen
	// The on/off dimensions, drawn once per seed.
	wildcards, overlap, downgrade, unsub, subOpts, retained, clear, wills,
	disconnects, msgExpiry, windows, keepAlive, payload bool
	// The later dimensions (drawn from planGen.feat, see swarm_shared.go).
	shared, subIDs bool
	// wrap: packet-id counters start near 65535 (drawn from
	// planGen.wrapR); longWrap: 65,600 messages wrap them (pinned only).
	wrap, longWrap bool
	// exhaust: a publisher's burst holds every packet id (swarm_exhaust.go)
	// at message step exhaustStep.
	exhaust, exhaustDone bool
	exhaustStep          int
	// aliases, dollar: swarm_more.go; aliasesOut is the broker's
	// TopicAliasesOut when aliases is on.
	aliases, dollar bool
	aliasesOut      uint16
	// brokerMax: the broker's Maximum Packet Size, 0 for the default
	// (swarm_brokermax.go).
	brokerMax uint32
	// queue and queueFull are the broker's queue bound and policy when the
	// queue dimension is on (0: off), maxKA its max_keepalive when the
	// serverka dimension is on (0: off): swarm_options.go.
	queue     uint32
	queueFull engine.QueueFull
	maxKA     uint16
	// access: the broker's ACL is on (swarm_access.go).
	access bool
	// topics and wildcardList are the topics published to and the
	// wildcard filters (swarmTopics and swarmWildcards, or with dollar on
	// dollarTopics and dollarWildcards).
	topics, wildcardList []string
	pubs, subs           []*swarmClient
	members              []*swarmClient // the shared subscriptions' members
	idle                 []*swarmClient
	msgCount             int
	away                 []swarmAway // disconnected clients and the step they return
	subEvents            []swarmSubEvent
}

// swarmClient is one active client of a swarm plan.
type swarmClient struct {
	name    string
	cfg     *NodeConfig
	version uint8
	sent    int // messages published so far
	away    bool
	lastID  uint32 // the last Subscription Identifier it used
	groups  []Op   // a member's subscriptions to its groups
}

// swarmAway is a disconnected client and the message step it reconnects
// at, with a clean start when clean.
type swarmAway struct {
	c     *swarmClient
	step  int
	clean bool
}

// swarmSubEvent is a subscription change due at a message step.
type swarmSubEvent struct {
	step int
	op   Op
}

// genSwarm draws a workload (see Workload for the dimensions) and plays it:
// declare and connect every client, subscribe, publish with the drawn
// options while subscriptions change and clients come and go.
func genSwarm(g *planGen) {
	s := &swarmGen{planGen: g}
	s.drawDims()
	s.declare()
	s.subscribeAll()
	g.advance(200 * ms)
	s.publishAll()
	s.returnAll()
	g.advance(2 * engine.Second)
}

// drawDims draws (or takes the pins of) the per-seed dimensions.
func (s *swarmGen) drawDims() {
	r, wl := s.r, s.wl
	nPubs := wl.value(dimPubs, func() int { return 1 + r.IntN(8) })
	nSubs := wl.value(dimSubs, func() int { return 1 + r.IntN(8) })
	nIdle := wl.value(dimIdle, func() int {
		if r.Chance(1, 8) {
			return 100 + r.IntN(301)
		}
		return 0
	})
	s.msgCount = wl.value(dimMsgs, func() int { return 20 + r.IntN(131) })
	for _, d := range []struct {
		dim dim
		on  *bool
		num int
		den int
	}{
		{dimWildcards, &s.wildcards, 1, 2}, {dimOverlap, &s.overlap, 1, 2}, {dimDowngrade, &s.downgrade, 1, 2},
		{dimUnsub, &s.unsub, 1, 2}, {dimSubOptions, &s.subOpts, 1, 2}, {dimRetained, &s.retained, 1, 2},
		{dimClear, &s.clear, 1, 2}, {dimWills, &s.wills, 1, 2}, {dimDisconnects, &s.disconnects, 1, 2},
		{dimMsgExpiry, &s.msgExpiry, 1, 2}, {dimWindows, &s.windows, 1, 2}, {dimKeepAlive, &s.keepAlive, 1, 2},
		{dimPayload, &s.payload, 1, 2},
	} {
		*d.on = wl.on(d.dim, r, d.num, d.den)
	}
	s.drawBrokerMax()
	s.access = s.wl.on(dimAccess, s.accR, 1, accessDen)
	s.drawWrap()
	s.drawExhaust()
	if s.longWrap {
		// 65,600 messages through windows of 1-4 would outlast the
		// liveness bound: a wrapping seed keeps the default windows.
		s.windows = false
	}
	for i := range nPubs {
		s.pubs = append(s.pubs, s.client("p"+strconv.Itoa(i+1), false))
	}
	for i := range nSubs {
		s.subs = append(s.subs, s.client("s"+strconv.Itoa(i+1), true))
	}
	for _, c := range append(append([]*swarmClient{}, s.pubs...), s.subs...) {
		s.clients = append(s.clients, c.name)
	}
	for _, c := range s.subs {
		s.planGen.subs = append(s.planGen.subs, c.name)
	}
	for i := range nIdle {
		v := uint8(s.wl.value(dimVersion, func() int { return 4 + b2i(r.Chance(2, 3)) }))
		s.idle = append(s.idle, &swarmClient{name: "i" + strconv.Itoa(i+1), version: v, cfg: &NodeConfig{Version: v}})
	}
	s.drawLater()
	s.topics, s.wildcardList = swarmTopics, swarmWildcards
	s.drawMore()
	s.drawOptions()
}

// client draws one active client's config.
func (s *swarmGen) client(name string, sub bool) *swarmClient {
	r := s.r
	c := &swarmClient{name: name, cfg: &NodeConfig{}}
	c.version = uint8(s.wl.value(dimVersion, func() int { return 4 + b2i(r.Chance(2, 3)) }))
	c.cfg.Version = c.version
	// A drawn publisher's session is persistent or clean: a publisher whose
	// session expires mid-flow sends its unreleased QoS 2 messages again as
	// new ones (the broker forgot them), which the model does not yet
	// tell from a duplicate. Pin session=expiry to give publishers one too.
	kinds := []int{0, 0, 0, 1, 2}
	if !sub {
		kinds = kinds[:4]
	}
	switch s.wl.value(dimSession, func() int { return Pick(r, kinds) }) {
	case 1: // clean
		c.cfg.Clean = true
		if c.version == 5 {
			c.cfg.HasExpiry = true // expiry 0: the session ends with the connection
		}
	case 2: // a finite v5 Session Expiry
		if c.version == 5 {
			c.cfg.HasExpiry, c.cfg.Expiry = true, uint32(1+r.IntN(8))
		}
	}
	if s.windows {
		if c.version == 5 {
			c.cfg.ReceiveMax = uint16(1 + r.IntN(4))
		} else {
			c.cfg.Window = uint16(1 + r.IntN(4))
		}
	}
	if s.keepAlive {
		c.cfg.KeepAlive = uint16(1 + r.IntN(3))
	}
	if s.payload && sub && c.version == 5 {
		c.cfg.MaxSize = uint32(256 + r.IntN(1793))
	}
	if s.wills && r.Chance(1, 2) {
		w := &WillConfig{Topic: "w/" + name, QoS: uint8(r.IntN(3)), Retain: s.retained && r.Chance(1, 3)}
		if c.version == 5 && r.Chance(1, 2) {
			w.Delay = uint32(1 + r.IntN(5))
		}
		c.cfg.Will = w
	}
	return c
}

// declare adds the node ops (the broker's windows first) and connects
// every client; idle clients (persistent sessions, one subscription each,
// then silent) come after the active ones.
func (s *swarmGen) declare() {
	r := s.r
	var bc *NodeConfig
	switch {
	case s.windows:
		bc = &NodeConfig{ReceiveMax: uint16(1 + r.IntN(4)), Window: uint16(1 + r.IntN(4))}
	case s.longWrap:
		// A subscriber offline for a while must not meet a full queue:
		// the model does not judge what the broker drops then.
		bc = &NodeConfig{Queue: 2 * wrapCount}
	}
	if s.wrap {
		if bc == nil {
			bc = &NodeConfig{}
		}
		bc.StartID = s.startID()
	}
	if s.shared || s.subIDs {
		if bc == nil {
			bc = &NodeConfig{}
		}
		bc.Shared, bc.SubIDs = s.shared, s.subIDs
	}
	if s.aliases {
		if bc == nil {
			bc = &NodeConfig{}
		}
		bc.Aliases = s.aliasesOut
	}
	if s.brokerMax != 0 {
		if bc == nil {
			bc = &NodeConfig{}
		}
		bc.MaxSize = s.brokerMax
	}
	if s.queue != 0 || s.maxKA != 0 {
		if bc == nil {
			bc = &NodeConfig{}
		}
		bc.MaxKeepAlive = s.maxKA
		if s.queue != 0 {
			bc.Queue, bc.QueueFull = s.queue, s.queueFull
		}
	}
	all := append(append(s.all(), s.members...), s.idle...)
	if s.access {
		if bc == nil {
			bc = &NodeConfig{}
		}
		bc.ACL = s.drawACL(append(s.all(), s.members...))
	}
	if bc != nil {
		s.add(Op{Kind: OpNode, Node: BrokerName, Cfg: bc})
	}
	s.wrapStarts()
	for _, c := range all {
		s.add(Op{Kind: OpNode, Node: c.name, Cfg: c.cfg})
	}
	for _, c := range all {
		s.add(Op{Kind: OpConnect, Node: c.name, Clean: c.cfg.Clean})
	}
	s.advance(100 * ms)
}

// all returns the active clients: publishers, then subscribers.
func (s *swarmGen) all() []*swarmClient {
	return append(append(make([]*swarmClient, 0, len(s.pubs)+len(s.subs)), s.pubs...), s.subs...)
}

// filter draws a subscription filter.
func (s *swarmGen) filter() string {
	if s.wildcards && s.r.Chance(1, 2) {
		return Pick(s.r, s.wildcardList)
	}
	return Pick(s.r, s.topics)
}

// subOp draws a subscription of client c to filter f.
func (s *swarmGen) subOp(c *swarmClient, f string) Op {
	r := s.r
	op := Op{Kind: OpSubscribe, Node: c.name, Topic: f, QoS: 2}
	if s.downgrade {
		op.QoS = uint8(r.IntN(3))
	}
	if s.subOpts && c.version == 5 {
		if r.Chance(1, 2) {
			op.Flags |= FlagRAP
		}
		op.RH = uint8(r.IntN(3))
	}
	s.withSubID(c, &op)
	return op
}

// subscribeAll subscribes every subscriber (some late, some with an
// unsubscribe and a resubscribe to come), publishers with No Local, and
// will watchers.
func (s *swarmGen) subscribeAll() {
	r := s.r
	for _, c := range s.idle {
		s.add(Op{Kind: OpSubscribe, Node: c.name, Topic: "idle/" + c.name, QoS: 1})
	}
	for _, c := range s.subs {
		n := 1 + r.IntN(2)
		if s.overlap {
			n++
		}
		var filters []string
		for range n {
			if f := s.filter(); !slices.Contains(filters, f) {
				filters = append(filters, f)
			}
		}
		if s.overlap && !slices.Contains(filters, "t/#") {
			filters = append(filters, "t/#") // overlaps every t/ filter drawn
		}
		filters = s.idFilter(c, filters)
		if s.wills {
			filters = append(filters, "w/#")
		}
		if s.longWrap && c == s.subs[0] {
			filters = append(filters, "wrap/#")
		}
		for _, f := range filters {
			op := s.subOp(c, f)
			step := 0
			if s.retained && r.Chance(1, 4) {
				step = 1 + r.IntN(s.msgCount) // a subscriber arriving after retained messages
			}
			s.subAt(step, op)
			if s.unsub && r.Chance(1, 3) {
				u := step + 1 + r.IntN(s.msgCount)
				s.subAt(u, Op{Kind: OpUnsubscribe, Node: c.name, Topic: f})
				s.subAt(u+1+r.IntN(10), s.subOp(c, f))
			}
		}
	}
	if s.subOpts {
		for _, c := range s.pubs {
			if c.version == 5 && r.Chance(1, 2) {
				op := s.subOp(c, "t/#")
				op.Flags |= FlagNoLocal
				s.subAt(0, op)
			}
		}
	}
	s.joinGroups()
	s.subEventsDue(0)
}

// subAt schedules a subscription op at message step step (0: now).
func (s *swarmGen) subAt(step int, op Op) {
	s.subEvents = append(s.subEvents, swarmSubEvent{step: step, op: op})
}

// subEventsDue emits the subscription ops due by step, in schedule order.
func (s *swarmGen) subEventsDue(step int) {
	keep := s.subEvents[:0]
	for _, e := range s.subEvents {
		if e.step <= step {
			s.add(e.op)
		} else {
			keep = append(keep, e)
		}
	}
	s.subEvents = keep
}

// publishAll publishes the messages, one step each: subscription changes
// due, returns due, then the publish, maybe a disconnect or an idle gap,
// the pause, and the step's faults.
func (s *swarmGen) publishAll() {
	r := s.r
	for i := 1; i <= s.msgCount; i++ {
		s.subEventsDue(i)
		s.returnDue(i)
		s.add(s.publishOp(Pick(r, s.pubs)))
		s.burstDue(i)
		if s.disconnects && r.Chance(1, 25) {
			s.disconnect(i)
		}
		s.memberLeaves(i)
		if s.keepAlive && r.Chance(1, 40) {
			s.advance(r.Between(2*engine.Second, 8*engine.Second)) // idle longer than a keep-alive
		}
		s.advance(r.Between(int64(ms), int64(50*ms)))
		s.tick()
	}
	s.subEventsDue(1 << 30)
	if s.longWrap {
		s.wrapIDs()
	}
}

// publishOp draws the next message of publisher c.
func (s *swarmGen) publishOp(c *swarmClient) Op {
	r := s.r
	c.sent++
	op := Op{Kind: OpPublish, Node: c.name, Topic: Pick(r, s.topics), QoS: uint8(r.IntN(3)),
		Msg: c.name + "-" + strconv.Itoa(c.sent)}
	if s.retained && r.Chance(1, 4) {
		op.Retain = true
		if s.clear && r.Chance(1, 3) {
			op.QoS, op.Flags = 1, FlagEmpty
		}
	}
	if s.msgExpiry && c.version == 5 && r.Chance(1, 3) {
		op.D = engine.Duration(1+r.IntN(4)) * engine.Second
	}
	if s.payload && op.Flags&FlagEmpty == 0 && r.Chance(1, 3) {
		op.Pad = uint16(Pick(r, []int{r.IntN(64), 200 + r.IntN(400), 1000 + r.IntN(3000)}))
		s.fitBrokerMax(c, &op)
	}
	return op
}

// disconnect takes an active client away, normally or abnormally, for a
// while that may outlast its Session Expiry or Will Delay.
func (s *swarmGen) disconnect(step int) {
	r := s.r
	c := Pick(r, s.all())
	if c.away || s.down[c.name] {
		return
	}
	c.away = true
	op := Op{Kind: OpDisconnect, Node: c.name}
	if r.Chance(1, 2) {
		op.Flags = FlagAbnormal
	} else if c.version == 5 {
		op.Reason = s.disconnectReason()
	}
	s.add(op)
	if r.Chance(1, 3) {
		s.advance(r.Between(500*ms, 10*engine.Second)) // an outage
	}
	s.away = append(s.away, swarmAway{c: c, step: step + 1 + r.IntN(20)})
}

// disconnectReasons are the error reason codes a client's DISCONNECT may
// carry (MQTT 5.0 §3.14.2.1).
var disconnectReasons = []uint8{0x80, 0x81, 0x82, 0x83, 0x93, 0x98}

// disconnectReason draws a v5 client's normal DISCONNECT reason: 0x00,
// 0x04 Disconnect with Will Message or an error, a third each. Only 0x00
// removes the will [MQTT-3.14.4-3] [MQTT-3.1.2-10]. It draws from the later
// dimensions' stream (swarm_shared.go), so the rest of the plan is the one
// the seed drew before reasons were drawn.
func (s *swarmGen) disconnectReason() uint8 {
	switch s.feat.IntN(3) {
	case 0:
		return 0
	case 1:
		return 0x04
	}
	return Pick(s.feat, disconnectReasons)
}

// returnDue reconnects the clients due back by step.
func (s *swarmGen) returnDue(step int) {
	keep := s.away[:0]
	for _, a := range s.away {
		if a.step <= step {
			a.c.away = false
			s.add(Op{Kind: OpConnect, Node: a.c.name, Clean: a.c.cfg.Clean || a.clean})
			if a.clean {
				s.rejoin(a.c)
			}
		} else {
			keep = append(keep, a)
		}
	}
	s.away = keep
}

// returnAll reconnects every client still away.
func (s *swarmGen) returnAll() { s.returnDue(1 << 30) }
