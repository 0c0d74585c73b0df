package model

import "sort"

// dir is one direction of a client-broker pair: packets From sends to To.
// Packet ids are assigned independently per direction [MQTT-2.2.1-3].
type dir struct{ from, to string }

// flight is a packet id in use in one direction, as its sender sees it.
type flight struct {
	kind       uint8 // PUBLISH, SUBSCRIBE or UNSUBSCRIBE
	msg        string
	payload    string
	topic      string
	qos        uint8
	seq        int  // global order of the first send
	conn       int  // sender's connection epoch at the last send
	step       int  // step of the last send
	pubrec     bool // a PUBREC < 0x80 was received
	pubrecAt   int  // the sender's crash count when it was
	pubrelSent bool
	pubrelStep int
	done       bool // completed (moved to tracker.past)
	doneAt     int  // the sender's crash count at completion
}

// link is the sender's view of its current connection towards a peer.
type link struct {
	epoch     int  // bumps on every ConnOpened, ConnClosed, crash and CONNACK
	connacked bool // a CONNACK packet was seen in this epoch
	sp        bool // that CONNACK had Session Present = 1
	spStep    int  // step of that CONNACK
	lastSeq   int  // highest original seq resent in this epoch
	pubrecs   map[uint16]bool
}

// tracker follows packet ids in flight per direction and each sender's
// connection epochs. Checks query it before calling update on each event.
type tracker struct {
	inflight map[dir]map[uint16]*flight
	past     map[dir]map[uint16]*flight // the last completed flight per id
	links    map[dir]*link
	crashes  map[string]int
	seq      int
}

func newTracker() *tracker {
	return &tracker{
		inflight: map[dir]map[uint16]*flight{},
		past:     map[dir]map[uint16]*flight{},
		links:    map[dir]*link{},
		crashes:  map[string]int{},
	}
}

// link returns the sender's link towards a peer, creating it.
func (t *tracker) link(d dir) *link {
	l, ok := t.links[d]
	if !ok {
		l = &link{spStep: -1}
		t.links[d] = l
	}
	return l
}

// get returns the flight of id in direction d, or nil.
func (t *tracker) get(d dir, id uint16) *flight { return t.inflight[d][id] }

// sentDir is the direction of the packet sent in e.
func sentDir(e *Event) dir { return dir{e.Node, e.Peer} }

// ackDir is the direction an ack received in e answers: the receiver's own
// outgoing direction.
func ackDir(e *Event) dir { return dir{e.Node, e.Peer} }

// update applies one event to the tracker.
func (t *tracker) update(i int, e *Event) {
	switch e.Kind {
	case Sent:
		t.sent(i, e)
	case Received:
		t.received(i, e)
	case ConnOpened, ConnClosed:
		t.newEpoch(dir{e.Node, peerOf(e)})
	case Connected:
		d := dir{e.Node, peerOf(e)}
		if !t.link(d).connacked {
			t.connack(i, d, e.SessionPresent)
		}
	case Crash:
		t.crash(e.Node)
	}
}

// newEpoch starts a new connection epoch for the sender of d.
func (t *tracker) newEpoch(d dir) {
	l := t.link(d)
	l.epoch++
	l.connacked, l.sp, l.spStep, l.lastSeq, l.pubrecs = false, false, -1, 0, nil
	t.dropRequests(d)
}

// connack records a CONNACK on d's connection: the sender's session is
// resumed (sp) or discarded, which clears every id it had in flight
// [MQTT-3.2.2-5] [MQTT-3.1.2-4].
func (t *tracker) connack(i int, d dir, sp bool) {
	t.newEpoch(d)
	l := t.link(d)
	l.connacked, l.sp, l.spStep = true, sp, i
	if !sp {
		delete(t.inflight, d)
	}
}

// dropRequests forgets SUBSCRIBE/UNSUBSCRIBE ids in flight on d: they are
// not session state and are never resent.
func (t *tracker) dropRequests(d dir) {
	for id, f := range t.inflight[d] {
		if f.kind != PUBLISH {
			delete(t.inflight[d], id)
		}
	}
}

// crash bumps the node's crash count and ends every connection it had.
func (t *tracker) crash(node string) {
	t.crashes[node]++
	for _, d := range t.dirsFrom(node) {
		t.newEpoch(d)
	}
}

// dirsFrom lists the known directions sent by node, sorted.
func (t *tracker) dirsFrom(node string) []dir {
	var out []dir
	for d := range t.links {
		if d.from == node {
			out = append(out, d)
		}
	}
	for d := range t.inflight {
		if d.from == node {
			if _, ok := t.links[d]; !ok {
				out = append(out, d)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].to < out[j].to })
	return out
}

func (t *tracker) sent(i int, e *Event) {
	p, d := &e.Packet, sentDir(e)
	switch p.Type {
	case CONNACK:
		t.connack(i, d, p.Sessions)
	case PUBLISH:
		if p.QoS > 0 {
			t.sentPublish(i, d, p)
		}
	case PUBREL:
		if f := t.get(d, p.ID); f != nil && f.kind == PUBLISH {
			f.pubrelSent, f.pubrelStep = true, i
		}
	case SUBSCRIBE, UNSUBSCRIBE:
		t.put(d, p.ID, &flight{kind: p.Type, seq: t.nextSeq(), conn: t.link(d).epoch, step: i})
	}
}

func (t *tracker) nextSeq() int { t.seq++; return t.seq }

func (t *tracker) put(d dir, id uint16, f *flight) {
	m, ok := t.inflight[d]
	if !ok {
		m = map[uint16]*flight{}
		t.inflight[d] = m
	}
	m[id] = f
}

// sentPublish records a first send or a resend of a QoS>0 PUBLISH.
func (t *tracker) sentPublish(i int, d dir, p *Packet) {
	l := t.link(d)
	if seq, ok := t.resendSeq(d, p); ok {
		if seq > l.lastSeq {
			l.lastSeq = seq
		}
		if f := t.get(d, p.ID); f != nil && f.kind == PUBLISH {
			f.conn, f.step = l.epoch, i
			return
		}
		t.put(d, p.ID, &flight{kind: PUBLISH, msg: p.Msg, payload: p.Payload, topic: p.Topic,
			qos: p.QoS, seq: seq, conn: l.epoch, step: i})
		return
	}
	t.put(d, p.ID, &flight{kind: PUBLISH, msg: p.Msg, payload: p.Payload, topic: p.Topic,
		qos: p.QoS, seq: t.nextSeq(), conn: l.epoch, step: i})
}

// resendSeq reports whether p resends a message this direction already sent
// with that id (in flight, or completed but resent after a crash), and the
// original send order of that message.
func (t *tracker) resendSeq(d dir, p *Packet) (int, bool) {
	if f := t.get(d, p.ID); f != nil && f.kind == PUBLISH && (p.Dup || samePublish(f, p)) {
		return f.seq, true
	}
	if !p.Dup {
		return 0, false
	}
	if f := t.past[d][p.ID]; f != nil && samePublish(f, p) {
		return f.seq, true
	}
	return 0, false
}

// samePublish reports whether p carries the same message as f.
func samePublish(f *flight, p *Packet) bool {
	return f.msg == p.Msg && f.payload == p.Payload && f.topic == p.Topic && f.qos == p.QoS
}

func (t *tracker) received(i int, e *Event) {
	p, d := &e.Packet, ackDir(e)
	switch p.Type {
	case CONNACK:
		t.connack(i, d, p.Sessions)
	case PUBACK, PUBCOMP:
		t.complete(d, p.ID, PUBLISH)
	case PUBREC:
		t.link(d).addPubrec(p.ID)
		if p.Reason >= reasonFailure {
			t.complete(d, p.ID, PUBLISH)
		} else if f := t.get(d, p.ID); f != nil && f.kind == PUBLISH {
			f.pubrec, f.pubrecAt = true, t.crashes[d.from]
		}
	case SUBACK:
		t.complete(d, p.ID, SUBSCRIBE)
	case UNSUBACK:
		t.complete(d, p.ID, UNSUBSCRIBE)
	}
}

func (l *link) addPubrec(id uint16) {
	if l.pubrecs == nil {
		l.pubrecs = map[uint16]bool{}
	}
	l.pubrecs[id] = true
}

// complete frees id in d if a flight of that kind holds it.
func (t *tracker) complete(d dir, id uint16, kind uint8) {
	f := t.get(d, id)
	if f == nil || f.kind != kind {
		return
	}
	delete(t.inflight[d], id)
	if kind == PUBLISH {
		f.done, f.doneAt = true, t.crashes[d.from]
		m, ok := t.past[d]
		if !ok {
			m = map[uint16]*flight{}
			t.past[d] = m
		}
		m[id] = f
	}
}
