package seqchart

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/mqttlab/mqttlab/model"
)

// chart is what the page's script draws, built from a Run (JSON keys are
// short: a long run has thousands of packets).
type chart struct {
	Title      string      `json:"title"`
	Replay     string      `json:"replay,omitempty"`
	Plan       string      `json:"plan,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
	Nodes      []string    `json:"nodes"`
	Events     int         `json:"events"`
	Times      []int64     `json:"tm"` // every event's time, by index
	End        int64       `json:"end"`
	Packets    []packet    `json:"packets"`
	Marks      []mark      `json:"marks"`
	Spans      []span      `json:"spans"`
	Violations []violation `json:"violations"`
	Msgs       []string    `json:"msgs"`
}

// packet is one packet on the wire: an arrow from its Sent to its Received
// event, or to a cross where it was lost.
type packet struct {
	From  int    `json:"f"`
	To    int    `json:"t"`
	Sent  int    `json:"s"`  // index of the Sent event (-1: only the receive was recorded)
	Recv  int    `json:"r"`  // index of the Received event (-1: lost)
	ST    int64  `json:"st"` // send time
	RT    int64  `json:"rt"` // receive time, or where a lost packet's cross is drawn
	Type  string `json:"ty"`
	ID    uint16 `json:"id,omitempty"`
	QoS   uint8  `json:"q,omitempty"`
	Dup   bool   `json:"d,omitempty"`
	Rc    uint8  `json:"rc,omitempty"`
	SP    bool   `json:"sp,omitempty"` // CONNACK Session Present / CONNECT Clean Start
	Topic string `json:"tp,omitempty"`
	Msg   string `json:"m,omitempty"` // the message whose story it is part of (acks too)
	Lost  string `json:"lost,omitempty"`
}

// mark is one point event on a node's lane (or across the chart when Node
// is -1).
type mark struct {
	Node   int    `json:"n"`
	T      int64  `json:"t"`
	I      int    `json:"i"`
	Kind   string `json:"k"`
	Label  string `json:"l"`
	Detail string `json:"dt,omitempty"`
	Msg    string `json:"m,omitempty"`
}

// span is an interval: a connection's lifetime, a node down, a
// partition, the liveness phase.
type span struct {
	Kind  string `json:"k"`
	Node  int    `json:"n"`
	Peer  int    `json:"p"`
	From  int64  `json:"a"`
	To    int64  `json:"b"`
	I     int    `json:"i"` // event that opened it
	J     int    `json:"j"` // event that closed it, -1 if the history ended first
	Label string `json:"l,omitempty"`
}

// violation is a model violation with the events it cites described.
type violation struct {
	Invariant string  `json:"inv"`
	Step      int     `json:"step"`
	Node      string  `json:"node"`
	Reason    string  `json:"reason"`
	Explained string  `json:"explained,omitempty"` // the earlier violation it follows from
	Cited     []cited `json:"cited"`
}

// cited is one event a violation rests on.
type cited struct {
	I    int    `json:"i"`
	T    int64  `json:"t"`
	Node int    `json:"n"`
	Text string `json:"x"`
}

// builder turns a history into a chart.
type builder struct {
	h     *model.History
	c     chart
	node  map[string]int
	queue map[[2]int][]int // unreceived packets per (from, to), oldest first
	story map[storyKey]string
	open  map[[2]int]int // open connection spans per (node, peer)
	down  map[int]int    // open down span per node
	part  map[int]int    // open partition span per node
	ends  map[int][]end  // per client: when its link lost bytes (cuts, closes, crashes)
	lat   []int64        // latencies of received packets
	lost  []int          // packets a later one overtook on their link
}

// build makes the chart of r.
func build(r Run) chart {
	b := &builder{h: &r.History, node: map[string]int{}, queue: map[[2]int][]int{},
		story: map[storyKey]string{}, open: map[[2]int]int{}, down: map[int]int{}, part: map[int]int{}, ends: map[int][]end{}}
	b.c = chart{Title: r.Title, Replay: r.Replay, Plan: r.Plan, Notes: r.Notes, Events: len(r.History.Events)}
	b.nodes()
	for i := range r.History.Events {
		b.event(i)
	}
	b.finish()
	for _, v := range r.Violations {
		b.c.Violations = append(b.c.Violations, b.violation(v))
	}
	return b.c
}

// nodes orders the lanes: publishers (nodes with Accepted events) left of
// the broker, every other client right of it, each side by name.
func (b *builder) nodes() {
	pubs, others := map[string]bool{}, map[string]bool{}
	for _, e := range b.h.Events {
		for _, n := range []string{e.Node, e.Peer} {
			if n != "" && n != model.BrokerNode {
				others[n] = true
			}
		}
		if e.Kind == model.Accepted && e.Node != model.BrokerNode {
			pubs[e.Node] = true
		}
	}
	var left, right []string
	for n := range others {
		if pubs[n] {
			left = append(left, n)
		} else {
			right = append(right, n)
		}
	}
	slices.Sort(left)
	slices.Sort(right)
	order := append(append(left, model.BrokerNode), right...)
	for i, n := range order {
		b.node[n] = i
	}
	b.c.Nodes = order
}

// nodeOf is the lane of a node name, -1 for none.
func (b *builder) nodeOf(name string) int {
	if i, ok := b.node[name]; ok {
		return i
	}
	return -1
}

// client is the client side of a link between lanes a and b.
func (b *builder) client(x, y int) int {
	if b.c.Nodes[x] == model.BrokerNode {
		return y
	}
	return x
}

// event adds event i to the chart.
func (b *builder) event(i int) {
	e := &b.h.Events[i]
	if e.Time > b.c.End {
		b.c.End = e.Time
	}
	b.c.Times = append(b.c.Times, e.Time)
	n, p := b.nodeOf(e.Node), b.nodeOf(e.Peer)
	switch e.Kind {
	case model.Sent:
		b.sent(i, e, n, p)
	case model.Received:
		b.received(i, e, n, p)
	case model.ConnOpened:
		b.openSpan(i, "conn", n, p, "")
	case model.ConnClosed:
		b.closeSpan(i, [2]int{n, p})
		b.drop(p, n) // n reads nothing more of this connection
		b.addEnd(b.client(n, p), end{e.Time, "the connection closed", i})
	case model.Crash:
		b.crash(i, e, n)
	case model.Restart:
		if s, ok := b.down[n]; ok {
			b.c.Spans[s].To, b.c.Spans[s].J = e.Time, i
			delete(b.down, n)
		}
		b.mark(i, n, "restart", "restart", "rebuilt from its durable records", "")
	case model.Partition:
		b.part[n] = len(b.c.Spans)
		b.c.Spans = append(b.c.Spans, span{Kind: "partition", Node: n, Peer: p, From: e.Time, To: -1, I: i, J: -1, Label: "partition"})
	case model.Heal:
		if s, ok := b.part[n]; ok {
			b.c.Spans[s].To, b.c.Spans[s].J = e.Time, i
			delete(b.part, n)
		}
	case model.Cut:
		b.drop(n, p)
		b.drop(p, n)
		b.mark(i, n, "cut", "cut: "+e.Reason, "the network cut "+e.Node+"'s connection ("+e.Reason+"): bytes in flight are lost", "")
		b.addEnd(n, end{e.Time, "cut (" + e.Reason + ")", i})
	case model.LivenessStart:
		b.c.Spans = append(b.c.Spans, span{Kind: "liveness", Node: -1, Peer: -1, From: e.Time, To: -1, I: i, J: -1,
			Label: "liveness phase: faults off, every node up and connected"})
	default:
		b.appEvent(i, e, n)
	}
}

// appEvent adds the application's events and the run's verdict markers.
func (b *builder) appEvent(i int, e *model.Event, n int) {
	switch e.Kind {
	case model.Accepted:
		b.mark(i, n, "accepted", "accepted "+e.Msg, fmt.Sprintf("Publish of %s accepted (topic %q, QoS %d)", e.Msg, e.Topic, e.QoS), e.Msg)
	case model.Acknowledged:
		b.mark(i, n, "acked", "acked "+e.Msg, "Publish of "+e.Msg+" acknowledged: the publisher is done with it", e.Msg)
	case model.Delivered:
		b.mark(i, n, "delivered", "delivered "+e.Msg, fmt.Sprintf("the app owns %s (topic %q, QoS %d, DUP %v)", e.Msg, e.Topic, e.QoS, e.Packet.Dup), e.Msg)
	case model.Subscribed:
		b.mark(i, n, "subscribed", fmt.Sprintf("subscribed %s q%d", e.Filter, e.QoS), fmt.Sprintf("SUBACK granted %q at QoS %d (persistent %v)", e.Filter, e.QoS, e.Persistent), "")
	case model.Unsubscribed:
		b.mark(i, n, "subscribed", "unsubscribed "+e.Filter, "UNSUBACK removed "+e.Filter, "")
	case model.Connected:
		b.mark(i, n, "connected", fmt.Sprintf("connected SP=%d", b2i(e.SessionPresent)),
			fmt.Sprintf("CONNACK: clean start %v, session present %v, had state %v, v%d, receive max %d", e.CleanStart, e.SessionPresent, e.HadState, e.Version, e.ReceiveMax), "")
	case model.StateLost:
		b.mark(i, n, "fault", "QoS2 state lost", e.Reason, "")
	case model.Failed:
		b.mark(i, n, "failed", "failed", e.Reason, "")
	case model.Refused:
		b.mark(i, n, "failed", "refused "+packetType(e.Packet.Type), "its own codec refused the "+packetType(e.Packet.Type)+" it built: "+e.Reason, e.Msg)
	case model.Dropped:
		b.mark(i, n, "failed", "dropped "+e.Msg+" for "+e.Peer, "the broker dropped its copy of "+e.Msg+" for "+e.Peer+": "+e.Reason, e.Msg)
	case model.Quiescent:
		b.mark(i, -1, "quiet", "quiescent", "the world went quiet: nothing pending", "")
	case model.Stuck:
		b.mark(i, -1, "stuck", "stuck", "the liveness bound passed with work pending: "+e.Reason, "")
	case model.Cutoff:
		b.mark(i, -1, "quiet", "cut", "the liveness bound passed while still delivering: "+e.Reason, "")
	}
}

// crash marks a crash and opens the node's down span; its connections end.
func (b *builder) crash(i int, e *model.Event, n int) {
	what := "crash " + pointName(e.Point)
	if e.Point == model.CrashStop {
		what = "stop"
	}
	detail := what
	if e.Reason != "" {
		detail += "; " + e.Reason
	}
	b.mark(i, n, "crash", what, detail, "")
	for x := range b.c.Nodes {
		b.drop(x, n) // a crashed node reads nothing more
	}
	b.down[n] = len(b.c.Spans)
	b.c.Spans = append(b.c.Spans, span{Kind: "down", Node: n, Peer: -1, From: e.Time, To: -1, I: i, J: -1, Label: detail})
	for k := range b.open {
		if k[0] == n {
			b.closeSpan(i, k)
		}
	}
	if b.c.Nodes[n] == model.BrokerNode {
		for c := range b.c.Nodes {
			if c != n {
				b.addEnd(c, end{e.Time, "the broker crashed", i})
			}
		}
		return
	}
	b.addEnd(n, end{e.Time, e.Node + " crashed", i})
}

func (b *builder) mark(i, n int, kind, label, detail, msg string) {
	b.c.Marks = append(b.c.Marks, mark{Node: n, T: b.h.Events[i].Time, I: i, Kind: kind, Label: label, Detail: detail, Msg: msg})
}

func (b *builder) openSpan(i int, kind string, n, p int, label string) {
	k := [2]int{n, p}
	b.closeSpan(i, k)
	b.open[k] = len(b.c.Spans)
	b.c.Spans = append(b.c.Spans, span{Kind: kind, Node: n, Peer: p, From: b.h.Events[i].Time, To: -1, I: i, J: -1, Label: label})
}

func (b *builder) closeSpan(i int, k [2]int) {
	if s, ok := b.open[k]; ok {
		b.c.Spans[s].To, b.c.Spans[s].J = b.h.Events[i].Time, i
		delete(b.open, k)
	}
}

func (b *builder) addEnd(client int, e end) {
	if client >= 0 {
		b.ends[client] = append(b.ends[client], e)
	}
}

// finish closes what is still open and places the lost packets.
func (b *builder) finish() {
	for i := range b.c.Spans {
		if b.c.Spans[i].To < 0 {
			b.c.Spans[i].To = b.c.End
		}
	}
	slices.Sort(b.lat)
	typical := int64(1_000_000)
	if len(b.lat) > 0 {
		typical = b.lat[len(b.lat)/2]
	}
	keys := make([][2]int, 0, len(b.queue))
	for k := range b.queue {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	lost := b.lost
	for _, k := range keys {
		lost = append(lost, b.queue[k]...)
	}
	for _, at := range lost {
		b.lose(&b.c.Packets[at], typical)
	}
	msgs := map[string]bool{}
	for _, m := range b.c.Marks {
		if m.Msg != "" {
			msgs[m.Msg] = true
		}
	}
	for _, p := range b.c.Packets {
		if p.Msg != "" && p.Type == "PUBLISH" {
			msgs[p.Msg] = true
		}
	}
	for m := range msgs {
		b.c.Msgs = append(b.c.Msgs, m)
	}
	sort.Strings(b.c.Msgs)
}

// violation describes v and the events it cites.
func (b *builder) violation(v model.Violation) violation {
	out := violation{Invariant: v.Invariant.String(), Step: v.Step, Node: v.Node, Reason: v.Reason, Explained: v.ExplainedBy}
	evs := v.Events
	if len(evs) == 0 {
		evs = []int{v.Step}
	}
	for _, i := range evs {
		if i < 0 || i >= len(b.h.Events) {
			continue
		}
		e := &b.h.Events[i]
		out.Cited = append(out.Cited, cited{I: i, T: e.Time, Node: b.nodeOf(e.Node), Text: describe(e)})
	}
	return out
}
