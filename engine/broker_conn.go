package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// brokerConn is one client network connection.
type brokerConn struct {
	id        ConnID
	dec       *packet.Decoder
	version   packet.Version
	connected bool // CONNECT accepted, CONNACK sent
	sess      *brokerSession

	keepAlive Duration // 1.5 x Keep Alive; 0 disables 3.1.1 [MQTT-3.1.2-24], v5 [MQTT-3.1.2-22]
	serverKA  uint16   // the Server Keep Alive to announce in CONNACK (v5), 0 when none
	who       accessClient
	lastRecv  Time
	kaTimer   TimerID

	window      int               // outbound send quota: client's Receive Maximum (v5) or InflightV311
	outstanding int               // QoS 1/2 PUBLISHes sent on this connection and not completed
	inQoS2      int               // inbound QoS 2 ids received on this connection awaiting PUBREL
	maxOut      uint32            // client's Maximum Packet Size, 0 when unlimited
	aliases     map[uint16]string // the client's topic aliases (§3.3.2.3.4)
	aliasOut    *aliasOut         // the broker's, nil when it sends none (broker_alias_out.go)
}

// brokerTimerKind says what a timer is for.
type brokerTimerKind uint8

const (
	timerKeepAlive brokerTimerKind = iota + 1
	timerWill
	timerExpiry
)

// brokerTimer is one armed timer.
type brokerTimer struct {
	kind   brokerTimerKind
	conn   ConnID
	client string
}

// handleOpened registers a new connection. Its version is unknown until the
// CONNECT arrives: the decoder reads it from the protocol level.
func (b *Broker) handleOpened(id ConnID) {
	if old := b.conns[id]; old != nil {
		b.dropConn(old) // a reused id: the world lost the old close
	}
	b.conns[id] = &brokerConn{id: id, dec: b.newDecoder(), lastRecv: b.now}
}

// newDecoder returns a stream decoder for a new connection: a closed
// connection's, reset, when there is one (the broker never holds a decoded
// packet past its handler, so nothing refers to the old stream).
func (b *Broker) newDecoder() *packet.Decoder {
	n := len(b.decs)
	if n == 0 {
		return packet.NewDecoder(0, b.cfg.MaxPacketSize)
	}
	d := b.decs[n-1]
	b.decs[n-1] = nil
	b.decs = b.decs[:n-1]
	d.Reset(0, b.cfg.MaxPacketSize)
	return d
}

// handleClosed forgets a connection the world saw close. The will is
// published: the client did not send DISCONNECT [MQTT-3.1.2-8].
func (b *Broker) handleClosed(id ConnID) {
	if c := b.conns[id]; c != nil {
		b.dropConn(c)
	}
}

// handleBytes stream-decodes the bytes and dispatches every whole packet.
func (b *Broker) handleBytes(id ConnID, data []byte) {
	c := b.conns[id]
	if c == nil {
		return // a stale connection
	}
	if !c.connected || b.pol.Mutations&MutKeepAliveNoReset == 0 {
		c.lastRecv = b.now // [MQTT-3.1.2-22] every packet restarts the keep-alive
	}
	c.dec.Feed(data)
	for c.dec != nil { // dropConn (the only way out of b.conns) releases the decoder
		p, err := c.dec.Next()
		if err != nil {
			b.fail(c, err)
			return
		}
		if p == nil {
			return
		}
		b.dispatch(c, p)
	}
}

// dispatch hands one decoded packet to its handler.
func (b *Broker) dispatch(c *brokerConn, p packet.Packet) {
	if !c.connected {
		if cp, ok := p.(*packet.Connect); ok {
			b.handleConnect(c, cp)
			return
		}
		// [MQTT-3.1.0-1] the first packet MUST be CONNECT.
		b.fail(c, protocolErr(packet.ProtocolError, "MQTT-3.1.0-1", "first packet is %v, not CONNECT", p.Type()))
		return
	}
	switch p := p.(type) {
	case *packet.Connect:
		// [MQTT-3.1.0-2] a second CONNECT is a protocol violation.
		b.fail(c, protocolErr(packet.ProtocolError, "MQTT-3.1.0-2", "second CONNECT"))
	case *packet.Publish:
		b.handlePublish(c, p)
	case *packet.Puback:
		b.handlePuback(c, p)
	case *packet.Pubrec:
		b.handlePubrec(c, p)
	case *packet.Pubrel:
		b.handlePubrel(c, p)
	case *packet.Pubcomp:
		b.handlePubcomp(c, p)
	case *packet.Subscribe:
		b.handleSubscribe(c, p)
	case *packet.Unsubscribe:
		b.handleUnsubscribe(c, p)
	case *packet.Pingreq:
		b.handlePingreq(c)
	case *packet.Disconnect:
		b.handleDisconnect(c, p)
	case *packet.Auth:
		b.handleAuth(c, p)
	default:
		b.fail(c, protocolErr(packet.ProtocolError, "§2.1.2", "%v is not a client-to-server packet", p.Type()))
	}
}

// handlePingreq answers PINGRESP [MQTT-3.12.4-1].
func (b *Broker) handlePingreq(c *brokerConn) {
	b.send(c, &packet.Pingresp{})
}

// handleAuth refuses AUTH: the broker offers no enhanced authentication, so
// AUTH without an Authentication Method in CONNECT is a protocol error
// [MQTT-4.12.0-1].
func (b *Broker) handleAuth(c *brokerConn, _ *packet.Auth) {
	b.fail(c, protocolErr(packet.ProtocolError, "MQTT-4.12.0-1", "AUTH without enhanced authentication"))
}

// handleDisconnect closes the connection at the client's request. DISCONNECT
// 0x00 (and every 3.1.1 DISCONNECT) discards the will [MQTT-3.14.4-3]
// [MQTT-3.1.2-10]; any other v5 reason keeps it (0x04 asks for it, and an
// error reason such as 0x80 ends the connection abnormally: the will is
// removed only after a Normal disconnection [MQTT-3.1.2-10]). A v5 Session
// Expiry Interval on DISCONNECT replaces the session's, except 0 to
// non-zero, a protocol error.
func (b *Broker) handleDisconnect(c *brokerConn, p *packet.Disconnect) {
	s := c.sess
	if c.version == packet.V5 && p.Props.Present.Has(packet.PropSessionExpiry) {
		if s.expiry == 0 && p.Props.SessionExpiry != 0 {
			// §3.14.2.2.2: non-zero after a CONNECT with 0 is a Protocol Error.
			b.fail(c, protocolErr(packet.ProtocolError, "§3.14.2.2.2", "DISCONNECT sets Session Expiry after CONNECT had 0"))
			return
		}
		s.expiry = p.Props.SessionExpiry
	}
	keepWill := c.version == packet.V5 && p.Reason != packet.NormalDisconnection &&
		b.pol.Mutations&MutWillDropOnDisconnect == 0 // the canary drops it for every reason
	if !keepWill && b.pol.Mutations&MutWillOnNormalDisconnect == 0 { // the canary keeps it
		s.will = nil // [MQTT-3.14.4-3] [MQTT-3.1.2-10]
	}
	b.emit(CloseConn{Conn: c.id})
	b.dropConn(c)
}

// fail answers a malformed packet or protocol error and closes the
// connection [MQTT-4.13.1-1]: before CONNACK with a refusing CONNACK, after
// it with a v5 DISCONNECT carrying the reason code (3.1.1 just closes).
func (b *Broker) fail(c *brokerConn, err error) {
	code := reasonOf(err)
	if !c.connected {
		c.version = c.dec.Version()
	}
	switch {
	case !c.connected && c.dec.Version() == packet.V5:
		b.sendNow(c, &packet.Connack{Reason: answerReason(packet.CONNACK, code)})
	case !c.connected && code == packet.UnsupportedProtocolVersion:
		// [MQTT-3.1.2-2] 3.1.1: unsupported level → CONNACK 0x01, then close.
		c.version = packet.V311
		b.sendNow(c, &packet.Connack{Reason: packet.V3UnacceptableProtocol})
	case c.connected && c.version == packet.V5:
		b.sendNow(c, &packet.Disconnect{Reason: answerReason(packet.DISCONNECT, code)}) // [MQTT-4.13.1-1]
	}
	b.emit(CloseConn{Conn: c.id, Reason: err})
	b.dropConn(c)
}

// answerReason is the code to refuse with in a v5 packet of type t: code
// itself when t's table allows it, else 0x82 Protocol Error (a CONNECT
// received after the session has 0x84 Unsupported Protocol Version, which
// only CONNACK may carry).
func answerReason(t packet.Type, code packet.ReasonCode) packet.ReasonCode {
	if code.ValidIn(packet.V5, t) {
		return code
	}
	return packet.ProtocolError
}

// reasonOf returns the v5 reason code of an error: the codec's, or the one
// a brokerErr carries, or 0x80 Unspecified error.
func reasonOf(err error) packet.ReasonCode {
	var pe *packet.Error
	if errors.As(err, &pe) {
		return pe.Reason
	}
	var be *brokerErr
	if errors.As(err, &be) {
		return be.reason
	}
	return packet.UnspecifiedError
}

// brokerErr is a broker-detected violation: a rule id, a reason code to
// answer with, and a sentinel to wrap.
type brokerErr struct {
	sentinel error
	reason   packet.ReasonCode
	rule     string
	msg      string
}

func (e *brokerErr) Error() string {
	return e.sentinel.Error() + ": [" + e.rule + "] " + e.msg + " (" + e.reason.String() + ")"
}

func (e *brokerErr) Unwrap() error { return e.sentinel }

// protocolErr builds a brokerErr wrapping ErrBrokerProtocol.
func protocolErr(reason packet.ReasonCode, rule, format string, args ...any) error {
	return &brokerErr{sentinel: ErrBrokerProtocol, reason: reason, rule: rule, msg: fmt.Sprintf(format, args...)}
}

// closeWith sends a v5 DISCONNECT with reason (3.1.1 has none) and closes.
func (b *Broker) closeWith(c *brokerConn, reason packet.ReasonCode, err error) {
	if c.connected && c.version == packet.V5 {
		b.sendNow(c, &packet.Disconnect{Reason: reason})
	}
	b.emit(CloseConn{Conn: c.id, Reason: err})
	b.dropConn(c)
}

// dropConn forgets the connection and takes its session offline: the will is
// published or delayed, and a session with expiry 0 ends [MQTT-4.1.0-2].
func (b *Broker) dropConn(c *brokerConn) {
	delete(b.conns, c.id)
	if c.dec != nil {
		b.decs = append(b.decs, c.dec) // for the next connection (newDecoder)
		c.dec = nil
	}
	b.cancelTimer(&c.kaTimer)
	s := c.sess
	if s == nil || s.conn != c {
		return
	}
	s.conn = nil
	s.offlineAt = b.now
	if s.will != nil {
		if delay := min(s.will.delay, s.expiry); delay == 0 {
			b.publishWill(s) // [MQTT-3.1.2-8]
		} else {
			s.willTimer = b.setTimer(b.now+Time(int64(min(s.will.delay, s.expiry))*Second), brokerTimer{kind: timerWill, client: s.id})
		}
	}
	if s.expiry == 0 {
		b.endSession(s) // [MQTT-4.1.0-2] [MQTT-3.1.2-6]
		return
	}
	if b.finiteNoQueue(s) { // the canary: its unsent messages go with the connection
		for i := range s.queue {
			b.delOut(s, &s.queue[i])
			s.queue[i] = brokerOut{}
		}
		s.queue = s.queue[:0]
	}
	b.saveSession(s)
	b.armExpiry(s)
}

// handleShutdown closes every connection, in ConnID order, as a server
// shutting down (v5 DISCONNECT 0x8B; 3.1.1 has no DISCONNECT from the
// server), taking each session offline as a lost connection does, then
// writes every pending durable change (mosquitto saves its database on a
// clean shutdown). Under LegacyPersistNone nothing is written.
func (b *Broker) handleShutdown() {
	ids := make([]ConnID, 0, len(b.conns))
	for id := range b.conns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if c := b.conns[id]; c != nil {
			b.closeWith(c, packet.ServerShuttingDown, ErrBrokerShutdown)
		}
	}
	b.store.snapshot(b)
}

// setTimer arms a new timer and returns its id.
func (b *Broker) setTimer(at Time, t brokerTimer) TimerID {
	b.nextTimer++
	b.timers[b.nextTimer] = t
	b.emit(SetTimer{Timer: b.nextTimer, At: at})
	return b.nextTimer
}

// cancelTimer cancels *id if armed and zeroes it.
func (b *Broker) cancelTimer(id *TimerID) {
	if *id == 0 {
		return
	}
	if _, ok := b.timers[*id]; ok {
		delete(b.timers, *id)
		b.emit(CancelTimer{Timer: *id})
	}
	*id = 0
}

// handleTimer runs an armed timer: keep-alive, will delay or session expiry.
func (b *Broker) handleTimer(id TimerID) {
	t, ok := b.timers[id]
	if !ok {
		return // cancelled
	}
	delete(b.timers, id)
	switch t.kind {
	case timerKeepAlive:
		b.keepAliveFired(id, t.conn)
	case timerWill:
		if s := b.sessions[t.client]; s != nil && s.willTimer == id {
			s.willTimer = 0
			if s.conn == nil {
				b.publishWill(s) // [MQTT-3.1.2-8] the Will Delay has elapsed
			}
		}
	case timerExpiry:
		if s := b.sessions[t.client]; s != nil && s.expiryTimer == id {
			s.expiryTimer = 0
			b.expireIfDue(s)
		}
	}
}

// keepAliveFired closes a connection silent for 1.5 times its Keep Alive
// [MQTT-3.1.2-24] (v5 [MQTT-3.1.2-22]), or re-arms the timer.
func (b *Broker) keepAliveFired(id TimerID, conn ConnID) {
	c := b.conns[conn]
	if c == nil || c.kaTimer != id {
		return
	}
	c.kaTimer = 0
	deadline := c.lastRecv + Time(c.keepAlive)
	if b.now < deadline {
		c.kaTimer = b.setTimer(deadline, brokerTimer{kind: timerKeepAlive, conn: c.id})
		return
	}
	b.closeWith(c, packet.KeepAliveTimeout, ErrBrokerKeepAlive)
}
