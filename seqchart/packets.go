package seqchart

import (
	"fmt"
	"sort"

	"github.com/mqttlab/mqttlab/model"
)

// Packets: a Sent event starts an arrow, the Received event of the same
// packet ends it; what is never received is lost.

// storyKey is a PUBLISH flow: the publishing side, the receiving side and
// the packet id.
type storyKey struct {
	pub, recv int
	id        uint16
}

// end is a moment the link of a client lost what was in flight.
type end struct {
	t    int64
	why  string
	when int // event index
}

// sent adds a packet in flight and the message it belongs to.
func (b *builder) sent(i int, e *model.Event, n, p int) {
	pk := packetOf(e, n, p)
	pk.Sent, pk.Recv, pk.ST, pk.RT = i, -1, e.Time, -1
	pk.Msg = b.storyOf(e, n, p)
	k := [2]int{n, p}
	b.queue[k] = append(b.queue[k], len(b.c.Packets))
	b.c.Packets = append(b.c.Packets, pk)
}

// storyOf is the message a packet sent from n to p is part of: a
// PUBLISH's own, or the one its id carries in that flow.
func (b *builder) storyOf(e *model.Event, n, p int) string {
	q := &e.Packet
	switch q.Type {
	case model.PUBLISH:
		if q.QoS > 0 {
			b.story[storyKey{n, p, q.ID}] = q.Msg
		}
		return q.Msg
	case model.PUBACK, model.PUBREC, model.PUBCOMP:
		return b.story[storyKey{p, n, q.ID}]
	case model.PUBREL:
		return b.story[storyKey{n, p, q.ID}]
	}
	return ""
}

// received matches a Received event with the oldest unreceived packet of
// the same description sent the other way. A connection is a FIFO stream:
// the unreceived packets sent before the one matched never arrive (they
// were lost with an earlier connection), so they leave the queue, and a
// later packet just like one of them (a PINGREQ, a resent CONNECT) cannot
// be taken for it.
func (b *builder) received(i int, e *model.Event, n, p int) {
	want := packetOf(e, p, n)
	k := [2]int{p, n}
	q := b.queue[k]
	for j, at := range q {
		pk := &b.c.Packets[at]
		if samePacket(pk, &want) {
			pk.Recv, pk.RT = i, e.Time
			b.lat = append(b.lat, e.Time-pk.ST)
			b.lost = append(b.lost, q[:j]...)
			b.queue[k] = q[j+1:]
			return
		}
	}
	// A receive whose send is not in the history (a recorder that saw only
	// one side): an arrow that starts where it ends.
	want.Sent, want.Recv, want.ST, want.RT = -1, i, e.Time, e.Time
	b.c.Packets = append(b.c.Packets, want)
}

// lose marks a packet never received: its cross goes half a typical
// latency after the send, and the reason is the first thing after the
// send that ended its link (or the cut it was sent into).
func (b *builder) lose(p *packet, typical int64) {
	p.RT = p.ST + max(typical/2, 1)
	ends := b.ends[b.client(p.From, p.To)]
	at := sort.Search(len(ends), func(i int) bool { return ends[i].t >= p.ST })
	switch {
	case at < len(ends):
		p.Lost = "lost: " + ends[at].why + fmt.Sprintf(" (step %d)", ends[at].when)
	case len(ends) > 0:
		p.Lost = "lost: sent after " + ends[len(ends)-1].why + fmt.Sprintf(" (step %d)", ends[len(ends)-1].when)
	default:
		p.Lost = "lost: never received"
	}
}

// packetOf describes the packet of e sent from lane f to lane t.
func packetOf(e *model.Event, f, t int) packet {
	q := &e.Packet
	p := packet{From: f, To: t, Type: packetType(q.Type), ID: q.ID, QoS: q.QoS, Dup: q.Dup, Rc: q.Reason, Topic: q.Topic}
	switch q.Type {
	case model.CONNACK:
		p.SP = q.Sessions
	case model.CONNECT:
		p.SP = q.Clean
	case model.SUBSCRIBE, model.UNSUBSCRIBE:
		p.Topic = q.Filter
	}
	if q.Type == model.PUBLISH {
		p.Msg = q.Msg
	}
	return p
}

// samePacket reports whether a sent packet is the one received.
func samePacket(a, b *packet) bool {
	return a.Type == b.Type && a.ID == b.ID && a.QoS == b.QoS && a.Dup == b.Dup && a.Rc == b.Rc && a.SP == b.SP &&
		a.Topic == b.Topic && (a.Type != "PUBLISH" || a.Msg == b.Msg)
}

// drop loses every packet from lane f to lane t not received yet: the
// connection they were sent on can deliver nothing more (t closed it or
// crashed, or the network cut it), and a later connection is a new stream.
func (b *builder) drop(f, t int) {
	if f < 0 || t < 0 {
		return
	}
	k := [2]int{f, t}
	b.lost = append(b.lost, b.queue[k]...)
	delete(b.queue, k)
}
