package engine

import (
	"errors"
	"slices"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Errors a broker reports in CloseConn.Reason and from NewBroker. Codec
// refusals are the codec's *packet.Error (wrapping packet.ErrMalformed,
// packet.ErrProtocol or packet.ErrTooLarge).
var (
	// ErrBrokerProtocol: the client broke a protocol rule the codec cannot see.
	ErrBrokerProtocol = errors.New("engine: broker: client protocol error")
	// ErrBrokerKeepAlive: no packet within 1.5 times the Keep Alive.
	ErrBrokerKeepAlive = errors.New("engine: broker: keep alive timeout")
	// ErrBrokerTakenOver: a new connection took the client id over.
	ErrBrokerTakenOver = errors.New("engine: broker: session taken over")
	// ErrBrokerUnknownAck: the legacy policy failed the connection on a
	// PUBREL or PUBREC for an unknown packet id.
	ErrBrokerUnknownAck = errors.New("engine: broker: acknowledgement for an unknown packet identifier")
	// ErrBrokerRefused: the CONNECT was refused with a non-zero CONNACK code.
	ErrBrokerRefused = errors.New("engine: broker: connection refused")
	// ErrBrokerReceiveMaximum: the client exceeded the broker's Receive Maximum.
	ErrBrokerReceiveMaximum = errors.New("engine: broker: receive maximum exceeded")
	// ErrBrokerRecord: a durable record could not be decoded; NewBroker names
	// its key.
	ErrBrokerRecord = errors.New("engine: broker: corrupt record")
	// ErrBrokerShutdown: the broker closed the connection because it is
	// stopping cleanly (Shutdown).
	ErrBrokerShutdown = errors.New("engine: broker: server shutting down")
	// ErrBrokerInternal: the codec refused to encode a packet the broker
	// built (a broken invariant, reported instead of a panic).
	ErrBrokerInternal = errors.New("engine: broker: internal error")
)

// BrokerStats are counters of a broker's life, for tests and experiments.
type BrokerStats struct {
	Connections    int    // open connections
	Sessions       int    // sessions, online or not
	Retained       int    // retained messages
	Inflight       int    // outbound QoS 1/2 messages with a packet id, all sessions
	Queued         int    // outbound messages waiting in pending queues, all sessions
	PublishesIn    uint64 // PUBLISH packets accepted from clients (duplicates excluded)
	PublishesOut   uint64 // PUBLISH packets sent to clients, resends included
	DroppedOldest  uint64 // queued messages discarded by DropOldest at MaxQueued
	DroppedNewest  uint64 // arriving messages discarded by DropNewest at MaxQueued
	DroppedQoS0    uint64 // QoS 0 messages for offline sessions (never queued)
	DroppedSize    uint64 // messages larger than the client's Maximum Packet Size
	DroppedExpired uint64 // copies whose Message Expiry passed before delivery started
	Expired        uint64 // sessions ended by Session Expiry
	Wills          uint64 // will messages published
}

// Broker is the sans-IO MQTT broker: sessions, subscriptions, retained and
// will messages, QoS 0/1/2 in both directions, for 3.1.1 and 5.0 clients.
// It is driven by Step alone; see the package documentation.
//
// Events. ConnOpened registers a client connection (its protocol version
// comes from its CONNECT); BytesReceived is stream-decoded per connection;
// ConnClosed takes the session offline (publishing or delaying its will);
// TimerFired runs keep-alive (1.5 x Keep Alive), will-delay and
// session-expiry timers; Shutdown closes every connection and writes the
// durable state out (handleShutdown). Events of unknown or closed
// connections are ignored.
//
// Durable state. With persistence on, every durable change leaves as a
// Persist action under one of these keys (a client id is written
// length-prefixed, "5:alice"), each value carrying an explicit sequence
// number:
//
//	b/s/ID             session: version, expiry, offline time, will
//	b/u/ID/FILTER      subscription and its options
//	b/o/ID/SEQ         outbound message: packet id (0 while queued), QoS,
//	                   PUBREL pending, message; SEQ (20 digits) is its order
//	b/i/ID/PID         inbound QoS 2 id awaiting PUBREL (pending: with the
//	                   message, until its copies are synced)
//	b/r/TOPIC          retained message
//	b/t/ID             tombstone: the session's discard began at this
//	                   sequence number; older records of ID are void
//
// Only sessions that outlive their connection (expiry > 0) are persisted.
// NewBroker rebuilds all of it; connections never survive a restart.
type Broker struct {
	cfg      BrokerConfig
	pol      BrokerPolicy
	now      Time
	conns    map[ConnID]*brokerConn
	sessions map[string]*brokerSession
	tree     topicTree
	retained map[string]*brokerRetained
	timers   map[TimerID]brokerTimer
	stats    BrokerStats

	nextTimer TimerID
	seq       uint64            // last sequence number handed out (records, messages)
	assigned  uint64            // last assigned client id number
	restored  bool              // restored sessions still need their expiry checked
	pendingIn []brokerPendingIn // restored inbound QoS 2 fanouts to finish
	// orphans are the keys of restored records whose session record is
	// gone (a crash kept part of a session's deletion batch): deleted at
	// the first Step, before anything can make a new session of that id
	// that a later restart would give them to.
	orphans []string
	// tombs are the keys of restored tombstones (dropRecords): deleted at
	// the first Step, once the orphans they made are deleted and synced.
	tombs  []string
	tombAt map[string]uint64 // client id -> its restored tombstone's sequence number
	// unfinished are the ids of restored sessions whose end a crash
	// interrupted after it handed copies on (dropHandedOn): ended at the
	// first Step.
	unfinished []string

	store brokerStore   // pending durable changes
	pkts  brokerPackets // packet structs for Send.Packet
	boxes brokerActions // slab-boxed Send and Persist actions

	// per-Step scratch, reused
	out     []Action  // this Step's actions, in order: the slice Step returns, reused by the next Step
	prevOut int       // the length out had at the end of the last Step (its slots still hold references)
	sent    byteArena // the blocks sent bytes are encoded into, never reused
	bytes   byteArena // message copies, record values and keys, never reused
	matches []subMatch

	// Shared subscription groups (broker_shared.go): by full filter, by
	// number, the full filters in order, and the last number given.
	shared    map[string]*sharedGroup
	groupByID map[uint32]*sharedGroup
	groupKeys []string
	groupSeq  uint32
	fan       []brokerFanSend
	fan0      []brokerFanQoS0   // the QoS 0 copies of fan
	decs      []*packet.Decoder // decoders of closed connections, for the next ones
}

// NewBroker validates cfg and rebuilds the broker from restored, the durable
// records that survived (nil for a fresh broker). Connections never survive;
// sessions come back offline and their expiry counts from the restored
// timestamps. A record that cannot be decoded is an error naming its key.
func NewBroker(cfg BrokerConfig, restored []Record) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Broker{
		cfg:      cfg,
		pol:      cfg.Policy,
		conns:    make(map[ConnID]*brokerConn),
		sessions: make(map[string]*brokerSession),
		retained: make(map[string]*brokerRetained),
		timers:   make(map[TimerID]brokerTimer),
		out:      make([]Action, 0, stepActions),
	}
	b.store.init(cfg.Policy)
	b.tree.dollarWild = cfg.Policy.Mutations&MutDollarWildcard != 0 // canary
	if err := b.restore(restored); err != nil {
		return nil, err
	}
	return b, nil
}

// Step feeds one event at virtual time now and returns the actions to carry
// out, in order. Client commands (Connect, Publish, ...) are not broker
// events and yield no action.
//
// The returned slice is reused by the next Step: carry the actions out (or
// copy the slice) before calling Step again; with BrokerConfig.ReuseActions
// so are the actions' boxes. The byte slices inside the actions (Send.Data,
// Persist.Value) and the packets are never reused and may be kept, but must not be modified: a Success acknowledgement's
// Send.Data and Send.Packet are read-only values every engine shares
// (box.go), and a QoS 0 PUBLISH's Send.Packet is shared by its copies.
func (b *Broker) Step(now Time, ev Event) []Action {
	b.now = now
	if b.cfg.ReuseActions {
		b.boxes.rewind()
	}
	b.prevOut, b.out = len(b.out), b.out[:0]
	if b.restored {
		b.restored = false
		b.resumeRestored()
	}
	switch e := ev.(type) {
	case ConnOpened:
		b.handleOpened(e.Conn)
	case BytesReceived:
		b.handleBytes(e.Conn, e.Data)
	case ConnClosed:
		b.handleClosed(e.Conn)
	case TimerFired:
		b.handleTimer(e.Timer)
	case Shutdown:
		b.handleShutdown()
	}
	b.store.endStep(b)
	return b.finish()
}

// Stats returns the broker's counters.
func (b *Broker) Stats() BrokerStats {
	s := b.stats
	s.Connections = len(b.conns)
	s.Sessions = len(b.sessions)
	s.Retained = len(b.retained)
	s.Inflight, s.Queued = 0, 0
	for _, ss := range b.sessions {
		s.Inflight += len(ss.inflight)
		s.Queued += len(ss.queue)
	}
	return s
}

// nextSeq hands out the next sequence number.
func (b *Broker) nextSeq() uint64 {
	b.seq++
	return b.seq
}

// emit appends an action.
func (b *Broker) emit(a Action) { b.out = append(b.out, a) }

// send encodes p for c and appends it as a Send. With PersistEveryChange the
// pending durable changes are flushed and synced first, so nothing leaves the
// broker before the state it depends on is durable. It reports false when
// the packet was not sent (too large for the client, or unencodable).
func (b *Broker) send(c *brokerConn, p packet.Packet) bool {
	if b.pol.Persistence == PersistEveryChange {
		b.store.flush(b)
	}
	return b.sendNow(c, p)
}

// sendPub is send for a PUBLISH of a message. One whose topic and
// properties passed the codec's checks when decoded (brokerMsg.checked)
// is encoded without repeating them (packet.AppendPublishValid: the
// forwarded properties are a subset of the decoded ones, with a Message
// Expiry Interval). On a connection with a table of topic aliases the
// PUBLISH carries one (broker_alias_out.go).
func (b *Broker) sendPub(c *brokerConn, p *packet.Publish, checked bool) bool {
	if b.pol.Mutations&MutMaxSizeEstimate != 0 && c.maxOut > 0 && len(p.Topic)+len(p.Payload)+maxSizeAllowance > int(c.maxOut) {
		return false // the mutant's guess, not the encoded size [MQTT-3.1.2-25]
	}
	if c.aliasOut != nil {
		return b.sendPubAliased(c, p, checked)
	}
	return b.sendPubPlain(c, p, checked)
}

// maxSizeAllowance is what MutMaxSizeEstimate allows for a PUBLISH's
// header and properties besides its topic and payload, instead of
// measuring the encoded packet.
const maxSizeAllowance = 64

// sendPubPlain is sendPub for p as it is.
func (b *Broker) sendPubPlain(c *brokerConn, p *packet.Publish, checked bool) bool {
	if !checked {
		return b.send(c, p)
	}
	if b.pol.Persistence == PersistEveryChange {
		b.store.flush(b)
	}
	b.sent.reserve(sendRoom(p))
	buf, err := packet.AppendPublishValid(b.sent.free, c.version, p)
	if err != nil || (c.maxOut > 0 && uint32(len(buf)) > c.maxOut) {
		return false // [MQTT-3.1.2-25] (the space written is not handed out)
	}
	return b.emitSend(c, p, b.sent.take(buf))
}

// sendAck sends the Success acknowledgement of type t (PUBACK to PUBCOMP)
// for packet id id, as send does: the shared ack (box.go) without looking
// it up by its type when there is one.
func (b *Broker) sendAck(c *brokerConn, t packet.Type, id uint16) bool {
	p, data := sharedAck(c.version, t, id, packet.Success)
	if p == nil {
		return b.send(c, b.pkts.ack(t, id, packet.Success))
	}
	if b.pol.Persistence == PersistEveryChange {
		b.store.flush(b)
	}
	return b.emitSend(c, p, data)
}

// sendNow is send without the flush: only the legacy and mutated ack-before-
// persist paths use it directly.
//
// The packet is encoded straight into the sent bytes' arena (box.go) and
// boxed as a Send at once: its bytes are handed out, and never written
// again, as soon as they are taken. A shared ack is not encoded: its
// read-only wire bytes (box.go) are handed out, which relies on nobody
// writing Send.Data.
func (b *Broker) sendNow(c *brokerConn, p packet.Packet) bool {
	data := sharedAckWire(c.version, p) // encoded once for all (box.go)
	if data == nil {
		b.sent.reserve(sendRoom(p))
		buf, err := packet.Append(b.sent.free, c.version, p)
		if err != nil || (c.maxOut > 0 && uint32(len(buf)) > c.maxOut) {
			// [MQTT-3.1.2-25] never send a packet larger than the client's
			// maximum. The space written is not handed out: later packets
			// reuse it.
			return false
		}
		data = b.sent.take(buf)
	}
	return b.emitSend(c, p, data)
}

// emitSend appends a Send of p encoded as data, unless data is larger than
// the client's maximum [MQTT-3.1.2-25].
func (b *Broker) emitSend(c *brokerConn, p packet.Packet, data []byte) bool {
	if c.maxOut > 0 && uint32(len(data)) > c.maxOut {
		return false // [MQTT-3.1.2-25]
	}
	snd, a := b.boxes.send.slot()
	snd.Conn, snd.Data, snd.Packet = c.id, data, p
	b.out = append(b.out, a)
	return true
}

// sendRoom is the arena space to make sure of before encoding p: the
// PUBLISH's topic and payload plus room for its headers and properties, so
// that a large message starts a fresh block instead of outgrowing the space
// left (an encoding that outgrows it is an allocation of its own).
func sendRoom(p packet.Packet) int {
	if q, ok := p.(*packet.Publish); ok {
		return len(q.Topic) + len(q.Payload) + arenaSmall
	}
	return arenaSmall
}

// finish ends the Step's actions, reusing the result slice. The last Step's
// references were dropped by overwriting them; only the slots the new
// result does not reach are cleared (clearing a slot and then writing it
// costs two write barriers while the GC runs), one by one: usually a slot
// or two, not worth a bulk clear call.
func (b *Broker) finish() []Action {
	n := len(b.out)
	if n < b.prevOut {
		all := b.out[:b.prevOut]
		for i := n; i < len(all); i++ {
			all[i] = nil
		}
	}
	if n == 0 {
		return nil
	}
	return b.out
}

// sortedSessionIDs returns the session ids in order.
func (b *Broker) sortedSessionIDs() []string {
	ids := make([]string, 0, len(b.sessions))
	for id := range b.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
