package sim

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/internal/histpkt"
	"github.com/mqttlab/mqttlab/model"
)

// The history is recorded compactly and built as a model.History only when
// asked for. A seed of the standard scenario records some 3,400 events; as
// model.Event values (232 bytes, ten strings each) they were the largest
// object of a run, and the collector scanned them again at every cycle. A
// record here is 48 bytes (crec) without a single pointer: every string is an id
// into the run's string table, where each topic, payload, filter and node
// name is kept once. Result.History and World.History build the model's
// events from the records, once per record.

// strTable interns the strings of a run: id 0 is "", ids index strs.
type strTable struct {
	ids  map[string]uint32
	strs []string
	// recent caches ids in front of the map, direct-mapped by recentSlot:
	// the same topics and payloads come by again and again (each copy of a
	// message, each retry), and comparing with one candidate is cheaper
	// than hashing for the map. 0 (the empty string) never matches a
	// looked-up b, which is never empty.
	recent [16]uint32
	reused bool // the table is a Runner's, reset with the room of earlier runs
}

// recentSlot is the recent slot of a non-empty b.
func recentSlot(b []byte) int {
	return (len(b) + int(b[len(b)-1])*7 + int(b[0])*3) & 15
}

func newStrTable() *strTable {
	return &strTable{ids: make(map[string]uint32), strs: []string{""}}
}

// id returns the id of s, keeping s itself (it must never change).
func (t *strTable) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if id, ok := t.ids[s]; ok {
		return id
	}
	return t.add(s)
}

func (t *strTable) add(s string) uint32 {
	id := uint32(len(t.strs))
	t.strs = append(t.strs, s)
	t.ids[s] = id
	return id
}

// internID returns the id of the string b spells, copying b into the arena
// the first time (b may alias a decoder's or an engine's buffer).
func (w *World) internID(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	t := w.strs
	slot := recentSlot(b)
	if id := t.recent[slot]; t.strs[id] == string(b) {
		return id
	}
	id, ok := t.ids[string(b)] // no allocation for the lookup
	if !ok {
		id = t.add(w.bytes.str(b))
	}
	t.recent[slot] = id
	return id
}

// intern returns b as a string, shared with every earlier equal one.
func (w *World) intern(b []byte) string { return w.strs.strs[w.internID(b)] }

// cpacket is a model.Packet with string ids for its strings. Fields a
// packet type does not use hold another's: a CONNECT keeps its Keep Alive
// in id and its Will Delay in filter, a SUBSCRIBE its options in reason.
type cpacket struct {
	topic, msg, payload, filter uint32
	expiry                      uint32 // Expiry
	size                        uint32 // a CONNECT's or CONNACK's MaxSize, a PUBLISH's Size (its encoded size)
	id                          uint16
	alias                       uint16 // TopicAlias: a PUBLISH's Topic Alias, a CONNECT's Topic Alias Maximum
	subids                      uint32 // SubIDs: the string id of their bytes (subIDsID)
	typ, qos, reason            uint8
	flags                       uint8 // pktDup | pktRetain | pktSessions | pktClean | pktWill | pktExpirySet
}

// cpacket flags.
const (
	pktDup uint8 = 1 << iota
	pktRetain
	pktSessions
	pktClean
	pktWill
	pktExpirySet // a DISCONNECT's Session Expiry Interval is in expiry
)

func (p *cpacket) dup() bool      { return p.flags&pktDup != 0 }
func (p *cpacket) sessions() bool { return p.flags&pktSessions != 0 }

// flagIf is f when b holds, else 0.
func flagIf(b bool, f uint8) uint8 {
	if b {
		return f
	}
	return 0
}

// connectReceiveMax is the Receive Maximum property of p when p is a
// CONNECT that carries one, else 0 (absent: 65535). The client's Sent
// CONNECT records it for the model's SendQuota [MQTT-3.3.4-9]; a client
// announcing the default 65535 omits it, so its events are unchanged.
func connectReceiveMax(p packet.Packet) uint16 {
	if c, ok := p.(*packet.Connect); ok && c.Props.Present.Has(packet.PropReceiveMaximum) {
		return c.Props.ReceiveMaximum
	}
	return 0
}

// compactPacket describes p for the history. The message id of a PUBLISH is
// its whole payload (the sim's applications publish the id), so msg and
// payload share one string.
func (w *World) compactPacket(p packet.Packet) cpacket {
	// The acknowledgements, half of all sends, carry only an id and a
	// reason, and a PUBLISH its topic and payload: built here without
	// Split's full description. TestCompactPacketFastPaths holds them equal
	// to Split's.
	switch p := p.(type) {
	case *packet.Publish:
		c := cpacket{id: p.PacketID, typ: uint8(packet.PUBLISH), qos: uint8(p.QoS),
			flags: flagIf(p.Dup, pktDup) | flagIf(p.Retain, pktRetain), expiry: histpkt.PublishExpiry(p)}
		if p.Props.Present.Has(packet.PropTopicAlias) {
			c.alias = p.Props.TopicAlias
		}
		c.subids = w.subIDsID(p.Props.SubscriptionIDs)
		c.topic = w.internID(p.Topic)
		c.payload = w.internID(p.Payload)
		c.msg = c.payload
		if m := msgOfPayload(p.Payload); len(m) < len(p.Payload) {
			c.msg = w.internID(m) // a padded payload: the id before the space
		}
		return c
	case *packet.Puback:
		return cpacket{id: p.PacketID, typ: uint8(p.Type()), reason: uint8(p.Reason)}
	case *packet.Pubrec:
		return cpacket{id: p.PacketID, typ: uint8(p.Type()), reason: uint8(p.Reason)}
	case *packet.Pubrel:
		return cpacket{id: p.PacketID, typ: uint8(p.Type()), reason: uint8(p.Reason)}
	case *packet.Pubcomp:
		return cpacket{id: p.PacketID, typ: uint8(p.Type()), reason: uint8(p.Reason)}
	}
	parts := histpkt.Split(p)
	s := &parts.Scalars
	c := cpacket{id: s.ID, alias: s.TopicAlias, typ: s.Type, qos: s.QoS, reason: s.Reason, expiry: s.Expiry,
		flags: flagIf(s.Dup, pktDup) | flagIf(s.Retain, pktRetain) | flagIf(s.Sessions, pktSessions) | flagIf(s.Clean, pktClean) | flagIf(s.Will, pktWill)}
	if parts.Publish || parts.Will {
		c.topic = w.internID(parts.Topic)
		c.payload = w.internID(parts.Payload)
		c.msg = c.payload
		if m := msgOfPayload(parts.Payload); len(m) < len(parts.Payload) {
			c.msg = w.internID(m) // a padded payload: the id before the space
		}
	}
	c.filter = w.strs.id(parts.Filter)
	c.subids = w.subIDsID(s.SubIDs)
	switch s.Type {
	case uint8(packet.CONNECT):
		c.id, c.filter, c.size = s.KeepAlive, s.WillDelay, s.MaxSize
	case uint8(packet.CONNACK):
		c.id, c.size = s.KeepAlive, s.MaxSize
	case uint8(packet.SUBSCRIBE):
		c.reason = s.Opts
	case uint8(packet.DISCONNECT):
		c.flags |= flagIf(s.ExpirySet, pktExpirySet)
	}
	return c
}

// subIDsID returns the string id of a packet's Subscription Identifiers,
// each as 4 bytes little-endian (0: none). Most copies of a message carry
// the same few lists, kept once.
func (w *World) subIDsID(ids []uint32) uint32 {
	if len(ids) == 0 {
		return 0
	}
	var buf [32]byte
	b := buf[:0]
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	return w.internID(b)
}

// subIDsOf decodes subIDsID's string.
func subIDsOf(s string) []uint32 {
	ids := make([]uint32, len(s)/4)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint32([]byte(s[4*i : 4*i+4]))
	}
	return ids
}

// hrec is one history event, compact: strings are ids into the strTable.
type hrec struct {
	time                       int64
	pkt                        cpacket
	node, peer                 uint32
	msg, topic, filter, reason uint32
	receiveMax                 uint16
	kind                       model.Kind
	qos, version               uint8
	point                      model.CrashPoint
	flags                      uint8 // evRetain | evPersistent | ...
}

// hrec flags.
const (
	evRetain uint8 = 1 << iota
	evPersistent
	evCleanStart
	evSessionPresent
	evHadState
)

// event builds the model's Event of r.
func (r *hrec) event(t *strTable) model.Event {
	var e model.Event
	r.fill(&e, t)
	return e
}

// fill writes the model's Event of r into e, which must be zero (fresh
// space of the built slice). It is event written in place, field by field,
// and it skips the empty strings: copying whole 232-byte Events into the
// slice while the collector runs cost a bulk write barrier per event, and
// the collector's stack scans kept interrupting that copy loop (a fifth of a
// checked seed's CPU before). Most of an event's ten strings are empty.
func (r *hrec) fill(e *model.Event, t *strTable) {
	e.Kind, e.Time, e.QoS, e.Version, e.ReceiveMax, e.Point = r.kind, r.time, r.qos, r.version, r.receiveMax, r.point
	e.Retain, e.Persistent = r.flags&evRetain != 0, r.flags&evPersistent != 0
	e.CleanStart, e.SessionPresent, e.HadState = r.flags&evCleanStart != 0, r.flags&evSessionPresent != 0, r.flags&evHadState != 0
	setStr(&e.Node, t, r.node)
	setStr(&e.Peer, t, r.peer)
	setStr(&e.Msg, t, r.msg)
	setStr(&e.Topic, t, r.topic)
	setStr(&e.Filter, t, r.filter)
	setStr(&e.Reason, t, r.reason)
	p, q := &r.pkt, &e.Packet
	q.Type, q.ID, q.QoS, q.Reason = p.typ, p.id, p.qos, p.reason
	q.Dup, q.Retain = p.flags&pktDup != 0, p.flags&pktRetain != 0
	q.Sessions, q.Clean, q.Will = p.flags&pktSessions != 0, p.flags&pktClean != 0, p.flags&pktWill != 0
	q.Expiry, q.ExpirySet = p.expiry, p.flags&pktExpirySet != 0
	if p.typ == uint8(packet.PUBLISH) {
		q.Size = p.size
	} else {
		q.MaxSize = p.size
	}
	q.TopicAlias = p.alias
	if p.subids != 0 {
		q.SubIDs = subIDsOf(t.strs[p.subids])
	}
	setStr(&q.Topic, t, p.topic)
	setStr(&q.Msg, t, p.msg)
	setStr(&q.Payload, t, p.payload)
	switch p.typ {
	case uint8(packet.CONNECT):
		q.ID, q.KeepAlive, q.WillDelay = 0, p.id, p.filter
		return
	case uint8(packet.CONNACK):
		q.ID, q.KeepAlive = 0, p.id
		return
	case uint8(packet.SUBSCRIBE):
		q.Reason, q.Opts = 0, p.reason
	}
	setStr(&q.Filter, t, p.filter)
}

// setStr stores string id in *dst unless it is the empty string (id 0),
// which a zero dst already holds: no pointer store, no write barrier.
func setStr(dst *string, t *strTable, id uint32) {
	if id != 0 {
		*dst = t.strs[id]
	}
}

// crec is an hrec as the log keeps it: 48 bytes instead of 64. The eight
// string ids of an hrec (four of the event, four of its packet) share four
// slots, since no event the world records uses more than four distinct ones:
// a Sent or Received event has only its packet's strings, a Delivered
// event's msg and topic are its packet's, every other event has no packet
// strings. The layout says which; a record that fits none (only a test could
// build one) is kept whole in the log's spill list, s[0] its index. So is a
// packet with an Expiry (a PUBLISH's Message Expiry or a CONNECT's Session
// Expiry, which only some workloads set) or a CONNECT's Maximum Packet
// Size: the record has no room for them. A PUBLISH's Size below 64 KiB
// fits in psize (the two bytes the layout had spare).
type crec struct {
	time                int64
	node, peer          uint32
	s                   [4]uint32
	pid, receiveMax     uint16
	psize               uint16 // a PUBLISH's Size
	ptyp, pqos, preason uint8
	pflags              uint8
	kind                model.Kind
	qos, version        uint8
	point               model.CrashPoint
	flags               uint8
	layout              uint8
}

// crec layouts: which strings the four slots hold.
const (
	layEvent  uint8 = iota // event msg, topic, filter, reason; no packet strings
	layPacket              // packet topic, msg, payload, filter; no event strings
	layShared              // as layPacket, and the event's msg and topic are the packet's
	laySpill               // s[0] indexes histLog.spill
)

// histLog is the compact history of a run, and the events built from it so
// far (built is a prefix of recs, extended on demand).
type histLog struct {
	strs  *strTable
	recs  []crec
	spill []hrec
	built []model.Event
	dirty bool // built's spare room holds an earlier run's events (Runner.ReuseHistories)
}

// add records an event.
func (l *histLog) add(r hrec) { l.recs = append(l.recs, l.pack(&r)) }

// pack compacts r (see crec).
func (l *histLog) pack(r *hrec) crec {
	p := &r.pkt
	c := crec{time: r.time, node: r.node, peer: r.peer, pid: p.id, receiveMax: r.receiveMax,
		ptyp: p.typ, pqos: p.qos, preason: p.reason, pflags: p.flags,
		kind: r.kind, qos: r.qos, version: r.version, point: r.point, flags: r.flags}
	if p.typ == uint8(packet.PUBLISH) && p.size <= math.MaxUint16 {
		c.psize = uint16(p.size)
	}
	packetStrs := p.topic|p.msg|p.payload|p.filter != 0
	switch {
	case p.expiry != 0 || p.size != uint32(c.psize) || p.alias != 0 || p.subids != 0: // crec has no room for them
		c.layout, c.s[0] = laySpill, uint32(len(l.spill))
		l.spill = append(l.spill, *r)
	case !packetStrs:
		c.layout, c.s = layEvent, [4]uint32{r.msg, r.topic, r.filter, r.reason}
	case r.msg|r.topic|r.filter|r.reason == 0:
		c.layout, c.s = layPacket, [4]uint32{p.topic, p.msg, p.payload, p.filter}
	case r.msg == p.msg && r.topic == p.topic && r.filter|r.reason == 0:
		c.layout, c.s = layShared, [4]uint32{p.topic, p.msg, p.payload, p.filter}
	default:
		c.layout, c.s[0] = laySpill, uint32(len(l.spill))
		l.spill = append(l.spill, *r)
	}
	return c
}

// unpack is the inverse of pack.
func (l *histLog) unpack(c *crec) hrec {
	if c.layout == laySpill {
		return l.spill[c.s[0]]
	}
	r := hrec{time: c.time, node: c.node, peer: c.peer, receiveMax: c.receiveMax,
		kind: c.kind, qos: c.qos, version: c.version, point: c.point, flags: c.flags,
		pkt: cpacket{id: c.pid, typ: c.ptyp, qos: c.pqos, reason: c.preason, flags: c.pflags, size: uint32(c.psize)}}
	if c.layout == layEvent {
		r.msg, r.topic, r.filter, r.reason = c.s[0], c.s[1], c.s[2], c.s[3]
		return r
	}
	r.pkt.topic, r.pkt.msg, r.pkt.payload, r.pkt.filter = c.s[0], c.s[1], c.s[2], c.s[3]
	if c.layout == layShared {
		r.msg, r.topic = r.pkt.msg, r.pkt.topic
	}
	return r
}

// history returns the model's history of every record so far. The events
// are built once each; the slice is capped so that a caller's append cannot
// write into the log's own.
func (l *histLog) history() model.History {
	if n := len(l.built); n < len(l.recs) {
		l.built = slices.Grow(l.built, len(l.recs)-n)[:len(l.recs)]
		if l.dirty {
			clear(l.built[n:]) // fill writes only non-zero fields
		}
		for i := n; i < len(l.recs); i++ {
			r := l.unpack(&l.recs[i])
			r.fill(&l.built[i], l.strs)
		}
	}
	return model.History{Events: l.built[:len(l.built):len(l.built)]}
}
