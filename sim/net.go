package sim

import (
	"errors"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// Sides and directions of a connection. Direction d carries the bytes that
// side d sends: dirUp (client to broker) and dirDown (broker to client).
const (
	sideClient uint8 = 0
	sideBroker uint8 = 1
	dirUp            = sideClient
	dirDown          = sideBroker
)

// segment is a piece of a byte stream that arrives at time at: the stream's
// bytes up to absolute offset end.
type segment struct {
	end uint64
	at  engine.Time
}

// pktMark is where a packet ends in a stream, for the Received history event
// once its last byte has been delivered.
type pktMark struct {
	end uint64
	pkt cpacket
}

// stream is one direction of a connection: a FIFO of bytes with their arrival
// times. Offsets are absolute (bytes ever written to the stream).
type stream struct {
	buf       []byte // undelivered bytes; buf[0] is at offset base
	base      uint64
	segs      []segment
	segHead   int
	pkts      []pktMark
	pktHead   int
	lastAt    engine.Time
	scheduled bool // an evDeliver item is pending for this stream
	held      bool // a delivery came due while the client was partitioned
}

// pending reports whether bytes are waiting to arrive.
func (s *stream) pending() bool { return len(s.buf) > 0 }

// busy reports whether a packet other than a keep-alive one (PINGREQ,
// PINGRESP) is waiting to arrive. Keep-alive traffic is not work the world
// must finish: it never ends while a client with a Keep Alive is connected,
// and with hundreds of clients at a 1 s Keep Alive some ping is always in
// flight, so a world waiting for none never went quiet.
func (s *stream) busy() bool {
	for _, m := range s.pkts[s.pktHead:] {
		if t := packet.Type(m.pkt.typ); t != packet.PINGREQ && t != packet.PINGRESP {
			return true
		}
	}
	return false
}

// write appends bytes that arrive in pieces at the given times.
func (s *stream) write(data []byte) { s.buf = append(s.buf, data...) }

// addSegment records that the stream up to end arrives at at (FIFO: never
// before an earlier segment).
func (s *stream) addSegment(end uint64, at engine.Time) engine.Time {
	if at < s.lastAt {
		at = s.lastAt
	}
	s.lastAt = at
	s.segs = append(s.segs, segment{end: end, at: at})
	return at
}

// due returns the absolute offset up to which bytes have arrived by now, and
// the time of the next segment still to come (ok false when none).
func (s *stream) due(now engine.Time) (end uint64, next engine.Time, ok bool) {
	end = s.base
	for s.segHead < len(s.segs) && s.segs[s.segHead].at <= now {
		end = s.segs[s.segHead].end
		s.segHead++
	}
	if s.segHead == len(s.segs) {
		s.segs = s.segs[:0]
		s.segHead = 0
		return end, 0, false
	}
	return end, s.segs[s.segHead].at, true
}

// consume drops delivered bytes up to absolute offset end.
func (s *stream) consume(end uint64) {
	n := int(end - s.base)
	s.base = end
	if n >= len(s.buf) {
		s.buf = s.buf[:0]
		return
	}
	rest := copy(s.buf, s.buf[n:])
	s.buf = s.buf[:rest]
}

// drop discards everything in flight (a reset).
func (s *stream) drop() {
	s.base += uint64(len(s.buf))
	s.buf = s.buf[:0]
	s.segs = s.segs[:0]
	s.segHead = 0
	s.pkts = s.pkts[:0]
	s.pktHead = 0
	s.held = false
}

// conn is one TCP-like connection between a client and the broker.
type conn struct {
	id     engine.ConnID
	client int32
	inc    [2]uint64 // incarnation of each side's node when it joined
	dir    [2]stream
	open   [2]bool // the side has been told the connection is open
	alive  [2]bool // the side's endpoint exists (not closed, not crashed)
	gone   [2]bool // the side's node crashed while the connection was alive
	// blackhole: a half-open fault; bytes vanish in both directions and no
	// one is told.
	blackhole bool
	reset     bool           // reset fault: nothing more is delivered
	rm        uint16         // Receive Maximum the broker's CONNACK announced
	ver       packet.Version // the protocol level of the CONNECT on the wire (0 before it)
	rst       bool           // a reset was sent back for data reaching a crashed side
	closeHeld [2]bool        // a close notification waits for a partition to heal
}

// peerOf returns the other side.
func peerOf(side uint8) uint8 { return 1 - side }

// latency draws one-way latency for a packet of client c: the profile's
// range plus the link's slow-down.
func (w *World) latency(c int32) engine.Duration {
	p := &w.prof
	d := w.rnd.Between(p.LatencyMin, p.LatencyMax)
	return d + w.nodes[c].slow
}

// sideOf reports which side of c node n is.
func (c *conn) sideOf(n *node) (uint8, bool) {
	if n.broker {
		return sideBroker, true
	}
	if n.idx == c.client {
		return sideClient, true
	}
	return 0, false
}

// nodeOf returns the node at one side of c.
func (w *World) nodeOf(c *conn, side uint8) *node {
	if side == sideBroker {
		return w.nodes[0]
	}
	return w.nodes[c.client]
}

// getConn returns connection id, or nil.
func (w *World) getConn(id engine.ConnID) *conn {
	if id == 0 || int(id) > len(w.conns) {
		return nil
	}
	return w.conns[id-1]
}

// Room a new stream starts with: most connections carry a handful of
// packets in flight at a time.
const (
	streamSegs = 8
	streamPkts = 8
	streamBuf  = 256
)

// connCarvers carve conns and their streams' first room from blocks.
type connCarvers struct {
	conns carver[conn]
	segs  carver[segment]
	pkts  carver[pktMark]
	bytes carver[byte]
}

// newConn returns a zero conn whose streams have their first room: the room
// of dead's streams when dead is not nil (taken from it), else fresh.
func (cc *connCarvers) newConn(dead *conn) *conn {
	c := cc.conns.one()
	if dead != nil {
		for i := range c.dir {
			s, d := &c.dir[i], &dead.dir[i]
			s.segs, s.pkts, s.buf = d.segs[:0], d.pkts[:0], d.buf[:0]
			d.segs, d.pkts, d.buf = nil, nil, nil
			d.segHead, d.pktHead = 0, 0
		}
		return c
	}
	for i := range c.dir {
		c.dir[i].segs = cc.segs.slice(streamSegs)
		c.dir[i].pkts = cc.pkts.slice(streamPkts)
		c.dir[i].buf = cc.bytes.slice(streamBuf)
	}
	return c
}

// deadConn returns the latest connection of client whose two sides are both
// gone and whose streams still have their room, or nil. Such a connection
// is dead for good (a side never comes back to life) and every path that
// still reaches it (a delivery or close notification already scheduled, a
// heal) checks a side's liveness or pending bytes first and does nothing;
// emptied streams keep it so. Its room can serve the client's next dial.
func (w *World) deadConn(client int32) *conn {
	for i := len(w.conns) - 1; i >= 0; i-- {
		c := w.conns[i]
		if c.client == client && !c.alive[sideClient] && !c.alive[sideBroker] && c.dir[0].segs != nil {
			return c
		}
	}
	return nil
}

// handleDial opens a new connection for client n. The broker side opens one
// latency later, the client side one more latency later. A dial that cannot
// reach the broker (partition, broker down) is parked, as TCP keeps
// retransmitting its SYN, and proceeds when the way is clear (heal or broker
// restart); the client engine's own timeouts decide when to give up.
func (w *World) handleDial(n *node) {
	c := w.carve.newConn(w.deadConn(n.idx))
	c.id, c.client = engine.ConnID(len(w.conns)+1), n.idx
	w.conns = append(w.conns, c)
	c.alive[sideClient] = true
	c.inc[sideClient] = n.inc
	n.app.conn = c.id
	w.tryOpen(c)
}

// tryOpen sends a dial on its way to the broker, or parks it.
func (w *World) tryOpen(c *conn) {
	if !w.nodes[0].up || w.nodes[c.client].partitioned {
		w.parked = append(w.parked, c.id)
		return
	}
	w.sched.push(item{at: w.sched.now + engine.Time(w.latency(c.client)), kind: evOpen, conn: uint64(c.id), side: sideBroker})
}

// unpark retries every parked dial whose client is still waiting for it.
func (w *World) unpark() {
	parked := w.parked
	w.parked = nil
	for _, id := range parked {
		c := w.getConn(id)
		if c.alive[sideClient] && !c.open[sideClient] {
			w.tryOpen(c)
		}
	}
}

// handleOpen is a dial arriving at the broker (side broker) or the broker's
// answer arriving at the client (side client).
func (w *World) handleOpen(it item) {
	c := w.getConn(engine.ConnID(it.conn))
	b := w.nodes[0]
	if it.side == sideBroker {
		if !c.alive[sideClient] {
			return
		}
		if !b.up || w.nodes[c.client].partitioned {
			w.parked = append(w.parked, c.id)
			return
		}
		c.alive[sideBroker] = true
		c.inc[sideBroker] = b.inc
		c.open[sideBroker] = true
		w.connEvent(model.ConnOpened, c, sideBroker)
		w.step(b, engine.ConnOpened{Conn: c.id})
		w.sched.push(item{at: w.sched.now + engine.Time(w.latency(c.client)), kind: evOpen, conn: it.conn, side: sideClient})
		return
	}
	n := w.nodes[c.client]
	if !c.alive[sideClient] || !n.up || n.inc != c.inc[sideClient] {
		return
	}
	c.open[sideClient] = true
	w.connEvent(model.ConnOpened, c, sideClient)
	w.step(n, engine.ConnOpened{Conn: c.id})
}

// handleSend writes a packet's bytes into a connection, drawing the network
// faults of the safety phase.
func (w *World) handleSend(n *node, a engine.Send) {
	c := w.getConn(a.Conn)
	if c == nil {
		return
	}
	side, ok := c.sideOf(n)
	if !ok || !c.alive[side] {
		return
	}
	wp := w.wirePacket(n, c, &a) // what the bytes say, not the engine's claim
	pkt := w.compactPacket(wp)
	if pkt.typ == uint8(packet.PUBLISH) {
		pkt.size = uint32(len(a.Data)) // what a Maximum Packet Size bounds [MQTT-3.1.2-25]
	}
	if ca, ok := wp.(*packet.Connack); ok {
		c.rm = receiveMax(ca)
	}
	if cp, ok := wp.(*packet.Connect); ok && cp.CleanStart {
		n.app.hasSession = false // the engine discarded its session before this CONNECT [MQTT-3.1.2-4]
	}
	peer := w.nodeOf(c, peerOf(side))
	w.log.add(hrec{kind: model.Sent, time: int64(w.sched.now), node: n.nameID, peer: peer.nameID, pkt: pkt,
		receiveMax: connectReceiveMax(wp)})
	w.obs.sent(w, c, side, &pkt)
	if c.reset || c.blackhole {
		return
	}
	if w.phase == phaseSafety && (w.cutArmed(c, pkt.typ) || w.networkFault(c)) {
		return
	}
	s := &c.dir[side]
	start := s.base + uint64(len(s.buf))
	s.write(a.Data)
	end := start + uint64(len(a.Data))
	s.pkts = append(s.pkts, pktMark{end: end, pkt: pkt})
	at := w.sched.now + engine.Time(w.latency(c.client))
	if w.phase == phaseSafety && len(a.Data) > 1 && w.rnd.PPM(w.prof.ChunkPPM) {
		w.stats.Faults["chunked"]++
		pieces := 2 + w.rnd.IntN(3)
		for i := 1; i < pieces; i++ {
			cut := start + uint64(1+w.rnd.IntN(int(end-start-1)))
			if cut <= s.lastSegEnd(start) {
				continue
			}
			at = s.addSegment(cut, at) + engine.Time(1000+w.rnd.IntN(100_000))
		}
	}
	at = s.addSegment(end, at)
	if !s.scheduled && !s.held {
		s.scheduled = true
		w.sched.push(item{at: at, kind: evDeliver, conn: uint64(c.id), side: side})
	}
}

// lastSegEnd returns the end of the last segment, or start if none.
func (s *stream) lastSegEnd(start uint64) uint64 {
	if len(s.segs) > s.segHead {
		if e := s.segs[len(s.segs)-1].end; e > start {
			return e
		}
	}
	return start
}

// networkFault draws a reset or a half-open fault for a packet on c and
// reports whether one happened (the packet is then lost).
func (w *World) networkFault(c *conn) bool {
	switch {
	case w.rnd.PPM(w.prof.ResetPPM):
		w.reset(c)
		return true
	case w.rnd.PPM(w.prof.HalfOpenPPM):
		w.halfOpen(c, uint8(w.rnd.IntN(2)))
		return true
	}
	return false
}

// reset kills c: bytes in flight are lost and each side learns on its own
// time.
func (w *World) reset(c *conn) {
	w.stats.Faults["reset"]++
	w.traceConn(c, "reset")
	w.cutEvent(c, "reset")
	c.reset = true
	c.dir[0].drop()
	c.dir[1].drop()
	for side := uint8(0); side < 2; side++ {
		if c.alive[side] {
			w.sched.push(item{at: w.sched.now + engine.Time(w.latency(c.client)), kind: evCloseSeen, conn: uint64(c.id), side: side, id: 1})
		}
	}
}

// halfOpen makes c silent: bytes vanish both ways; side told (0 or 1) is
// told the connection closed, the other (or both, with told >= 2) only finds
// out through keep-alive.
func (w *World) halfOpen(c *conn, told uint8) {
	w.stats.Faults["half-open"]++
	w.traceConn(c, "half-open")
	w.cutEvent(c, "half-open")
	c.blackhole = true
	c.dir[0].drop()
	c.dir[1].drop()
	if told < 2 && c.alive[told] {
		w.sched.push(item{at: w.sched.now + engine.Time(w.latency(c.client)), kind: evCloseSeen, conn: uint64(c.id), side: told, id: 1})
	}
}

// cutEvent records model Cut of c (what, "reset" or "half-open", as the
// reason) for readers of the history.
func (w *World) cutEvent(c *conn, what string) {
	w.log.add(hrec{kind: model.Cut, time: int64(w.sched.now), node: w.nodes[c.client].nameID,
		peer: w.nodes[0].nameID, reason: w.strs.id(what)})
}

// traceConn writes a connection-level trace line.
func (w *World) traceConn(c *conn, what string) {
	w.tr.begin(w.sched.now, w.nodes[c.client].name, what)
	w.tr.int(" conn=", int64(c.id))
	w.tr.end()
}

// handleDeliver hands the bytes of one stream that have arrived to the
// receiving side, emitting Received for each packet completed by them.
func (w *World) handleDeliver(it item) {
	c := w.getConn(engine.ConnID(it.conn))
	dir := it.side
	s := &c.dir[dir]
	s.scheduled = false
	if c.reset || c.blackhole || !s.pending() {
		return
	}
	if w.nodes[c.client].partitioned {
		s.held = true
		return
	}
	end, next, more := s.due(w.sched.now)
	if end > s.base {
		w.arrive(c, dir, end)
	}
	if more && !c.reset && !c.blackhole && !s.scheduled {
		s.scheduled = true
		w.sched.push(item{at: next, kind: evDeliver, conn: it.conn, side: dir})
	}
}

// arrive delivers the bytes of stream dir of c up to absolute offset end.
func (w *World) arrive(c *conn, dir uint8, end uint64) {
	s := &c.dir[dir]
	recv := peerOf(dir)
	rn := w.nodeOf(c, recv)
	from := w.nodeOf(c, dir)
	if !c.alive[recv] || !rn.up || rn.inc != c.inc[recv] {
		// Nobody listens: the bytes vanish; a rebooted host answers with a reset.
		s.consume(end)
		s.dropPkts(end)
		if c.gone[recv] && c.alive[dir] && !c.rst {
			c.rst = true
			w.sched.push(item{at: w.sched.now + engine.Time(w.latency(c.client)), kind: evCloseSeen, conn: uint64(c.id), side: dir})
		}
		return
	}
	for s.pktHead < len(s.pkts) && s.pkts[s.pktHead].end <= end {
		m := &s.pkts[s.pktHead]
		w.log.add(hrec{kind: model.Received, time: int64(w.sched.now), node: rn.nameID, peer: from.nameID, pkt: m.pkt})
		w.obs.received(w, c, recv, &m.pkt)
		s.pktHead++
	}
	s.compactPkts()
	base := s.base
	w.step(rn, w.evs.bytes.box(engine.BytesReceived{Conn: c.id, Data: s.buf[:end-base]}))
	if s.base == base {
		s.consume(end)
	}
}

// dropPkts forgets the packet marks up to end.
func (s *stream) dropPkts(end uint64) {
	for s.pktHead < len(s.pkts) && s.pkts[s.pktHead].end <= end {
		s.pktHead++
	}
	s.compactPkts()
}

// compactPkts reclaims the marks already used: all of them when none is
// left, else, once the used ones are at least half, by moving the rest
// down, so a stream that is never drained does not grow for ever.
func (s *stream) compactPkts() {
	switch {
	case s.pktHead == len(s.pkts):
		clear(s.pkts)
		s.pkts = s.pkts[:0]
		s.pktHead = 0
	case s.pktHead >= streamPkts && 2*s.pktHead >= len(s.pkts):
		n := copy(s.pkts, s.pkts[s.pktHead:])
		clear(s.pkts[n:])
		s.pkts = s.pkts[:n]
		s.pktHead = 0
	}
}

// handleCloseConn closes the node's side of a connection; the peer learns
// after the bytes already in flight (a FIN).
func (w *World) handleCloseConn(n *node, a engine.CloseConn) {
	c := w.getConn(a.Conn)
	if c == nil {
		return
	}
	side, ok := c.sideOf(n)
	if !ok || !c.alive[side] {
		return
	}
	var why uint8
	if errors.Is(a.Reason, engine.ErrBrokerKeepAlive) {
		why = model.KeepAliveTimeout // the model judges this close [MQTT-3.1.2-22]
	}
	w.closeSide(c, side, why)
}

// closeSide closes one side and tells the peer after the data in flight;
// why is the reason code of the side's own close for its ConnClosed event.
func (w *World) closeSide(c *conn, side, why uint8) {
	c.alive[side] = false
	if c.open[side] {
		w.log.add(hrec{kind: model.ConnClosed, time: int64(w.sched.now), node: w.nodeOf(c, side).nameID,
			peer: w.nodeOf(c, peerOf(side)).nameID, pkt: cpacket{reason: why}})
	}
	peer := peerOf(side)
	if side == sideClient {
		w.clientConnLost(w.nodes[c.client], c)
	} else {
		w.obs.brokerEnded(c.client, int64(w.sched.now))
	}
	if !c.alive[peer] || c.reset || c.blackhole {
		return
	}
	at := w.sched.now + engine.Time(w.latency(c.client))
	if last := c.dir[side].lastAt; c.dir[side].pending() && last > at {
		at = last
	}
	w.sched.push(item{at: at, kind: evCloseSeen, conn: uint64(c.id), side: peer})
}

// handleCloseSeen tells one side its connection is closed. A FIN or reset
// from the peer (id 0) waits for a partition to heal; a local timeout or a
// middlebox reset (id 1) does not.
func (w *World) handleCloseSeen(it item) {
	c := w.getConn(engine.ConnID(it.conn))
	side := it.side
	if !c.alive[side] {
		return
	}
	if it.id == 0 && w.nodes[c.client].partitioned {
		c.closeHeld[side] = true
		return
	}
	c.alive[side] = false
	n := w.nodeOf(c, side)
	if !n.up || n.inc != c.inc[side] {
		return
	}
	if c.open[side] {
		w.connEvent(model.ConnClosed, c, side)
	}
	w.step(n, engine.ConnClosed{Conn: c.id})
	if side == sideClient {
		w.clientConnLost(n, c)
	} else {
		// The broker's end of the connection came (a FIN, a reset, a
		// half-open told to the broker): its session's Session Expiry
		// Interval runs from here [MQTT-3.1.2-23], as from its own close.
		w.obs.brokerEnded(c.client, int64(w.sched.now))
	}
}

// partition cuts client n off: its bytes and closes wait until heal, and its
// dials time out.
func (w *World) partition(n *node) {
	if n.broker || n.partitioned {
		return
	}
	n.partitioned = true
	w.stats.Faults["partition"]++
	w.log.add(hrec{kind: model.Partition, time: int64(w.sched.now), node: n.nameID, peer: w.nodes[0].nameID})
}

// heal rejoins client n: held bytes and closes go on their way.
func (w *World) heal(n *node) {
	if !n.partitioned {
		return
	}
	n.partitioned = false
	w.log.add(hrec{kind: model.Heal, time: int64(w.sched.now), node: n.nameID, peer: w.nodes[0].nameID})
	for _, c := range w.conns {
		if c.client != n.idx {
			continue
		}
		lat := engine.Time(w.latency(c.client))
		for d := uint8(0); d < 2; d++ {
			s := &c.dir[d]
			if s.held {
				s.held = false
				if !s.scheduled && s.pending() {
					s.scheduled = true
					w.sched.push(item{at: w.sched.now + lat, kind: evDeliver, conn: uint64(c.id), side: d})
				}
			}
			if c.closeHeld[d] {
				c.closeHeld[d] = false
				w.sched.push(item{at: w.sched.now + lat, kind: evCloseSeen, conn: uint64(c.id), side: d})
			}
		}
	}
	w.unpark()
}

// connEvent records that one side of c saw it open or close.
func (w *World) connEvent(k model.Kind, c *conn, side uint8) {
	w.log.add(hrec{kind: k, time: int64(w.sched.now), node: w.nodeOf(c, side).nameID, peer: w.nodeOf(c, peerOf(side)).nameID})
}
