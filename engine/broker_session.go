package engine

import (
	"strconv"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// expiryNever is the Session Expiry Interval that never expires (v5), and
// the interval of a 3.1.1 CleanSession=0 session.
const expiryNever = 0xFFFFFFFF

// brokerSession is the broker's state for one client id.
type brokerSession struct {
	id        string
	version   packet.Version
	who       accessClient // who last connected to it, for the ACL's per-message read check
	expiry    uint32       // Session Expiry Interval, seconds
	conn      *brokerConn
	offlineAt Time // when the session went offline; -1: online when last saved

	subs      map[string]subOptions // filter -> options; nil until the first subscription (setSub)
	hasSubIDs bool                  // some subscription was made with a Subscription Identifier
	inflight  []brokerOut           // outbound messages with a packet id, in send order
	inflBase  []brokerOut           // inflight's whole array: inflight ends at its end (pushInflight)
	heldIdx   int                   // no inflight entry below it waits to be sent on conn
	queue     []brokerOut           // outbound QoS 1/2 messages waiting, FIFO
	queueBase []brokerOut           // queue's whole array: queue ends at its end (pushQueue)
	inbound   seqTable              // QoS 2 ids received and awaiting PUBREL (Method B), with the ConnID that owes it (0: none)
	ids       IDAllocator           // outbound packet ids

	will        *brokerWill
	willTimer   TimerID
	expiryTimer TimerID

	persisted bool       // records of this session may exist
	keys      brokerKeys // record key prefixes, built on first use (recPrefixes)
}

// brokerWill is a session's will message.
type brokerWill struct {
	msg    brokerMsg
	qos    packet.QoS
	retain bool
	delay  uint32 // v5 Will Delay Interval, seconds
}

// setSub records the session's subscription to filter, making the map on
// the first one (a publishing client's session never needs it).
func (s *brokerSession) setSub(filter string, o subOptions) {
	if s.subs == nil {
		s.subs = make(map[string]subOptions)
	}
	s.subs[filter] = o
	s.hasSubIDs = s.hasSubIDs || o.SubID != 0
}

// durable reports whether the session's state goes through Persist actions:
// with persistence on and a session that outlives its connection.
func (b *Broker) durable(s *brokerSession) bool {
	return b.store.enabled() && s.expiry > 0
}

// handleConnect opens or resumes the session of a CONNECT and answers
// CONNACK; on a session-present resume it resends the inflight messages.
func (b *Broker) handleConnect(c *brokerConn, p *packet.Connect) {
	c.version = p.Version
	v5 := p.Version == packet.V5
	if v5 && p.Props.Present.Has(packet.PropAuthMethod) {
		b.refuse(c, packet.BadAuthenticationMethod, "enhanced authentication is not supported")
		return
	}
	if !b.admit(c, p) {
		return
	}
	id, assigned := p.ClientID, ""
	if id == "" {
		if !v5 && !p.CleanStart {
			// [MQTT-3.1.3-8] a zero-byte ClientId with CleanSession=0: refuse with 0x02.
			b.refuse(c, packet.V3IdentifierRejected, "empty client id with CleanSession=0")
			return
		}
		id = b.assignID() // [MQTT-3.1.3-7] 3.1.1; v5 [MQTT-3.1.3-6] assigns and returns it
		if v5 {
			assigned = id
		}
	}
	s := b.takeOver(id)
	sp := false
	if s != nil && p.CleanStart {
		b.endSession(s) // [MQTT-3.1.2-4] v5 Clean Start; 3.1.1 [MQTT-3.1.2-6]
		s = nil
	}
	if s == nil {
		s = b.newSession(id)
	} else {
		sp = true // [MQTT-3.2.2-3] v5; 3.1.1 [MQTT-3.2.2-2]
	}
	b.attach(c, s, p)
	if !b.durable(s) {
		b.dropRecords(s)
	}
	b.saveSession(s)
	b.sendConnack(c, sp && b.pol.Mutations&MutSessionPresentZero == 0, assigned) // the mutation resumes the session, says 0
	if sp {
		b.resend(s)
	}
	b.pump(s)
}

// takeOver closes an existing connection of the client id [MQTT-3.1.4-2]
// (v5: DISCONNECT 0x8E first [MQTT-3.1.4-3]), ends its session if it is due
// or has expiry 0, cancels a delayed will [MQTT-3.1.3-9], and returns the
// session left to resume, if any.
func (b *Broker) takeOver(id string) *brokerSession {
	s := b.sessions[id]
	if s == nil {
		return nil
	}
	if old := s.conn; old != nil {
		b.closeWith(old, packet.SessionTakenOver, ErrBrokerTakenOver) // [MQTT-3.1.4-3]
	} else {
		b.expireIfDue(s)
	}
	s = b.sessions[id]
	if s == nil {
		return nil
	}
	// [MQTT-3.1.3-9] a new connection within the Will Delay: no will.
	b.cancelTimer(&s.willTimer)
	s.will = nil
	b.cancelTimer(&s.expiryTimer)
	return s
}

// attach binds the connection to the session and applies the CONNECT.
func (b *Broker) attach(c *brokerConn, s *brokerSession, p *packet.Connect) {
	v5 := p.Version == packet.V5
	s.version = p.Version
	s.expiry = 0
	switch {
	case v5 && p.Props.Present.Has(packet.PropSessionExpiry):
		s.expiry = p.Props.SessionExpiry
	case !v5 && !p.CleanStart:
		s.expiry = expiryNever // 3.1.1 CleanSession=0: the session never expires
	}
	if v5 && b.pol.Mutations&MutIgnoreSessionExpiry != 0 {
		s.expiry = expiryNever // canary: every session kept for good
	}
	s.conn, s.offlineAt = c, -1
	c.sess, c.connected = s, true
	s.who = c.who // the ACL of the client now behind the session
	if p.Will != nil {
		s.will = &brokerWill{msg: newBrokerMsg(&b.bytes, []byte(p.Will.Topic), p.Will.Payload, &p.Will.Props, v5), qos: p.Will.QoS, retain: p.Will.Retain}
		s.will.msg.checked = true // decoded with the CONNECT
		if v5 && p.Will.Props.Present.Has(packet.PropWillDelay) {
			s.will.delay = p.Will.Props.WillDelay
		}
	}
	c.window = int(b.cfg.InflightV311)
	if v5 {
		c.window = 65535
		if p.Props.Present.Has(packet.PropReceiveMaximum) && p.Props.ReceiveMaximum > 0 && b.pol.Mutations&MutIgnoreReceiveMax == 0 {
			c.window = int(p.Props.ReceiveMaximum) // [MQTT-3.3.4-9] the client's Receive Maximum gates every send
		}
		if p.Props.Present.Has(packet.PropMaximumPacketSize) && b.pol.Mutations&MutIgnoreMaxSize == 0 {
			c.maxOut = p.Props.MaximumPacketSize // [MQTT-3.1.2-25]
		}
		c.aliasOut = b.newAliasOut(p)
	}
	if ka := b.keepAliveFor(c, p); ka > 0 {
		c.keepAlive = Duration(ka) * Second * 3 / 2 // 3.1.1 [MQTT-3.1.2-24], v5 [MQTT-3.1.2-22]
		c.kaTimer = b.setTimer(b.now+Time(c.keepAlive), brokerTimer{kind: timerKeepAlive, conn: c.id})
	}
}

// sendConnack accepts the connection.
func (b *Broker) sendConnack(c *brokerConn, sp bool, assigned string) {
	ack := &packet.Connack{SessionPresent: sp}
	if c.version == packet.V5 {
		pr := &ack.Props
		pr.Present = pr.Present.With(packet.PropReceiveMaximum).With(packet.PropMaximumPacketSize).
			With(packet.PropSubIDAvailable).With(packet.PropSharedSubAvailable)
		if b.cfg.SubscriptionIDs {
			pr.SubIDAvailable = 1 // §3.2.2.3.12
		}
		if b.cfg.SharedSubscriptions {
			pr.SharedSubAvailable = 1 // §3.2.2.3.13
		}
		pr.ReceiveMaximum = b.cfg.ReceiveMaximum
		pr.MaximumPacketSize = b.cfg.MaxPacketSize
		if b.cfg.TopicAliasMaximum > 0 {
			pr.Present = pr.Present.With(packet.PropTopicAliasMaximum)
			pr.TopicAliasMaximum = b.cfg.TopicAliasMaximum
		}
		if c.serverKA > 0 {
			// [MQTT-3.2.2-21] the client uses this Keep Alive instead of its own.
			pr.Present = pr.Present.With(packet.PropServerKeepAlive)
			pr.ServerKeepAlive = c.serverKA
		}
		if assigned != "" {
			pr.Present = pr.Present.With(packet.PropAssignedClientID)
			pr.AssignedClientID = assigned
		}
	}
	b.send(c, ack)
}

// refuse answers CONNACK with a refusing code and closes [MQTT-3.2.2-6].
func (b *Broker) refuse(c *brokerConn, code packet.ReasonCode, msg string) {
	b.sendNow(c, &packet.Connack{Reason: code})
	err := &brokerErr{sentinel: ErrBrokerRefused, reason: code, rule: "§3.2.2.2", msg: msg}
	b.emit(CloseConn{Conn: c.id, Reason: err})
	b.dropConn(c)
}

// assignID returns a fresh client id no session uses.
func (b *Broker) assignID() string {
	for {
		b.assigned++
		id := b.cfg.AssignedIDPrefix + strconv.FormatUint(b.assigned, 10)
		if b.sessions[id] == nil {
			return id
		}
	}
}

// newSession creates and registers an empty session.
func (b *Broker) newSession(id string) *brokerSession {
	s := &brokerSession{id: id} // subs is made by the first subscription (setSub)
	s.ids.Mutations = b.pol.Mutations & MutReuseInflightID
	s.ids.SetLast(b.cfg.StartPacketID)
	b.sessions[id] = s
	return s
}

// endSession discards a session and all its durable records
// [MQTT-4.1.0-2] [MQTT-3.1.2-6].
func (b *Broker) endSession(s *brokerSession) {
	b.cancelTimer(&s.willTimer)
	b.cancelTimer(&s.expiryTimer)
	for _, f := range sortedKeys(s.subs) {
		b.unsub(s, f)
	}
	delete(b.sessions, s.id)
	b.handOn(s) // its shared messages go to other members of their groups
	b.dropRecords(s)
}

// dropRecords deletes every durable record of the session: when it ends, or
// when it is resumed with a Session Expiry of 0 (it will end at close, so a
// restart must not bring back the old state).
//
// The discard is atomic across a crash [MQTT-3.1.2-4] [MQTT-4.1.0-2]: a
// crash keeps any part of an unsynced batch (sim.Disk), so the deletions
// alone could leave a session without some of its subscriptions or
// messages. A tombstone (b/t/ID) naming the sequence number the discard
// took goes first, synced after everything pending (a shared member's
// copies handed on, whose records must not be lost with the session); then
// the deletions, synced; then the tombstone's own deletion, with the next
// batch. A restart that finds a tombstone drops every record of the client
// id older than it (restoreTombs) and finishes the deletion
// (deleteOrphans): the session comes back whole, or not at all.
func (b *Broker) dropRecords(s *brokerSession) {
	if !s.persisted {
		return
	}
	half := b.pol.Mutations&MutHalfDelete != 0 // the canary: no tombstone, and the message records stay
	atomic := b.pol.Persistence == PersistEveryChange && !half
	if atomic {
		b.store.flush(b)
		b.saveTomb(s.id)
		b.store.flush(b)
	}
	for _, f := range sortedKeys(s.subs) {
		b.store.del(keySub(s.id, f))
	}
	for i := range s.inflight {
		if !half {
			b.store.del(b.outRecKey(s, &s.inflight[i]))
		}
	}
	for i := range s.queue {
		if !half {
			b.store.del(b.outRecKey(s, &s.queue[i]))
		}
	}
	for _, id := range s.inbound.ids() {
		if !half {
			b.store.del(b.inKey(s, id))
		}
	}
	b.store.del(keySession(s.id))
	s.persisted = false
	if atomic {
		b.store.flush(b)
		b.store.del(keyTomb(s.id))
	}
}

// armExpiry sets the session's expiry timer, unless it never expires.
func (b *Broker) armExpiry(s *brokerSession) {
	b.cancelTimer(&s.expiryTimer)
	if s.expiry == expiryNever || s.conn != nil {
		return
	}
	s.expiryTimer = b.setTimer(s.offlineAt+Time(int64(s.expiry)*Second), brokerTimer{kind: timerExpiry, client: s.id})
}

// expireIfDue ends an offline session whose expiry has passed, publishing
// its will first ([MQTT-3.1.2-8]: the will goes at the latest when the
// session ends).
func (b *Broker) expireIfDue(s *brokerSession) {
	if s.conn != nil || s.expiry == expiryNever || b.now < s.offlineAt+Time(int64(s.expiry)*Second) {
		return
	}
	if s.will != nil {
		b.publishWill(s)
	}
	b.stats.Expired++
	b.endSession(s) // [MQTT-4.1.0-2]
}

// deleteOrphans deletes the restored records that belong to no session,
// synced before anything else the Step does: left on disk, they would join
// the next session of their client id at a later restart, which must start
// empty [MQTT-3.2.2-3] (a crash that kept part of a session's deletion
// batch leaves such records, and the records older than a tombstone are
// orphans too: restoreTombs). The tombstones go after them.
func (b *Broker) deleteOrphans() {
	if len(b.orphans) == 0 && len(b.tombs) == 0 {
		return
	}
	for _, k := range b.orphans {
		b.store.del(k)
	}
	b.orphans = nil
	if b.pol.Persistence == PersistEveryChange {
		b.store.flush(b)
	}
	for _, k := range b.tombs {
		b.store.del(k) // the discards they guarded are finished and synced
	}
	b.tombs = nil
}

// resumeRestored runs at the first Step after a restart: sessions that were
// online when saved count their expiry from now; due sessions end.
func (b *Broker) resumeRestored() {
	b.deleteOrphans()
	b.finishEnds()
	for _, p := range b.pendingIn {
		b.redoInbound(p)
	}
	b.pendingIn = nil
	for _, id := range b.sortedSessionIDs() {
		s := b.sessions[id]
		if s.offlineAt < 0 || b.pol.Mutations&MutExpiryRestart != 0 { // the canary forgets when the others went offline
			s.offlineAt = b.now // its connection died with the broker
			b.saveSession(s)
		}
		b.resumeWill(s)
		b.expireIfDue(s)
		if b.sessions[id] == s {
			b.armExpiry(s)
		}
	}
}

// resumeWill publishes a restored session's will whose delay has passed
// since the session went offline, or re-arms its timer [MQTT-3.1.2-8].
func (b *Broker) resumeWill(s *brokerSession) {
	if s.will == nil {
		return
	}
	at := s.offlineAt + Time(int64(min(s.will.delay, s.expiry))*Second)
	if b.now >= at {
		b.publishWill(s)
		return
	}
	s.willTimer = b.setTimer(at, brokerTimer{kind: timerWill, client: s.id})
}

// resend retransmits a resumed session's inflight messages after a
// session-present CONNACK, in their original order with their original ids
// [MQTT-4.4.0-1] [MQTT-4.6.0-1]: PUBREL for those already PUBREC'd
// [MQTT-4.3.3-6] (never their PUBLISH), PUBLISH with DUP=1 for the others
// [MQTT-3.3.1-1], within the client's Receive Maximum.
func (b *Broker) resend(s *brokerSession) {
	c := s.conn
	for i := range s.inflight {
		s.inflight[i].conn = 0
	}
	s.heldIdx = len(s.inflight)
	for i := 0; i < len(s.inflight); {
		m := &s.inflight[i]
		if m.pubrel && b.pol.Mutations&MutPublishAfterPubrel == 0 {
			b.sendAck(c, packet.PUBREL, m.id)
			i++
			continue
		}
		if c.outstanding >= c.window {
			s.heldIdx = min(s.heldIdx, i) // sent by pump as the quota frees [MQTT-4.9.0-2]
			i++
			continue
		}
		if b.sendPublish(c, s, i) {
			i++
		}
	}
}

// publishWill publishes and forgets the session's will [MQTT-3.1.2-8].
func (b *Broker) publishWill(s *brokerSession) {
	w := s.will
	s.will = nil
	b.cancelTimer(&s.willTimer)
	b.saveSession(s) // a restart must not publish it again
	if b.pol.Persistence == PersistEveryChange {
		// Synced before any copy is stored: in one unsynced batch a crash
		// could keep a copy and lose the cleared will, and the restarted
		// broker would publish the will again (a QoS 2 duplicate).
		b.store.flush(b)
	}
	b.stats.Wills++
	w.msg.startExpiry(b.now)
	b.fanoutStore(w.msg, w.qos, w.retain, "", nil)
	b.fanoutSend()
}
