package fuzz

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// FuzzBrokerBytes drives a broker engine (any preset, configuration drawn
// from the input) with one to three client connections at a time: each
// opened with ConnOpened, usually greeted with a valid CONNECT, then fed
// arbitrary bytes in arbitrary chunks and valid client packets aimed at the
// broker's flows, interleaved with ConnClosed, TimerFired and restarts from
// the records the broker persisted. The engine must never panic and must
// keep the invariants of wireChecker plus: the packet ids of its outgoing
// QoS 1/2 PUBLISHes on a connection unique while in flight [MQTT-2.2.1-3],
// and a restart from its own records always succeeds.
func FuzzBrokerBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := runBrokerBytes(data); err != nil {
			t.Fatal(err)
		}
	})
}

// Bounds of one broker run.
const (
	brokerMaxOps    = 256
	brokerMaxOpen   = 3  // connections open at once
	brokerMaxOpened = 12 // connections over the whole run
	brokerMaxBoots  = 4  // restarts over the whole run
)

// Operations a broker run draws from its input.
const (
	bOpRaw        = iota // arbitrary bytes on a connection, chunked
	bOpRaw2              // (twice as likely)
	bOpClient            // a valid client packet on a connection, chunked
	bOpClient2           // (twice as likely)
	bOpOpen              // a new connection, usually with a valid CONNECT
	bOpWorldClose        // the world reports a connection closed
	bOpTimer             // an armed timer fires
	bOpAdvance           // virtual time passes
	bOpRestart           // the broker reboots from its records
	bOpCount
)

// Kinds of valid client packets bOpClient builds.
const (
	bCliPublish = iota
	bCliPuback
	bCliPubrec
	bCliPubcomp
	bCliPubrel
	bCliSubscribe
	bCliUnsubscribe
	bCliPingreq
	bCliDisconnect
	bCliConnect
	bCliAuth
	bCliCount
)

var (
	brokerClientIDs = []string{"a", "b", "a", ""}
	brokerTopics    = []string{"t/a", "t/b", "x"}
	brokerFilters   = []string{"t/a", "t/+", "#", "x"}
	// brokerAckReasons are v5 reason codes valid in PUBACK/PUBREC,
	// brokerCompReasons in PUBREL/PUBCOMP, brokerDiscReasons in a client's
	// DISCONNECT.
	brokerAckReasons  = []packet.ReasonCode{0, 0x10, 0x80, 0x97}
	brokerCompReasons = []packet.ReasonCode{0, 0x92, 0, 0x92}
	brokerDiscReasons = []packet.ReasonCode{0, 0x04, 0x80, 0}
	brokerExpiries    = []uint32{0, 10, 0xFFFFFFFF, 0xFFFFFFFF}
)

// brokerPeer is the harness's view of one client connection.
type brokerPeer struct {
	id       engine.ConnID
	inflight map[uint16]bool // ids of the broker's QoS 1/2 PUBLISHes in flight on it
	acked    map[uint16]bool // ids the client completed during the current Step
	pubrecs  []uint16        // ids of the client's QoS 2 PUBLISHes the broker PUBREC'd
}

// brokerStats counts what a run reached.
type brokerStats struct {
	Sessions     int // CONNACK 0 sent
	PublishesOut int // PUBLISH sent to clients
	Closed       int // CloseConn actions
	Restarts     int // successful reboots from records
}

// brokerRun is one fuzz run against a broker engine.
type brokerRun struct {
	in     *fuzzInput
	cfg    engine.BrokerConfig
	b      *engine.Broker
	w      *wireChecker
	log    wireEvents
	stats  brokerStats
	now    engine.Time
	peers  map[engine.ConnID]*brokerPeer
	last   engine.ConnID // last connection id handed out
	timers map[engine.TimerID]engine.Time
	store  map[string][]byte // the broker's durable records
	boots  int
}

// runBrokerBytes runs one input; it returns what the run reached and the
// first broken invariant.
func runBrokerBytes(data []byte) (brokerStats, error) { return runBroker(data, 0) }

// runBroker is runBrokerBytes with deliberate bugs switched on (the
// harness's canary tests).
func runBroker(data []byte, muts engine.Mutation) (brokerStats, error) {
	in := newFuzzInput(data)
	presets := engine.Presets()
	pre := presets[in.intn(len(presets))]
	cfg := brokerConfig(pre, in.byte())
	cfg.Policy.Mutations = muts
	b, err := engine.NewBroker(cfg, nil)
	if err != nil {
		return brokerStats{}, fmt.Errorf("harness: preset %s: %w", pre.Name, err)
	}
	r := &brokerRun{in: in, cfg: cfg, b: b, w: newWireChecker(true), peers: make(map[engine.ConnID]*brokerPeer),
		timers: make(map[engine.TimerID]engine.Time), store: make(map[string][]byte)}
	err = r.open()
	for i := 0; err == nil && i < brokerMaxOps && !in.done; i++ {
		err = r.op()
	}
	if err != nil {
		return r.stats, fmt.Errorf("preset %s: %w", pre.Name, err)
	}
	return r.stats, nil
}

// brokerConfig builds a valid configuration from one input byte: small
// windows and queues, the queue-full behaviour, topic aliases, packet size.
func brokerConfig(pre engine.Preset, b byte) engine.BrokerConfig {
	cfg := engine.DefaultBrokerConfig(pre.Broker)
	cfg.ReceiveMaximum = []uint16{32, 1, 2, 32}[b&3]
	cfg.InflightV311 = cfg.ReceiveMaximum
	if b&4 != 0 {
		cfg.MaxQueued = 2
	}
	if b&8 != 0 {
		cfg.QueueFull = engine.DropNewest
	}
	if b&16 != 0 {
		cfg.TopicAliasMaximum = 0
	}
	if b&32 != 0 {
		cfg.MaxPacketSize = 128
	}
	return cfg
}

// op runs one operation drawn from the input.
func (r *brokerRun) op() error {
	switch r.in.intn(bOpCount) {
	case bOpRaw, bOpRaw2:
		p, chunk := r.pick(), int(r.in.byte())
		return r.feed(p, r.in.bytes(), chunk)
	case bOpClient, bOpClient2:
		return r.clientPacket(r.pick())
	case bOpOpen:
		return r.open()
	case bOpWorldClose:
		if p := r.pick(); p != nil {
			r.w.worldClosed(p.id)
			delete(r.peers, p.id)
			return r.step(engine.ConnClosed{Conn: p.id})
		}
	case bOpTimer:
		return r.fireTimer()
	case bOpAdvance:
		r.now += engine.Time(r.in.byte()) * engine.Time(100*engine.Millisecond)
	case bOpRestart:
		return r.restart()
	}
	return nil
}

// open opens a new connection and, usually, sends a valid CONNECT on it.
func (r *brokerRun) open() error {
	if len(r.peers) >= brokerMaxOpen || int(r.last) >= brokerMaxOpened {
		return nil
	}
	r.last++
	p := &brokerPeer{id: r.last, inflight: make(map[uint16]bool), acked: make(map[uint16]bool)}
	r.peers[p.id] = p
	r.w.opened(p.id, 0, r.cfg.MaxPacketSize)
	if err := r.step(engine.ConnOpened{Conn: p.id}); err != nil {
		return err
	}
	if r.in.intn(4) == 0 {
		return nil // bytes decide what the first packet is
	}
	return r.sendPacket(p, r.connectPacket(), int(r.in.byte()))
}

// pick returns one open connection chosen by the input (nil when none).
func (r *brokerRun) pick() *brokerPeer {
	if len(r.peers) == 0 {
		return nil
	}
	ids := make([]engine.ConnID, 0, len(r.peers))
	for id := range r.peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return r.peers[ids[r.in.intn(len(ids))]]
}

// connectPacket builds a valid CONNECT: version, client id, clean start,
// keep alive, v5 session expiry, Receive Maximum, Topic Alias Maximum and
// Maximum Packet Size, and a will.
func (r *brokerRun) connectPacket() *packet.Connect {
	p := &packet.Connect{Version: packet.V311, ClientID: brokerClientIDs[r.in.intn(len(brokerClientIDs))],
		CleanStart: r.in.bool(), KeepAlive: uint16(r.in.intn(4)) * 5}
	if r.in.bool() {
		p.Version = packet.V5
	}
	b, w := r.in.byte(), r.in.byte()
	if p.Version == packet.V5 {
		pr := &p.Props
		if e := brokerExpiries[b&3]; e != 0 {
			pr.Present, pr.SessionExpiry = pr.Present.With(packet.PropSessionExpiry), e
		}
		if b&4 != 0 {
			pr.Present, pr.ReceiveMaximum = pr.Present.With(packet.PropReceiveMaximum), uint16(1+b>>6)
		}
		if b&8 != 0 {
			pr.Present, pr.TopicAliasMaximum = pr.Present.With(packet.PropTopicAliasMaximum), 2
		}
		if b&16 != 0 {
			pr.Present, pr.MaximumPacketSize = pr.Present.With(packet.PropMaximumPacketSize), 64
		}
	}
	if w&1 != 0 {
		p.Will = &packet.Will{QoS: packet.QoS(w >> 1 % 3), Retain: w&8 != 0, Topic: "t/will", Payload: []byte("w")}
		if p.Version == packet.V5 && w&16 != 0 {
			p.Will.Props.Present, p.Will.Props.WillDelay = p.Will.Props.Present.With(packet.PropWillDelay), uint32(w>>5)
		}
	}
	return p
}

// feed delivers data on p in chunks of the given size (0: all at once).
func (r *brokerRun) feed(p *brokerPeer, data []byte, chunk int) error {
	if p == nil || len(data) == 0 {
		return nil
	}
	if chunk == 0 {
		chunk = len(data)
	}
	for len(data) > 0 && r.w.isOpen(p.id) {
		n := min(chunk, len(data))
		piece := data[:n]
		data = data[n:]
		bad := r.w.peerBytes(p.id, piece, p.observe)
		if err := r.stepBytes(p, piece, bad); err != nil {
			return err
		}
	}
	return nil
}

// observe notes what the client sent: the broker's flows it completes.
func (p *brokerPeer) observe(pk packet.Packet) {
	switch pk := pk.(type) {
	case *packet.Puback:
		p.acked[pk.PacketID] = true
	case *packet.Pubcomp:
		p.acked[pk.PacketID] = true
	case *packet.Pubrec:
		if pk.Reason.IsError() {
			p.acked[pk.PacketID] = true
		}
	}
}

// version is the protocol version of p's session (3.1.1 before CONNECT).
func (r *brokerRun) version(p *brokerPeer) packet.Version {
	if c := r.w.conns[p.id]; c != nil && c.shadow.Version() != 0 {
		return c.shadow.Version()
	}
	return packet.V311
}

// sendPacket encodes a client packet and feeds it in chunks.
func (r *brokerRun) sendPacket(p *brokerPeer, pk packet.Packet, chunk int) error {
	if p == nil {
		return nil
	}
	v := r.version(p)
	if c, ok := pk.(*packet.Connect); ok {
		v = c.Version
	}
	data, err := packet.Append(nil, v, pk)
	if err != nil {
		return fmt.Errorf("harness: encoding %#v: %w", pk, err)
	}
	return r.feed(p, data, chunk)
}

// clientPacket builds a valid client packet aimed at the broker's flows.
func (r *brokerRun) clientPacket(p *brokerPeer) error {
	if p == nil {
		return r.open()
	}
	kind, chunk := r.in.intn(bCliCount), int(r.in.byte())
	v5 := r.version(p) == packet.V5
	reason := func(codes []packet.ReasonCode) packet.ReasonCode {
		if rc := codes[r.in.intn(len(codes))]; v5 {
			return rc
		}
		return 0
	}
	var pk packet.Packet
	switch kind {
	case bCliPublish:
		pk = r.publish(v5)
	case bCliPuback:
		pk = &packet.Puback{PacketID: r.pickID(p), Reason: reason(brokerAckReasons)}
	case bCliPubrec:
		pk = &packet.Pubrec{PacketID: r.pickID(p), Reason: reason(brokerAckReasons)}
	case bCliPubcomp:
		pk = &packet.Pubcomp{PacketID: r.pickID(p), Reason: reason(brokerCompReasons)}
	case bCliPubrel:
		id := uint16(1 + r.in.intn(4))
		if k := r.in.intn(256); len(p.pubrecs) > 0 && k < 200 {
			id = p.pubrecs[k%len(p.pubrecs)]
		}
		pk = &packet.Pubrel{PacketID: id, Reason: reason(brokerCompReasons)}
	case bCliSubscribe:
		pk = r.subscribe(v5)
	case bCliUnsubscribe:
		pk = &packet.Unsubscribe{PacketID: uint16(1 + r.in.intn(4)), Filters: []string{brokerFilters[r.in.intn(len(brokerFilters))]}}
	case bCliPingreq:
		pk = &packet.Pingreq{}
	case bCliDisconnect:
		d := &packet.Disconnect{Reason: reason(brokerDiscReasons)}
		if e := brokerExpiries[r.in.intn(len(brokerExpiries))]; r.in.bool() && v5 {
			d.Props.Present, d.Props.SessionExpiry = d.Props.Present.With(packet.PropSessionExpiry), e
		}
		pk = d
	case bCliConnect:
		pk = r.connectPacket()
	case bCliAuth:
		if !v5 {
			pk = &packet.Pingreq{}
			break
		}
		a := &packet.Auth{Reason: 0x18}
		a.Props.Present, a.Props.AuthMethod = a.Props.Present.With(packet.PropAuthMethod), "m"
		pk = a
	}
	return r.sendPacket(p, pk, chunk)
}

// publish builds a client PUBLISH; small ids so duplicates happen, and v5
// topic aliases.
func (r *brokerRun) publish(v5 bool) *packet.Publish {
	pk := &packet.Publish{QoS: packet.QoS(r.in.intn(3)), Retain: r.in.bool(), Dup: r.in.bool(),
		Topic: []byte(brokerTopics[r.in.intn(len(brokerTopics))]), Payload: []byte{r.in.byte()}}
	if pk.QoS == 0 {
		pk.Dup = false // [MQTT-3.3.1-2]
	} else {
		pk.PacketID = uint16(1 + r.in.intn(4))
	}
	if alias := r.in.intn(3); v5 && alias > 0 {
		pk.Props.Present, pk.Props.TopicAlias = pk.Props.Present.With(packet.PropTopicAlias), 1
		if alias == 2 {
			pk.Topic = nil // use the alias set earlier
		}
	}
	return pk
}

// subscribe builds a SUBSCRIBE of one or two filters with v5 options.
func (r *brokerRun) subscribe(v5 bool) *packet.Subscribe {
	pk := &packet.Subscribe{PacketID: uint16(1 + r.in.intn(4)), Subs: make([]packet.Subscription, 1+r.in.intn(2))}
	for i := range pk.Subs {
		s := packet.Subscription{Filter: brokerFilters[r.in.intn(len(brokerFilters))], QoS: packet.QoS(r.in.intn(3))}
		if o := r.in.byte(); v5 {
			s.NoLocal, s.RetainAsPublished, s.RetainHandling = o&1 != 0, o&2 != 0, o>>2%3
		}
		pk.Subs[i] = s
	}
	return pk
}

// pickID returns an id of the broker's flows in flight on p (usually) or a
// small arbitrary one.
func (r *brokerRun) pickID(p *brokerPeer) uint16 {
	ids := make([]uint16, 0, len(p.inflight))
	for id := range p.inflight {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	k := r.in.intn(256)
	if len(ids) == 0 || k >= 200 {
		return uint16(1 + k%4)
	}
	return ids[k%len(ids)]
}

// fireTimer fires one armed timer, moving time to it.
func (r *brokerRun) fireTimer() error {
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
	return r.step(engine.TimerFired{Timer: id})
}

// restart reboots the broker from the records it persisted: every
// connection is gone, and NewBroker must accept its own records.
func (r *brokerRun) restart() error {
	if r.boots >= brokerMaxBoots {
		return nil
	}
	r.boots++
	keys := make([]string, 0, len(r.store))
	for k := range r.store {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	recs := make([]engine.Record, len(keys))
	for i, k := range keys {
		recs[i] = engine.Record{Key: k, Value: r.store[k]}
	}
	b, err := engine.NewBroker(r.cfg, recs)
	if err != nil {
		return fmt.Errorf("restart from the broker's own %d records: %w\nlast events:%s", len(recs), err, r.log.String())
	}
	r.b = b
	r.stats.Restarts++
	for id := range r.peers {
		r.w.worldClosed(id)
	}
	clear(r.peers)
	clear(r.timers)
	return r.open()
}

// stepBytes feeds bytes to p's connection and checks the Step.
func (r *brokerRun) stepBytes(p *brokerPeer, data []byte, bad error) error {
	ev := engine.BytesReceived{Conn: p.id, Data: data}
	r.log.add(r.now, ev)
	return r.checkStep(ev, r.b.Step(r.now, ev), p.id, bad)
}

// step feeds one event that carries no bytes and checks the Step.
func (r *brokerRun) step(ev engine.Event) error {
	r.log.add(r.now, ev)
	return r.checkStep(ev, r.b.Step(r.now, ev), 0, nil)
}

// checkStep checks one Step's actions and tracks the broker's flows.
func (r *brokerRun) checkStep(ev engine.Event, acts []engine.Action, badConn engine.ConnID, bad error) error {
	err := r.w.check(acts, badConn, bad, false)
	if err == nil {
		err = r.track(acts)
	}
	if err != nil {
		return fmt.Errorf("%w\nlast events:%s", err, r.log.String())
	}
	if p := r.peers[badConn]; p != nil {
		for id := range p.acked { // completed by the client in this Step
			delete(p.inflight, id)
		}
		clear(p.acked)
	}
	return nil
}

// track follows the actions of one Step.
func (r *brokerRun) track(acts []engine.Action) error {
	for i, a := range acts {
		switch a := a.(type) {
		case engine.Send:
			if err := r.trackSend(a); err != nil {
				return fmt.Errorf("action %d %s: %w", i, describeAction(a), err)
			}
		case engine.CloseConn:
			r.stats.Closed++
			delete(r.peers, a.Conn)
		case engine.SetTimer:
			r.timers[a.Timer] = a.At
		case engine.CancelTimer:
			delete(r.timers, a.Timer)
		case engine.Persist:
			if a.Op == engine.Put {
				r.store[a.Key] = a.Value
			} else {
				delete(r.store, a.Key)
			}
		}
	}
	return nil
}

// trackSend follows the packet ids of what the broker sends on one
// connection. An id the client completed earlier in the same Step may be
// reused at once.
func (r *brokerRun) trackSend(s engine.Send) error {
	p := r.peers[s.Conn]
	if p == nil {
		return nil // closed later in the same Step
	}
	switch pk := s.Packet.(type) {
	case *packet.Connack:
		if pk.Reason == 0 {
			r.stats.Sessions++
		}
	case *packet.Publish:
		r.stats.PublishesOut++
		if pk.QoS == 0 {
			return nil
		}
		if pk.PacketID == 0 {
			return fmt.Errorf("[MQTT-2.2.1-3] QoS %d PUBLISH with packet id 0", pk.QoS)
		}
		if p.inflight[pk.PacketID] && !p.acked[pk.PacketID] {
			return fmt.Errorf("[MQTT-2.2.1-3] packet id %d reused while in flight on connection %d", pk.PacketID, s.Conn)
		}
		p.inflight[pk.PacketID] = true
	case *packet.Pubrec:
		if !pk.Reason.IsError() && !slices.Contains(p.pubrecs, pk.PacketID) {
			p.pubrecs = append(p.pubrecs, pk.PacketID)
		}
	case *packet.Pubcomp:
		if i := slices.Index(p.pubrecs, pk.PacketID); i >= 0 {
			p.pubrecs = slices.Delete(p.pubrecs, i, i+1)
		}
	}
	return nil
}

// updateBrokerSeeds rewrites the committed seed corpus of FuzzBrokerBytes.
var updateBrokerSeeds = flag.Bool("update-broker-seeds", false, "rewrite testdata/fuzz/FuzzBrokerBytes seed files")

// brokerSeed writes an input for runBrokerBytes, op by op, in the order
// runBrokerBytes reads it. Connections are picked by their index among the
// open ones.
type brokerSeed struct {
	b  inputBuilder
	v5 bool
}

// newBrokerSeed starts an input: preset index, config byte, and a first
// connection with a CONNECT of client id "a" (no will).
func newBrokerSeed(preset, cfg byte, v5 bool) *brokerSeed {
	s := &brokerSeed{v5: v5}
	s.b.byte(preset).byte(cfg)
	return s.connect(0, false)
}

// connect writes the open-time choice of a valid CONNECT and its fields.
func (s *brokerSeed) connect(id byte, clean bool) *brokerSeed {
	s.b.byte(1).byte(id).bool(clean).byte(0).bool(s.v5).byte(2).byte(0).byte(0)
	return s
}

func (s *brokerSeed) open(id byte, clean bool) *brokerSeed {
	s.b.byte(bOpOpen)
	return s.connect(id, clean)
}

// openRaw opens a connection whose first bytes come from raw ops.
func (s *brokerSeed) openRaw() *brokerSeed {
	s.b.byte(bOpOpen).byte(0)
	return s
}

func (s *brokerSeed) raw(conn byte, data string) *brokerSeed {
	s.b.byte(bOpRaw).byte(conn).byte(0).bytes([]byte(data))
	return s
}

func (s *brokerSeed) client(conn, kind, chunk byte) *brokerSeed {
	s.b.byte(bOpClient).byte(conn).byte(kind).byte(chunk)
	return s
}

// publish sends a PUBLISH on t/a with packet id 1+idx.
func (s *brokerSeed) publish(conn, qos, idx, chunk byte) *brokerSeed {
	s.client(conn, bCliPublish, chunk).b.byte(qos).bool(false).bool(false).byte(0).byte('p')
	if qos > 0 {
		s.b.byte(idx)
	}
	s.b.byte(0)
	return s
}

// ack sends PUBACK, PUBREC or PUBCOMP for the broker's first id in flight.
func (s *brokerSeed) ack(conn, kind byte) *brokerSeed {
	s.client(conn, kind, 0).b.byte(0).byte(0)
	return s
}

// pubrel releases the first of the client's PUBLISHes the broker PUBREC'd.
func (s *brokerSeed) pubrel(conn byte) *brokerSeed {
	s.client(conn, bCliPubrel, 0).b.byte(0).byte(0).byte(0)
	return s
}

// subscribe subscribes to # at QoS 2.
func (s *brokerSeed) subscribe(conn byte) *brokerSeed {
	s.client(conn, bCliSubscribe, 0).b.byte(0).byte(0).byte(2).byte(2).byte(0)
	return s
}

func (s *brokerSeed) unsubscribe(conn byte) *brokerSeed {
	s.client(conn, bCliUnsubscribe, 0).b.byte(0).byte(2)
	return s
}

func (s *brokerSeed) disconnect(conn byte) *brokerSeed {
	s.client(conn, bCliDisconnect, 0).b.byte(0).byte(0).bool(false)
	return s
}

func (s *brokerSeed) op(op byte) *brokerSeed {
	s.b.byte(op)
	return s
}

// session is a whole valid session: subscribe to everything, publish QoS
// 0/1/2 to itself with every ack both ways, a second client publishing,
// keep alive, disconnect, a restart and a resumed session.
func (s *brokerSeed) session(chunk byte) *brokerSeed {
	s.subscribe(0)
	s.publish(0, 0, 0, chunk)
	s.publish(0, 1, 0, chunk).ack(0, bCliPuback)
	s.publish(0, 2, 1, chunk).pubrel(0).ack(0, bCliPubrec).ack(0, bCliPubcomp)
	s.client(0, bCliPingreq, chunk)
	s.open(1, true).publish(1, 1, 2, chunk).ack(0, bCliPuback)
	s.unsubscribe(0).disconnect(1)
	s.publish(0, 1, 3, 0).op(bOpWorldClose).b.byte(0)
	s.op(bOpRestart).connect(0, false)
	s.ack(0, bCliPuback)
	return s.disconnect(0)
}

// brokerSeeds returns the seed corpus of FuzzBrokerBytes by file name: a
// valid session per preset and version, one chunked a byte at a time, and
// malformed or hostile client input.
func brokerSeeds() map[string][]byte {
	seeds := make(map[string][]byte)
	for i, p := range engine.Presets() {
		seeds["session-"+p.Name+"-v5"] = newBrokerSeed(byte(i), 0, true).session(0).b.buf
		seeds["session-"+p.Name+"-v4"] = newBrokerSeed(byte(i), 0, false).session(0).b.buf
	}
	seeds["session-fixed-v5-bytewise"] = newBrokerSeed(1, 0, true).session(1).b.buf
	seeds["session-fixed-v4-small"] = newBrokerSeed(1, 1|4|8, false).session(2).b.buf
	seeds["close-first-not-connect"] = newBrokerSeed(1, 0, true).openRaw().raw(1, "\xc0\x00").b.buf
	seeds["close-bad-level"] = newBrokerSeed(1, 0, true).openRaw().raw(1, "\x10\x0c\x00\x04MQTT\x06\x02\x00\x3c\x00\x00").b.buf
	seeds["close-garbage-v5"] = newBrokerSeed(1, 0, true).raw(0, "\x00\x00").b.buf
	seeds["close-garbage-v4"] = newBrokerSeed(1, 0, false).raw(0, "\x63\x02\x00\x01").b.buf
	seeds["close-length"] = newBrokerSeed(1, 0, true).raw(0, "\x30\xff\xff\xff\xff\x01").b.buf
	seeds["close-second-connect"] = newBrokerSeed(1, 0, true).client(0, bCliConnect, 0).connect(1, false).b.buf
	seeds["close-auth"] = newBrokerSeed(1, 0, true).client(0, bCliAuth, 0).b.buf
	seeds["close-too-large"] = newBrokerSeed(1, 32, true).raw(0, "\x30\xc8\x01\x00\x01t").b.buf
	seeds["hostile-unknown-pubrel-legacy"] = newBrokerSeed(0, 0, true).pubrel(0).b.buf
	seeds["hostile-unknown-pubrel-fixed"] = newBrokerSeed(1, 0, false).pubrel(0).client(0, bCliPingreq, 0).b.buf
	return seeds
}

// TestBrokerSeeds runs every seed, checks it reaches what it is meant to,
// and checks the committed corpus matches brokerSeeds (rewritten with
// -update-broker-seeds).
func TestBrokerSeeds(t *testing.T) {
	seeds := brokerSeeds()
	for name, data := range seeds {
		st, err := runBrokerBytes(data)
		if err != nil {
			t.Errorf("seed %s: %v", name, err)
			continue
		}
		switch {
		case strings.HasPrefix(name, "session-") && (st.Sessions < 3 || st.PublishesOut < 4 || st.Restarts != 1):
			t.Errorf("seed %s reaches too little: %+v", name, st)
		case strings.HasPrefix(name, "close-") && st.Closed == 0:
			t.Errorf("seed %s never closes a connection: %+v", name, st)
		}
	}
	checkSeedDir(t, "testdata/fuzz/FuzzBrokerBytes", seeds, *updateBrokerSeeds)
}

// TestBrokerHarnessCatchesBugs is the harness's canary: the broker's
// deliberate id-reuse bug must make runBroker fail, while the same input
// passes without it.
func TestBrokerHarnessCatchesBugs(t *testing.T) {
	for _, v5 := range []bool{false, true} {
		data := newBrokerSeed(1, 0, v5).subscribe(0).publish(0, 1, 0, 0).publish(0, 1, 1, 0).b.buf
		if _, err := runBroker(data, 0); err != nil {
			t.Fatalf("v5=%v without the bug: %v", v5, err)
		}
		_, err := runBroker(data, engine.MutReuseInflightID)
		if err == nil || !strings.Contains(err.Error(), "MQTT-2.2.1-3") {
			t.Fatalf("v5=%v with the bug: got %v, want an id reuse", v5, err)
		}
	}
}
