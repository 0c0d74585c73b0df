package model

import (
	"maps"
	"slices"
	"sort"
)

// expiredOffline tells NoLoss which copies the broker may have deleted for
// their Message Expiry: "If the Message Expiry Interval has passed and the
// Server has not managed to start onward delivery to a matching subscriber,
// then it MUST delete the copy of the message for that subscriber"
// [MQTT-3.3.2-5]. A copy is excused when the broker received the message
// with a Message Expiry Interval, never sent it to the subscriber, the
// interval ran out before the history ended, and the broker could not send
// it for a while within the interval: the subscriber had no session
// connection at the broker at some moment of it (none whose CONNECT the
// broker accepted: it sends nothing but AUTH on a connection before its
// CONNACK [MQTT-3.2.0-1], and a client that dies before sending CONNECT
// leaves the broker a connection it cannot deliver on), the broker crashed
// in it, or the
// broker's send window to the subscriber was full at some moment of it (as
// many QoS>0 PUBLISHes unacknowledged on the connection as the Receive
// Maximum of the subscriber's CONNECT [MQTT-3.3.4-9]; one, for a CONNECT
// without one: a 3.1.1 client's window is the broker's own setting, which
// the history does not show). A broker that lets an expiring copy run out
// while the subscriber stays connected with room in its window throughout
// is still judged.
type expiredOffline struct {
	x      *index
	end    int64              // the time of the history's last event
	conns  map[int32][]connAt // subscriber -> the broker's accepting CONNACKs and ConnClosed with it, in order
	full   map[int32][]span   // subscriber -> the times the broker's window to it was full
	crashs []int64            // the broker's Crash times, in order
}

// span is a time interval [from, to].
type span struct{ from, to int64 }

// window is the broker's send window to one client on its connection.
type window struct {
	limit   int   // the client's Receive Maximum (see clientLimits)
	unacked idSet // ids of the broker's QoS>0 PUBLISHes not yet acknowledged
	n       int
	since   int64 // when n reached limit, or -1
}

// connAt is the broker accepting a client's CONNECT on a connection (open:
// its CONNACK with reason 0) or closing a connection with it, at time at.
type connAt struct {
	at   int64
	open bool
}

// newExpiredOffline indexes the broker's connections and crashes of x.
func newExpiredOffline(x *index) *expiredOffline {
	e := &expiredOffline{x: x, conns: map[int32][]connAt{}, full: map[int32][]span{}}
	if n := len(x.h.Events); n > 0 {
		e.end = x.h.Events[n-1].Time
	}
	wins := map[int32]*window{}
	limits := e.clientLimits()
	for i, k := range x.kinds {
		d, ev := &x.ev[i], &x.h.Events[i]
		if d.node != brokerID {
			if k.kind == Sent && k.typ == CONNECT {
				limits[d.node] = limitOf(ev.ReceiveMax, limits[d.node])
			}
			continue
		}
		switch k.kind {
		case ConnClosed:
			e.conns[d.peer] = append(e.conns[d.peer], connAt{at: ev.Time})
			e.closeWindow(d.peer, wins[d.peer], ev.Time)
			delete(wins, d.peer)
		case Crash:
			e.crashs = append(e.crashs, ev.Time)
			for _, p := range slices.Sorted(maps.Keys(wins)) {
				e.closeWindow(p, wins[p], ev.Time)
			}
			clear(wins)
		case Received, Sent:
			e.windowEvent(wins, d.peer, ev, limits[d.peer])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(wins)) {
		e.closeWindow(p, wins[p], e.end)
	}
	return e
}

// clientLimits returns, per client, the window the broker has when its
// CONNECT carries no Receive Maximum: 65535 for a v5 client, 1 for a 3.1.1
// one (the broker's own setting, which the history does not show: the
// doubt goes to the broker). The version is that of the client's Connected
// events.
func (e *expiredOffline) clientLimits() []int {
	limits := make([]int, len(e.x.nodes))
	for i := range limits {
		limits[i] = 1
	}
	for i, k := range e.x.kinds {
		if k.kind == Connected && e.x.h.Events[i].Version == 5 {
			limits[e.x.ev[i].node] = maxReceiveMax
		}
	}
	return limits
}

// limitOf is the window of a CONNECT announcing Receive Maximum rm (0:
// none), def when it announces none.
func limitOf(rm uint16, def int) int {
	if rm == 0 {
		return def
	}
	return int(rm)
}

// windowEvent follows the broker's session connection with client peer and
// its window on it: a CONNACK accepting the client's CONNECT opens both
// (limit: the Receive Maximum of the client's last CONNECT sent; before
// it the broker sends nothing but AUTH [MQTT-3.2.0-1], and the old
// connection a takeover closes [MQTT-3.1.4-3] closes before it), the
// broker's QoS>0 PUBLISHes fill the window, the client's acks (PUBACK,
// PUBCOMP, PUBREC >= 0x80) empty it.
func (e *expiredOffline) windowEvent(wins map[int32]*window, peer int32, ev *Event, limit int) {
	p := &ev.Packet
	w := wins[peer]
	switch {
	case ev.Kind == Sent && p.Type == CONNACK:
		e.closeWindow(peer, w, ev.Time)
		delete(wins, peer)
		if p.Reason == 0 {
			e.conns[peer] = append(e.conns[peer], connAt{at: ev.Time, open: true})
			wins[peer] = &window{limit: limit, since: -1}
		}
	case w == nil:
	case ev.Kind == Sent && p.Type == PUBLISH && p.QoS > 0:
		if !w.unacked.add(p.ID) {
			return
		}
		w.n++
		if w.n >= w.limit && w.since < 0 {
			w.since = ev.Time
		}
	case ev.Kind == Received:
		quotaAck(&w.unacked, &w.n, p)
		if w.n < w.limit {
			e.closeWindow(peer, w, ev.Time)
		}
	}
}

// closeWindow records the time w was full until at, if it was.
func (e *expiredOffline) closeWindow(peer int32, w *window, at int64) {
	if w != nil && w.since >= 0 {
		e.full[peer] = append(e.full[peer], span{w.since, at})
		w.since = -1
	}
}

// windowFull reports whether the broker's window to node was full at some
// moment within [from, to] after the message came at from.
func (e *expiredOffline) windowFull(node int32, from, to int64) bool {
	for _, s := range e.full[node] {
		if s.from <= to && s.to > from {
			return true
		}
	}
	return false
}

// excused reports whether m's copy for subscriber node may have expired
// unsent (see expiredOffline). sent is whether the broker sent node a
// PUBLISH of m.
func (e *expiredOffline) excused(m *accepted, node int32, sent bool) bool {
	to, ok := e.deadline(m)
	if sent || !ok {
		return false // sent, never received, or no expiry
	}
	from := e.x.h.Events[m.ref].Time
	if to > e.end {
		return false // still live when the history ended
	}
	return e.crashed(from, to) || e.offline(node, from, to) || e.windowFull(node, from, to)
}

// deadline returns when m's Message Expiry ran out at the broker, false
// when the broker never received it or it has none.
func (e *expiredOffline) deadline(m *accepted) (int64, bool) {
	if m.ref == m.step {
		return 0, false
	}
	r := &e.x.h.Events[m.ref]
	if r.Packet.Expiry == 0 {
		return 0, false
	}
	return r.Time + int64(r.Packet.Expiry)*1e9, true
}

// crashed reports whether the broker crashed within [from, to].
func (e *expiredOffline) crashed(from, to int64) bool {
	i := sort.Search(len(e.crashs), func(i int) bool { return e.crashs[i] >= from })
	return i < len(e.crashs) && e.crashs[i] <= to
}

// offline reports whether the broker had no session connection with node
// at some moment within [from, to]: none accepted at from (a broker crash
// closes every connection), or one closed within it.
func (e *expiredOffline) offline(node int32, from, to int64) bool {
	cs := e.conns[node]
	i := sort.Search(len(cs), func(i int) bool { return cs[i].at > from })
	if i == 0 || !cs[i-1].open || e.crashed(cs[i-1].at, from) {
		return true // no connection at from
	}
	for ; i < len(cs) && cs[i].at <= to; i++ {
		if !cs[i].open {
			return true
		}
	}
	return false
}
