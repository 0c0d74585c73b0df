package findings

import (
	"slices"
	"sort"

	"github.com/mqttlab/mqttlab/model"
)

// flowIndex indexes a history for flow excerpts, built once per Group.
type flowIndex struct {
	byMsg  map[string][]int // events carrying a message (app events, PUBLISHes)
	byLink map[linkID][]int // PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP per client link and packet id
	conn   map[string][]int // per client: its connects, closes, crashes, restarts, cuts, partitions
	world  []int            // broker crashes and restarts, phase markers
	// refused marks the events of connection attempts that never got a
	// CONNACK (a broker down or refusing): flows leave them out and count
	// them instead.
	refused map[int]bool
}

// linkID names the packets of one packet id on one client's link with the
// broker (either direction, either view).
type linkID struct {
	client string
	id     uint16
}

// clientOf is the client end of an event: its node, or its peer when the
// node is the broker.
func clientOf(e *model.Event) string {
	if e.Node == model.BrokerNode {
		return e.Peer
	}
	return e.Node
}

// isQoSPacket reports whether t is one of the packets of a QoS 1 or 2 flow.
func isQoSPacket(t uint8) bool {
	switch t {
	case model.PUBLISH, model.PUBACK, model.PUBREC, model.PUBREL, model.PUBCOMP:
		return true
	}
	return false
}

func newFlowIndex(h *model.History) *flowIndex {
	x := &flowIndex{byMsg: map[string][]int{}, byLink: map[linkID][]int{}, conn: map[string][]int{}}
	for i := range h.Events {
		e := &h.Events[i]
		switch e.Kind {
		case model.Accepted, model.Acknowledged, model.Delivered, model.Refused:
			if e.Msg != "" {
				x.byMsg[e.Msg] = append(x.byMsg[e.Msg], i)
			}
		case model.Sent, model.Received:
			p := &e.Packet
			if p.Type == model.PUBLISH && p.Msg != "" {
				x.byMsg[p.Msg] = append(x.byMsg[p.Msg], i)
			}
			switch {
			case isQoSPacket(p.Type) && p.ID != 0:
				k := linkID{clientOf(e), p.ID}
				x.byLink[k] = append(x.byLink[k], i)
			case p.Type == model.CONNECT || p.Type == model.CONNACK || p.Type == model.DISCONNECT:
				x.conn[clientOf(e)] = append(x.conn[clientOf(e)], i)
			}
		case model.ConnOpened, model.ConnClosed, model.Connected, model.Cut, model.Partition, model.Heal, model.StateLost:
			x.conn[clientOf(e)] = append(x.conn[clientOf(e)], i)
		case model.Crash, model.Restart, model.Failed:
			if e.Node == model.BrokerNode {
				x.world = append(x.world, i)
			} else {
				x.conn[e.Node] = append(x.conn[e.Node], i)
			}
		case model.LivenessStart, model.Quiescent, model.Stuck, model.Cutoff:
			x.world = append(x.world, i)
		}
	}
	x.markRefused(h)
	return x
}

// markRefused marks, per client, the events of each connection attempt
// (from the client's ConnOpened to its ConnClosed) that saw no CONNACK.
func (x *flowIndex) markRefused(h *model.History) {
	x.refused = map[int]bool{}
	for c, list := range x.conn {
		var attempt []int
		acked := true
		for _, i := range list {
			e := &h.Events[i]
			switch {
			case e.Kind == model.ConnOpened && e.Node == c:
				attempt, acked = []int{i}, false
				continue
			case e.Kind == model.Connected || e.Packet.Type == model.CONNACK:
				acked = true
			}
			if e.Kind != model.Crash && e.Kind != model.Restart && e.Kind != model.Failed {
				attempt = append(attempt, i)
			}
			if e.Kind == model.ConnClosed && e.Node == c {
				if !acked {
					for _, a := range attempt {
						x.refused[a] = true
					}
				}
				attempt, acked = nil, true
			}
		}
	}
}

// flowMsgs bounds the messages one excerpt follows (a NoStuck names every
// pending one).
const flowMsgs = 4

// flow is violation v's excerpt: the events it cites; every event of the
// messages it concerns on the links of its clients and of the messages'
// publishers (their PUBLISHes, the application's accept, acknowledgement
// and delivery); every PUBACK, PUBREC, PUBREL and PUBCOMP of the packet ids
// those PUBLISHes used while they carried those messages; and, between the
// first and the last of these, the connects, closes, crashes and restarts
// of the clients involved and of the broker, and the phase markers (a
// publisher's own connects only while it published the message).
func (g *grouper) flow(v *model.Violation) flowExcerpt {
	if g.ix == nil {
		g.ix = newFlowIndex(g.h)
	}
	evs := g.h.Events
	set := map[int]bool{}
	for _, i := range v.Events {
		if i >= 0 && i < len(evs) {
			set[i] = true
		}
	}
	msgs := violationMsgs(g.h, v)
	if len(msgs) > flowMsgs {
		msgs = msgs[:flowMsgs]
	}
	clients := violationClients(g.h, v)
	var pubs []string // the publishers' side of the story, outside clients
	for _, m := range msgs {
		for _, i := range g.ix.byMsg[m] {
			if n := evs[i].Node; evs[i].Kind == model.Accepted && !slices.Contains(clients, n) && !slices.Contains(pubs, n) {
				pubs = append(pubs, n)
			}
		}
	}
	links := map[linkID]bool{}
	msgSet := map[int]bool{} // the messages' own events
	pubLo, pubHi := map[string]int{}, map[string]int{}
	for _, m := range msgs {
		for _, i := range g.ix.byMsg[m] {
			e := &evs[i]
			c := clientOf(e)
			if slices.Contains(pubs, c) {
				if lo, ok := pubLo[c]; !ok || i < lo {
					pubLo[c] = i
				}
				pubHi[c] = max(pubHi[c], i)
			} else if !slices.Contains(clients, c) {
				continue
			}
			set[i], msgSet[i] = true, true
			if e.Packet.Type == model.PUBLISH && e.Packet.ID != 0 {
				links[linkID{clientOf(e), e.Packet.ID}] = true
			}
		}
	}
	for _, k := range sortedLinks(links) {
		g.addAcks(set, msgSet, g.ix.byLink[k], msgs)
	}
	if len(set) == 0 {
		return flowExcerpt{}
	}
	// The window is the message's flow; a cited event far before it (the
	// SUBACK a NoLoss rests on) is shown, but stretches nothing.
	lo, hi := bounds(set)
	if flowLo, flowHi := bounds(msgSet); flowLo >= 0 {
		lo, hi = flowLo, max(flowHi, v.Step)
	}
	refused := 0
	for _, c := range clients {
		refused += g.addWithin(set, g.ix.conn[c], lo, hi)
	}
	for _, c := range pubs { // a publisher's connects only while it published the message
		refused += g.addWithin(set, g.ix.conn[c], pubLo[c], pubHi[c])
	}
	g.addWithin(set, g.ix.world, lo, hi)
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	slices.Sort(out)
	return flowExcerpt{out, refused}
}

// flowExcerpt is a flow: its events, and how many events of refused
// connection attempts inside it were left out.
type flowExcerpt struct {
	events  []int
	refused int
}

// addAcks adds, of the packets of one link's packet id, those sent while
// the id carried one of msgs: from a PUBLISH of one of them to the next
// PUBLISH of another message.
func (g *grouper) addAcks(set, msgSet map[int]bool, list []int, msgs []string) {
	carrying := false
	for _, i := range list {
		p := &g.h.Events[i].Packet
		if p.Type == model.PUBLISH {
			carrying = slices.Contains(msgs, p.Msg)
		}
		if carrying {
			set[i], msgSet[i] = true, true
		}
	}
}

func sortedLinks(m map[linkID]bool) []linkID {
	out := make([]linkID, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].client != out[b].client {
			return out[a].client < out[b].client
		}
		return out[a].id < out[b].id
	})
	return out
}

func bounds(set map[int]bool) (lo, hi int) {
	lo, hi = -1, -1
	for i := range set {
		if lo < 0 || i < lo {
			lo = i
		}
		if i > hi {
			hi = i
		}
	}
	return lo, hi
}

// addWithin adds the indexes of list (ascending) within [lo, hi] but
// those of refused connection attempts, and returns how many it left out.
func (g *grouper) addWithin(set map[int]bool, list []int, lo, hi int) int {
	n := 0
	for j := sort.SearchInts(list, lo); j < len(list) && list[j] <= hi; j++ {
		if g.ix.refused[list[j]] && !set[list[j]] {
			n++
			continue
		}
		set[list[j]] = true
	}
	return n
}
