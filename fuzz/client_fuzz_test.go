package fuzz

import (
	"encoding/binary"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// FuzzClientBytes drives a connected client engine (any preset, 3.1.1 or 5.0,
// chosen by the input) with an arbitrary inbound byte stream in arbitrary
// chunks, valid broker packets aimed at its flows, and application commands,
// acks, timers and reconnects. The engine must never panic and must keep the
// invariants of wireChecker plus the client's own: packet ids of outgoing
// PUBLISH/SUBSCRIBE/UNSUBSCRIBE unique while in flight [MQTT-2.2.1-3], and
// no PUBLISH of a message after its PUBREL [MQTT-4.3.3-6].
func FuzzClientBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := runClientBytes(data); err != nil {
			t.Fatal(err)
		}
	})
}

// Bounds of one client run, so every input runs in bounded time.
const (
	clientMaxOps        = 256
	clientMaxReconnects = 8
)

// Operations a client run draws from its input.
const (
	cOpRaw         = iota // arbitrary bytes from the broker, chunked
	cOpRaw2               // (twice as likely)
	cOpServer             // a valid broker packet aimed at the client's flows, chunked
	cOpPublish            // Publish command
	cOpSubscribe          // Subscribe command
	cOpUnsubscribe        // Unsubscribe command
	cOpAck                // the application acks a delivery
	cOpTimer              // an armed timer fires
	cOpAdvance            // virtual time passes
	cOpWorldClose         // the world reports the connection closed
	cOpDisconnect         // Disconnect command
	cOpReconnect          // Connect, Dial, ConnOpened, CONNACK
	cOpCount
)

// Kinds of valid broker packets cOpServer builds.
const (
	cSrvPuback = iota
	cSrvPubrec
	cSrvPubcomp
	cSrvSuback
	cSrvUnsuback
	cSrvPublish
	cSrvPubrel
	cSrvPingresp
	cSrvDisconnect
	cSrvConnack
	cSrvCount
)

var (
	clientTopics  = []string{"t/a", "t/b", "x"}
	clientFilters = []string{"t/a", "t/+", "#", "x"}
	// clientWindows are the 3.1.1 send windows a run may configure.
	clientWindows = []uint16{65535, 1, 2, 16}
	// clientRecvMax are the v5 CONNACK Receive Maximum values (0: absent).
	clientRecvMax = []uint16{0, 1, 2, 5}
	// clientAckReasons are v5 reason codes valid in PUBACK/PUBREC,
	// clientCompReasons in PUBCOMP, clientDiscReasons in a broker's DISCONNECT.
	clientAckReasons  = []packet.ReasonCode{0, 0x10, 0x80, 0x97}
	clientCompReasons = []packet.ReasonCode{0, 0x92, 0, 0x92}
	clientDiscReasons = []packet.ReasonCode{0, 0x80, 0x8E, 0x93}
)

// clientFlowKind says what an outgoing packet id is used for.
type clientFlowKind uint8

const (
	flowPublish clientFlowKind = iota + 1
	flowSubscribe
	flowUnsubscribe
)

// clientFlow is an outgoing packet id in flight and the command it serves.
type clientFlow struct {
	cmd      engine.CmdID
	kind     clientFlowKind
	qos      packet.QoS
	released bool // QoS 2 and PUBREL sent: the PUBLISH must never leave again
	filters  int  // SUBSCRIBE/UNSUBSCRIBE: how many filters (for a valid ack)
}

// clientStats counts what a run reached, so tests can tell a seed really
// walks the flows it is meant to.
type clientStats struct {
	Delivered    int // Deliver actions
	Acknowledged int // Complete Acknowledged (CONNACK, PUBACK, PUBCOMP, SUBACK, UNSUBACK)
	Closed       int // CloseConn actions
	Sent         int // Send actions
}

// clientRun is one fuzz run against a client engine.
type clientRun struct {
	in      *fuzzInput
	c       *engine.Client
	cfg     engine.ClientConfig
	w       *wireChecker
	log     wireEvents
	stats   clientStats
	now     engine.Time
	conn    engine.ConnID // current connection, 0 before the first
	cmd     engine.CmdID  // last command id handed out
	connCmd engine.CmdID  // the Connect command of the current attempt
	dialled bool          // the last Step emitted Dial

	timers     map[engine.TimerID]engine.Time
	deliveries []engine.DeliveryID // delivered, not acked by the application yet
	flows      map[uint16]*clientFlow
	idOf       map[engine.CmdID]uint16
	pubrecs    []uint16 // ids the client PUBREC'd: PUBRELs the broker owes
	reconnects int
}

// runClientBytes runs one input; it returns what the run reached and the
// first broken invariant.
func runClientBytes(data []byte) (clientStats, error) { return runClient(data, 0) }

// runClient is runClientBytes with deliberate bugs switched on (the
// harness's canary tests).
func runClient(data []byte, muts engine.Mutation) (clientStats, error) {
	in := newFuzzInput(data)
	presets := engine.Presets()
	pre := presets[in.intn(len(presets))]
	cfg := clientConfig(pre, in.byte())
	cfg.Policy.Mutations = muts
	c, err := engine.NewClient(cfg, nil)
	if err != nil {
		return clientStats{}, fmt.Errorf("harness: preset %s: %w", pre.Name, err)
	}
	r := &clientRun{in: in, c: c, cfg: cfg, w: newWireChecker(false),
		timers: make(map[engine.TimerID]engine.Time), flows: make(map[uint16]*clientFlow), idOf: make(map[engine.CmdID]uint16)}
	if err := r.connect(false); err != nil {
		return r.stats, fmt.Errorf("preset %s v%d: %w", pre.Name, cfg.Version, err)
	}
	for i := 0; i < clientMaxOps && !in.done; i++ {
		if err := r.op(); err != nil {
			return r.stats, fmt.Errorf("preset %s v%d: %w", pre.Name, cfg.Version, err)
		}
	}
	return r.stats, nil
}

// clientConfig builds a valid configuration from one input byte: version,
// send window, maximum packet size, keep alive and clean start.
func clientConfig(pre engine.Preset, b byte) engine.ClientConfig {
	cfg := engine.DefaultClientConfig("fuzz-client", pre.Client)
	if b&1 == 0 {
		cfg.Version, cfg.SessionExpiry = packet.V311, 0
	}
	cfg.InflightWindow = clientWindows[b>>1&3]
	if b&8 != 0 {
		cfg.MaxPacketSize = 128
	}
	if b&16 != 0 {
		cfg.KeepAlive = 0
	}
	cfg.CleanStart = b&32 != 0
	return cfg
}

// op runs one operation drawn from the input.
func (r *clientRun) op() error {
	switch r.in.intn(cOpCount) {
	case cOpRaw, cOpRaw2:
		chunk := int(r.in.byte())
		return r.feed(r.in.bytes(), chunk)
	case cOpServer:
		return r.serverPacket()
	case cOpPublish:
		return r.publish()
	case cOpSubscribe:
		return r.subscribe()
	case cOpUnsubscribe:
		r.cmd++
		return r.step(engine.Unsubscribe{Cmd: r.cmd, Filters: []string{clientFilters[r.in.intn(len(clientFilters))]}}, 0, nil)
	case cOpAck:
		return r.ack()
	case cOpTimer:
		return r.fireTimer()
	case cOpAdvance:
		r.now += engine.Time(r.in.byte()) * engine.Time(100*engine.Millisecond)
	case cOpWorldClose:
		if r.w.isOpen(r.conn) {
			r.w.worldClosed(r.conn)
			return r.step(engine.ConnClosed{Conn: r.conn}, 0, nil)
		}
	case cOpDisconnect:
		r.cmd++
		return r.step(engine.Disconnect{Cmd: r.cmd}, 0, nil)
	case cOpReconnect:
		if !r.w.isOpen(r.conn) {
			return r.connect(r.in.bool())
		}
	}
	return nil
}

// connect runs a whole connection attempt: Connect, Dial, ConnOpened, and a
// CONNACK (v5 properties drawn from the input) with the given Session
// Present. A client that does not dial (stuck, busy) is left alone.
func (r *clientRun) connect(sessionPresent bool) error {
	if r.reconnects >= clientMaxReconnects {
		return nil
	}
	r.reconnects++
	r.cmd++
	r.connCmd = r.cmd
	if err := r.step(engine.Connect{Cmd: r.cmd, CleanStart: r.in.bool()}, 0, nil); err != nil || !r.dialled {
		return err
	}
	r.conn++
	r.w.opened(r.conn, r.cfg.Version, r.cfg.MaxPacketSize)
	if err := r.step(engine.ConnOpened{Conn: r.conn}, 0, nil); err != nil {
		return err
	}
	return r.sendPacket(r.connack(sessionPresent, r.in.byte()), 0)
}

// connack builds a successful CONNACK; b chooses the v5 Receive Maximum and
// Server Keep Alive.
func (r *clientRun) connack(sp bool, b byte) *packet.Connack {
	p := &packet.Connack{SessionPresent: sp}
	if r.cfg.Version == packet.V5 {
		if rm := clientRecvMax[b&3]; rm != 0 {
			p.Props.Present = p.Props.Present.With(packet.PropReceiveMaximum)
			p.Props.ReceiveMaximum = rm
		}
		if b&4 != 0 {
			p.Props.Present = p.Props.Present.With(packet.PropServerKeepAlive)
			p.Props.ServerKeepAlive = uint16(b >> 3)
		}
	}
	return p
}

// feed delivers data on the current connection in chunks of the given size
// (0: all at once), reconnecting first when the connection is gone.
func (r *clientRun) feed(data []byte, chunk int) error {
	if len(data) == 0 {
		return nil
	}
	if !r.w.isOpen(r.conn) {
		if err := r.connect(false); err != nil || !r.w.isOpen(r.conn) {
			return err
		}
	}
	if chunk == 0 {
		chunk = len(data)
	}
	for len(data) > 0 && r.w.isOpen(r.conn) {
		n := min(chunk, len(data))
		piece := data[:n]
		data = data[n:]
		bad := r.w.peerBytes(r.conn, piece, nil)
		if err := r.step(engine.BytesReceived{Conn: r.conn, Data: piece}, r.conn, bad); err != nil {
			return err
		}
	}
	return nil
}

// sendPacket encodes a broker packet and feeds it in chunks.
func (r *clientRun) sendPacket(p packet.Packet, chunk int) error {
	data, err := packet.Append(nil, r.cfg.Version, p)
	if err != nil {
		return fmt.Errorf("harness: encoding %#v: %w", p, err)
	}
	return r.feed(data, chunk)
}

// serverPacket builds a valid broker packet aimed at the client's flows.
func (r *clientRun) serverPacket() error {
	kind, chunk := r.in.intn(cSrvCount), int(r.in.byte())
	v5 := r.cfg.Version == packet.V5
	reason := func(codes []packet.ReasonCode) packet.ReasonCode {
		rc := codes[r.in.intn(len(codes))]
		if !v5 {
			return 0
		}
		return rc
	}
	var p packet.Packet
	switch kind {
	case cSrvPuback:
		p = &packet.Puback{PacketID: r.pickID(flowPublish), Reason: reason(clientAckReasons)}
	case cSrvPubrec:
		p = &packet.Pubrec{PacketID: r.pickID(flowPublish), Reason: reason(clientAckReasons)}
	case cSrvPubcomp:
		p = &packet.Pubcomp{PacketID: r.pickID(flowPublish), Reason: reason(clientCompReasons)}
	case cSrvSuback:
		id := r.pickID(flowSubscribe)
		codes := make([]packet.ReasonCode, r.filters(id))
		for i := range codes {
			codes[i] = []packet.ReasonCode{0, 1, 2, 0x80}[r.in.intn(4)]
		}
		p = &packet.Suback{PacketID: id, Reasons: codes}
	case cSrvUnsuback:
		id := r.pickID(flowUnsubscribe)
		u := &packet.Unsuback{PacketID: id}
		if v5 {
			u.Reasons = make([]packet.ReasonCode, r.filters(id))
		}
		p = u
	case cSrvPublish:
		p = r.serverPublish()
	case cSrvPubrel:
		id := uint16(1 + r.in.intn(4))
		if k := r.in.intn(256); len(r.pubrecs) > 0 && k < 200 {
			id = r.pubrecs[k%len(r.pubrecs)]
		}
		p = &packet.Pubrel{PacketID: id}
	case cSrvPingresp:
		p = &packet.Pingresp{}
	case cSrvDisconnect:
		p = &packet.Disconnect{Reason: reason(clientDiscReasons)}
	case cSrvConnack:
		p = r.connack(r.in.bool(), r.in.byte())
	}
	return r.sendPacket(p, chunk)
}

// serverPublish builds a PUBLISH from the broker; small ids so that
// duplicates and reuse happen.
func (r *clientRun) serverPublish() *packet.Publish {
	p := &packet.Publish{QoS: packet.QoS(r.in.intn(3)), Dup: r.in.bool(), Retain: r.in.bool(),
		Topic: []byte(clientTopics[r.in.intn(len(clientTopics))]), Payload: []byte{r.in.byte()}}
	if p.QoS == 0 {
		p.Dup = false // [MQTT-3.3.1-2]
	} else {
		p.PacketID = uint16(1 + r.in.intn(4))
	}
	return p
}

// pickID returns an id in flight of the given kind (usually) or a small
// arbitrary one.
func (r *clientRun) pickID(kind clientFlowKind) uint16 {
	var ids []uint16
	for id, f := range r.flows {
		if f.kind == kind {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	k := r.in.intn(256)
	if len(ids) == 0 || k >= 200 {
		return uint16(1 + k%4)
	}
	return ids[k%len(ids)]
}

// filters returns how many filters the request with id has (1 when unknown).
func (r *clientRun) filters(id uint16) int {
	if f := r.flows[id]; f != nil && f.filters > 0 {
		return f.filters
	}
	return 1
}

// publish issues a Publish command whose payload carries the command id, so
// the PUBLISH packets it causes can be traced back to it.
func (r *clientRun) publish() error {
	r.cmd++
	qos := packet.QoS(r.in.intn(4)) // 3 is invalid: the command must fail cleanly
	topic := clientTopics[r.in.intn(len(clientTopics))]
	payload := make([]byte, 8+r.in.intn(8))
	binary.BigEndian.PutUint64(payload, uint64(r.cmd))
	return r.step(engine.Publish{Cmd: r.cmd, Topic: topic, Payload: payload, QoS: qos, Retain: r.in.bool()}, 0, nil)
}

// subscribe issues a Subscribe command of one or two filters.
func (r *clientRun) subscribe() error {
	r.cmd++
	subs := make([]packet.Subscription, 1+r.in.intn(2))
	for i := range subs {
		subs[i] = packet.Subscription{Filter: clientFilters[r.in.intn(len(clientFilters))], QoS: packet.QoS(r.in.intn(3))}
	}
	return r.step(engine.Subscribe{Cmd: r.cmd, Subs: subs}, 0, nil)
}

// ack acks a pending delivery (or an unknown one).
func (r *clientRun) ack() error {
	k := r.in.intn(256)
	if len(r.deliveries) == 0 || k >= 240 {
		return r.step(engine.Ack{Delivery: engine.DeliveryID(k)}, 0, nil)
	}
	i := k % len(r.deliveries)
	d := r.deliveries[i]
	r.deliveries = slices.Delete(r.deliveries, i, i+1)
	return r.step(engine.Ack{Delivery: d}, 0, nil)
}

// fireTimer fires one armed timer, moving time to it.
func (r *clientRun) fireTimer() error {
	if len(r.timers) == 0 {
		return nil
	}
	ids := make([]engine.TimerID, 0, len(r.timers))
	for id := range r.timers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	id := ids[r.in.intn(len(ids))]
	r.now = max(r.now, r.timers[id])
	delete(r.timers, id)
	return r.step(engine.TimerFired{Timer: id}, 0, nil)
}

// step feeds one event, checks the actions and tracks the client's flows.
func (r *clientRun) step(ev engine.Event, badConn engine.ConnID, bad error) error {
	r.log.add(r.now, ev)
	acts := r.c.Step(r.now, ev)
	r.dialled = false
	err := r.w.check(acts, badConn, bad, r.c.Stuck() != nil)
	if err == nil {
		err = r.track(ev, acts)
	}
	if err != nil {
		return fmt.Errorf("%w\nlast events:%s", err, r.log.String())
	}
	return nil
}

// track follows the actions of one Step.
func (r *clientRun) track(ev engine.Event, acts []engine.Action) error {
	var cmd engine.CmdID // the command this Step serves, if any
	switch e := ev.(type) {
	case engine.Subscribe:
		cmd = e.Cmd
	case engine.Unsubscribe:
		cmd = e.Cmd
	case engine.ConnClosed:
		r.connGone()
	}
	for i, a := range acts {
		var err error
		switch a := a.(type) {
		case engine.Dial:
			r.dialled = true
		case engine.Send:
			r.stats.Sent++
			err = r.trackSend(a.Packet, cmd)
		case engine.Complete:
			r.trackComplete(a)
		case engine.Deliver:
			r.stats.Delivered++
			if a.Msg.QoS > 0 { // only QoS 1/2 deliveries await an Ack
				r.deliveries = append(r.deliveries, a.Delivery)
			}
		case engine.SetTimer:
			r.timers[a.Timer] = a.At
		case engine.CancelTimer:
			delete(r.timers, a.Timer)
		case engine.CloseConn:
			r.stats.Closed++
			r.connGone()
		}
		if err != nil {
			return fmt.Errorf("action %d %s: %w", i, describeAction(a), err)
		}
	}
	return nil
}

// trackSend follows the packet ids of what the client sends.
func (r *clientRun) trackSend(p packet.Packet, cmd engine.CmdID) error {
	switch p := p.(type) {
	case *packet.Publish:
		if p.QoS == 0 {
			return nil
		}
		if len(p.Payload) < 8 {
			return fmt.Errorf("PUBLISH %d lost its payload tag: % x", p.PacketID, p.Payload)
		}
		owner := engine.CmdID(binary.BigEndian.Uint64(p.Payload))
		if f := r.flows[p.PacketID]; f != nil && f.cmd == owner && f.released {
			return fmt.Errorf("[MQTT-4.3.3-6] PUBLISH %d of command %d after its PUBREL", p.PacketID, owner)
		}
		return r.claim(p.PacketID, &clientFlow{cmd: owner, kind: flowPublish, qos: p.QoS})
	case *packet.Pubrel:
		// A PUBREL for an id not in flight, or in flight as QoS 1, answers
		// an unknown PUBREC.
		if f := r.flows[p.PacketID]; f != nil && f.kind == flowPublish && f.qos == 2 {
			f.released = true
		}
	case *packet.Subscribe:
		return r.claimRequest(p.PacketID, cmd, flowSubscribe, len(p.Subs))
	case *packet.Unsubscribe:
		return r.claimRequest(p.PacketID, cmd, flowUnsubscribe, len(p.Filters))
	case *packet.Pubrec:
		if !slices.Contains(r.pubrecs, p.PacketID) {
			r.pubrecs = append(r.pubrecs, p.PacketID)
		}
	case *packet.Pubcomp:
		if i := slices.Index(r.pubrecs, p.PacketID); i >= 0 {
			r.pubrecs = slices.Delete(r.pubrecs, i, i+1)
		}
	}
	return nil
}

// claimRequest records the id of a SUBSCRIBE/UNSUBSCRIBE, which leaves only
// in the Step of its command.
func (r *clientRun) claimRequest(id uint16, cmd engine.CmdID, kind clientFlowKind, n int) error {
	if cmd == 0 {
		return fmt.Errorf("packet %d sent outside the Step of its command", id)
	}
	return r.claim(id, &clientFlow{cmd: cmd, kind: kind, filters: n})
}

// claim records that id now serves f.cmd; an id still serving another
// command is a reuse [MQTT-2.2.1-3].
func (r *clientRun) claim(id uint16, f *clientFlow) error {
	if id == 0 {
		return fmt.Errorf("[MQTT-2.2.1-3] packet id 0 for command %d", f.cmd)
	}
	if old := r.flows[id]; old != nil {
		if old.cmd != f.cmd {
			return fmt.Errorf("[MQTT-2.2.1-3] packet id %d given to command %d while command %d still has it in flight", id, f.cmd, old.cmd)
		}
		return nil // a resend of the same flow
	}
	if prev, ok := r.idOf[f.cmd]; ok && prev != id {
		if old := r.flows[prev]; old != nil && old.cmd == f.cmd {
			delete(r.flows, prev) // the message moved to a new id
		}
	}
	r.flows[id] = f
	r.idOf[f.cmd] = id
	return nil
}

// trackComplete frees the id of a command that finished.
func (r *clientRun) trackComplete(a engine.Complete) {
	if a.Result == engine.Acknowledged {
		r.stats.Acknowledged++
	}
	if a.Cmd == r.connCmd {
		if a.Result == engine.Acknowledged && r.w.isOpen(r.conn) {
			r.w.setConnected(r.conn)
		}
		return
	}
	if a.Result == engine.Accepted {
		return
	}
	if id, ok := r.idOf[a.Cmd]; ok {
		if f := r.flows[id]; f != nil && f.cmd == a.Cmd {
			delete(r.flows, id)
		}
		delete(r.idOf, a.Cmd)
	}
}

// connGone applies the end of a connection: with LegacyRetransmitNone the
// PUBLISHes sent and not yet PUBREC'd are forgotten, never completed, and
// their ids are free again.
func (r *clientRun) connGone() {
	if r.cfg.Policy.Retransmit != engine.LegacyRetransmitNone {
		return
	}
	for id, f := range r.flows {
		if f.kind == flowPublish && !f.released {
			delete(r.flows, id)
			delete(r.idOf, f.cmd)
		}
	}
}

// updateClientSeeds rewrites the committed seed corpus of FuzzClientBytes.
var updateClientSeeds = flag.Bool("update-client-seeds", false, "rewrite testdata/fuzz/FuzzClientBytes seed files")

// clientSeed writes an input for runClientBytes, op by op, in the order
// runClientBytes reads it.
type clientSeed struct{ b inputBuilder }

// newClientSeed starts an input: preset index, config byte (bit 0: v5),
// then the first connection (no clean start, CONNACK property byte 0).
func newClientSeed(preset, cfg byte) *clientSeed {
	s := &clientSeed{}
	s.b.byte(preset).byte(cfg).bool(false).byte(0)
	return s
}

func (s *clientSeed) raw(chunk byte, data string) *clientSeed {
	s.b.byte(cOpRaw).byte(chunk).bytes([]byte(data))
	return s
}

// ack sends PUBACK, PUBREC or PUBCOMP for the first id in flight.
func (s *clientSeed) ack(kind, chunk byte) *clientSeed {
	s.b.byte(cOpServer).byte(kind).byte(chunk).byte(0).byte(0)
	return s
}

// suback acks the first pending SUBSCRIBE with n granted codes.
func (s *clientSeed) suback(n int) *clientSeed {
	s.b.byte(cOpServer).byte(cSrvSuback).byte(0).byte(0)
	for range n {
		s.b.byte(1)
	}
	return s
}

func (s *clientSeed) unsuback() *clientSeed {
	s.b.byte(cOpServer).byte(cSrvUnsuback).byte(0).byte(0)
	return s
}

// serverPublish sends a PUBLISH of qos with packet id 1+idx.
func (s *clientSeed) serverPublish(qos, idx, chunk byte) *clientSeed {
	s.b.byte(cOpServer).byte(cSrvPublish).byte(chunk).byte(qos).bool(false).bool(false).byte(0).byte('m')
	if qos > 0 {
		s.b.byte(idx)
	}
	return s
}

// pubrel sends PUBREL for the first id the client PUBREC'd.
func (s *clientSeed) pubrel() *clientSeed {
	s.b.byte(cOpServer).byte(cSrvPubrel).byte(0).byte(0).byte(0)
	return s
}

func (s *clientSeed) server(kind byte) *clientSeed {
	s.b.byte(cOpServer).byte(kind).byte(0)
	return s
}

func (s *clientSeed) publish(qos byte) *clientSeed {
	s.b.byte(cOpPublish).byte(qos).byte(0).byte(0).bool(false)
	return s
}

func (s *clientSeed) subscribe() *clientSeed {
	s.b.byte(cOpSubscribe).byte(0).byte(1).byte(1)
	return s
}

func (s *clientSeed) unsubscribe() *clientSeed {
	s.b.byte(cOpUnsubscribe).byte(1)
	return s
}

// ackDelivery acks the oldest pending delivery.
func (s *clientSeed) ackDelivery() *clientSeed {
	s.b.byte(cOpAck).byte(0)
	return s
}

// keepAlive lets 61 s pass and fires the first armed timer (the keep alive).
func (s *clientSeed) keepAlive() *clientSeed {
	s.b.byte(cOpAdvance).byte(250).byte(cOpAdvance).byte(250).byte(cOpAdvance).byte(110)
	s.b.byte(cOpTimer).byte(0)
	return s
}

func (s *clientSeed) op(op byte) *clientSeed {
	s.b.byte(op)
	return s
}

// session is a whole valid session: subscribe, receive QoS 0/1/2, publish
// QoS 1/2 with every ack, unsubscribe, keep alive, disconnect, reconnect.
func (s *clientSeed) session(chunk byte) *clientSeed {
	s.subscribe().suback(1)
	s.serverPublish(0, 0, chunk).serverPublish(1, 0, chunk).ackDelivery()
	s.serverPublish(2, 1, chunk).ackDelivery().pubrel()
	s.publish(1).ack(cSrvPuback, chunk)
	s.publish(2).ack(cSrvPubrec, chunk).ack(cSrvPubcomp, chunk)
	s.unsubscribe().unsuback()
	s.keepAlive().server(cSrvPingresp)
	s.publish(1).op(cOpWorldClose)
	s.op(cOpReconnect).b.bool(true).bool(false).byte(0)
	s.ack(cSrvPuback, 0)
	return s.op(cOpDisconnect)
}

// clientSeeds returns the seed corpus of FuzzClientBytes by file name: a
// valid session per preset and version, chunked one byte at a time, and
// malformed or hostile broker input.
func clientSeeds() map[string][]byte {
	seeds := make(map[string][]byte)
	for i, p := range engine.Presets() {
		seeds["session-"+p.Name+"-v5"] = newClientSeed(byte(i), 1).session(0).b.buf
		seeds["session-"+p.Name+"-v4"] = newClientSeed(byte(i), 0).session(0).b.buf
	}
	seeds["session-fixed-v5-bytewise"] = newClientSeed(1, 1).session(1).b.buf
	seeds["session-legacy-v4-window1"] = newClientSeed(0, 2).session(3).b.buf
	seeds["close-reserved-type"] = newClientSeed(1, 1).raw(0, "\x00\x00").b.buf
	seeds["close-qos3"] = newClientSeed(1, 1).raw(0, "\x36\x05\x00\x01t\x00\x01").b.buf
	seeds["close-length"] = newClientSeed(1, 0).raw(2, "\x30\xff\xff\xff\xff\x01").b.buf
	seeds["close-topic-alias"] = newClientSeed(1, 1).raw(0, "\x30\x07\x00\x01t\x03\x23\x00\x01").b.buf
	seeds["close-second-connack"] = newClientSeed(1, 1).server(cSrvConnack).b.bool(true).byte(0).buf
	seeds["close-server-disconnect"] = newClientSeed(1, 1).server(cSrvDisconnect).b.byte(2).buf
	seeds["hostile-unknown-pubrel-legacy"] = newClientSeed(0, 1).pubrel().raw(0, "\x40\x02\x00\x01").b.buf
	seeds["hostile-unknown-pubrel-fixed-v4"] = newClientSeed(1, 0).pubrel().publish(1).b.buf
	seeds["close-too-large"] = newClientSeed(1, 9).serverPublish(0, 0, 0).raw(0, "\x30\xc8\x01\x00\x01t").b.buf
	return seeds
}

// TestClientSeeds runs every seed, checks it reaches what it is meant to,
// and checks the committed corpus matches clientSeeds (rewritten with
// -update-client-seeds).
func TestClientSeeds(t *testing.T) {
	seeds := clientSeeds()
	for name, data := range seeds {
		st, err := runClientBytes(data)
		if err != nil {
			t.Errorf("seed %s: %v", name, err)
			continue
		}
		switch {
		case strings.HasPrefix(name, "session-") && (st.Delivered < 3 || st.Acknowledged < 6):
			t.Errorf("seed %s reaches too little: %+v", name, st)
		case strings.HasPrefix(name, "close-") && st.Closed == 0:
			t.Errorf("seed %s never closes the connection: %+v", name, st)
		}
	}
	checkSeedDir(t, "testdata/fuzz/FuzzClientBytes", seeds, *updateClientSeeds)
}

// TestClientHarnessCatchesBugs is the harness's canary: the engine's
// deliberate bugs must make runClient fail with the rule they break, while
// the same inputs pass without them.
func TestClientHarnessCatchesBugs(t *testing.T) {
	tests := []struct {
		name string
		mut  engine.Mutation
		data []byte
		rule string
	}{
		{"reused id", engine.MutReuseInflightID, newClientSeed(1, 1).publish(1).publish(2).b.buf, "MQTT-2.2.1-3"},
		{"reused id v4", engine.MutReuseInflightID, newClientSeed(1, 0).publish(2).subscribe().b.buf, "MQTT-2.2.1-3"},
		{"publish after pubrel", engine.MutPublishAfterPubrel,
			newClientSeed(1, 1).publish(2).ack(cSrvPubrec, 0).op(cOpWorldClose).op(cOpReconnect).b.bool(true).bool(false).byte(0).buf, "MQTT-4.3.3-6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data
			if _, err := runClient(data, 0); err != nil {
				t.Fatalf("without the bug: %v", err)
			}
			_, err := runClient(data, tt.mut)
			if err == nil || !strings.Contains(err.Error(), tt.rule) {
				t.Fatalf("with the bug: got %v, want an error citing %s", err, tt.rule)
			}
		})
	}
}
