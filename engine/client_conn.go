package engine

import (
	"fmt"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// handleConnectCmd starts a connection attempt: Dial.
func (c *Client) handleConnectCmd(e Connect) {
	if c.state != csIdle {
		c.complete(e.Cmd, Failed, ErrClientBusy)
		return
	}
	will := c.cfg.Will
	if e.Will != nil {
		if err := e.Will.validate(c.v); err != nil {
			c.complete(e.Cmd, Failed, fmt.Errorf("%w: %w", ErrClientBadCommand, err))
			return
		}
		will = e.Will
	}
	c.connectCmd, c.connectPending, c.will = e.Cmd, true, will
	if e.CleanStart {
		c.forceClean = false // asked for: not a forced discard (see wipeDone)
	}
	c.clean = e.CleanStart || c.cfg.CleanStart || c.forceClean
	c.state = csDialing
	c.emit(Dial{})
}

// handleConnOpened sends CONNECT on the connection the client dialled. A
// clean start discards the session before anything is sent [MQTT-3.1.2-4].
func (c *Client) handleConnOpened(e ConnOpened) {
	if c.state != csDialing {
		c.emit(CloseConn{Conn: e.Conn, Reason: fmt.Errorf("%w: connection %d was not dialled", ErrClientProtocol, e.Conn)})
		return
	}
	c.conn = e.Conn
	c.state = csConnecting
	if c.spareDec == nil {
		c.spareDec = packet.NewDecoder(c.v, c.cfg.MaxPacketSize)
	} else {
		c.spareDec.Reset(c.v, c.cfg.MaxPacketSize) // the last connection's: nothing refers to its stream
	}
	c.dec = c.spareDec
	c.resetAliasIn() // [MQTT-3.3.2-7]
	if c.clean {
		c.discardSession() // [MQTT-3.1.2-4] [MQTT-3.1.2-6]
	}
	if !c.send(c.connectPacket()) {
		return
	}
	c.setTimer(ctConnack, c.now+Time(c.connackWait()))
}

// connackWait is how long the client waits for CONNACK: ConnackTimeout,
// but no longer than its Keep Alive, since it sends nothing while it waits
// and must not stay silent longer than that [MQTT-3.1.2-23].
func (c *Client) connackWait() Duration {
	if ka := Duration(c.cfg.KeepAlive) * Second; ka > 0 && ka < c.cfg.ConnackTimeout {
		return ka
	}
	return c.cfg.ConnackTimeout
}

// connectPacket builds CONNECT from the config. Without a
// TopicAliasMaximum the client announces none, so the broker may send no
// aliases [MQTT-3.1.2-27].
func (c *Client) connectPacket() *packet.Connect {
	p := &packet.Connect{Version: c.v, ClientID: c.cfg.ClientID, CleanStart: c.clean, KeepAlive: c.cfg.KeepAlive,
		Will: willPacket(c.v, c.will)}
	if c.cfg.Username != "" {
		p.HasUsername, p.Username, p.HasPassword, p.Password = true, c.cfg.Username, true, c.cfg.Password
	}
	if c.v == packet.V5 {
		if c.cfg.SessionExpiry != 0 {
			p.Props.Present = p.Props.Present.With(packet.PropSessionExpiry)
			p.Props.SessionExpiry = c.cfg.SessionExpiry
		}
		if c.cfg.ReceiveMaximum != 65535 {
			p.Props.Present = p.Props.Present.With(packet.PropReceiveMaximum)
			p.Props.ReceiveMaximum = c.cfg.ReceiveMaximum
		}
		if c.cfg.TopicAliasMaximum > 0 {
			p.Props.Present = p.Props.Present.With(packet.PropTopicAliasMaximum)
			p.Props.TopicAliasMaximum = c.cfg.TopicAliasMaximum // [MQTT-3.1.2-26]
		}
		if c.cfg.MaxPacketSize < clientMaxPacketSizeLimit {
			p.Props.Present = p.Props.Present.With(packet.PropMaximumPacketSize)
			p.Props.MaximumPacketSize = c.cfg.MaxPacketSize
		}
	}
	return p
}

// clientMinPacketLimit is the largest packet the client sends besides
// PUBLISH, SUBSCRIBE and UNSUBSCRIBE (which fail one by one when too
// large): a v5 PUBACK, PUBREC, PUBREL or PUBCOMP with a reason code, 5
// bytes. A broker's Maximum Packet Size below it is refused
// [MQTT-3.2.2-15].
const clientMinPacketLimit = 5

// handleConnack settles Session Present, sets up keep alive, the send
// quota and the broker's Maximum Packet Size, and resends or starts the
// clientOutbound flows.
func (c *Client) handleConnack(p *packet.Connack) {
	if c.state != csConnecting {
		c.protocolError(clientErr(packet.ProtocolError, "MQTT-3.2.0-2", "second CONNACK"))
		return
	}
	c.cancelTimer(ctConnack)
	if p.Reason != 0 {
		// [MQTT-3.2.2-7] [MQTT-4.13.2-1] a refused connection is closed.
		err := fmt.Errorf("%w: CONNACK reason %#02x", ErrClientRefused, byte(p.Reason))
		c.emit(Complete{Cmd: c.connectCmd, Result: Failed, Err: err, Reasons: []packet.ReasonCode{p.Reason}})
		c.connectPending = false
		c.closeConn(err)
		return
	}
	if p.SessionPresent && c.clean {
		// [MQTT-3.2.2-2] Clean Start 1 must get Session Present 0.
		c.protocolError(clientErr(packet.ProtocolError, "MQTT-3.2.2-2", "Session Present 1 after Clean Start 1"))
		return
	}
	if p.SessionPresent && !c.hasSession {
		// [MQTT-3.2.2-4] no state here but the broker has a session: close,
		// and start clean next time so the client cannot loop on this.
		c.forceClean = true
		c.protocolError(clientErr(packet.ProtocolError, "MQTT-3.2.2-4", "Session Present 1 but the client holds no session"))
		return
	}
	if c.forceClean && !c.cfg.CleanStart && c.v != packet.V5 {
		c.wipeDone()
		return
	}
	if p.Props.Present.Has(packet.PropMaximumPacketSize) && p.Props.MaximumPacketSize < clientMinPacketLimit &&
		c.cfg.Policy.Mutations&MutIgnoreBrokerMaxSize == 0 {
		// [MQTT-3.2.2-15] the client could not even acknowledge a PUBLISH.
		err := fmt.Errorf("%w: the broker's Maximum Packet Size %d is below the %d bytes of the client's acknowledgements",
			ErrClientPacketTooLarge, p.Props.MaximumPacketSize, clientMinPacketLimit)
		c.complete(c.connectCmd, Failed, err)
		c.connectPending = false
		c.closeConn(err)
		return
	}
	if !p.SessionPresent && c.hasState() {
		c.sessionLost() // [MQTT-3.2.2-5]
	}
	c.state = csConnected
	c.hasSession, c.forceClean = true, false
	c.storeMarker()
	c.applyConnackProps(p)
	c.emit(Complete{Cmd: c.connectCmd, Result: Acknowledged, Reasons: []packet.ReasonCode{p.Reason}, Session: p.SessionPresent})
	c.connectPending = false
	if p.SessionPresent {
		c.resendSession() // [MQTT-4.4.0-1]
	} else {
		c.startFresh()
	}
}

// wipeDone ends a 3.1.1 connection whose Clean Session 1 was forced only to
// discard the broker's session after [MQTT-3.2.2-4]. A 3.1.1 clean session
// lasts only as long as its connection [MQTT-3.1.2-6]: a QoS 2 PUBLISH sent
// on it and unacknowledged when the connection drops meets Session Present
// 0 on the next connection, and could then only be dropped (loss) or sent
// again as new (a duplicate, if the broker had it). So nothing is sent on
// it: as 3.1.1 §3.2.2.2 says, the client discards the session on both sides
// "by disconnecting, connecting with Clean Session set to 1 and then
// disconnecting again". It sends DISCONNECT and closes [MQTT-3.14.4-1]
// [MQTT-3.14.4-2]; the Connect fails with ErrClientSessionDiscarded, and
// the next one opens a persistent session (Clean Session 0, Session Present
// 0). v5 needs no second step: Clean Start 1 keeps the Session Expiry.
func (c *Client) wipeDone() {
	c.forceClean = false
	err := fmt.Errorf("%w: clean session only discarded the broker's session; connect again", ErrClientSessionDiscarded)
	if c.send(&packet.Disconnect{}) {
		c.closeConn(err)
	}
}

// applyConnackProps takes the send quota, keep alive and Maximum Packet
// Size from CONNACK.
func (c *Client) applyConnackProps(p *packet.Connack) {
	quota := int(c.cfg.InflightWindow)
	ka := c.cfg.KeepAlive
	if c.v == packet.V5 {
		quota = 65535 // absent Receive Maximum means 65535
		if p.Props.Present.Has(packet.PropReceiveMaximum) && p.Props.ReceiveMaximum > 0 {
			quota = int(p.Props.ReceiveMaximum) // [MQTT-4.9.0-1]
		}
		if p.Props.Present.Has(packet.PropServerKeepAlive) && c.cfg.Policy.Mutations&MutIgnoreServerKeepAlive == 0 { // the mutation is a canary
			ka = p.Props.ServerKeepAlive // [MQTT-3.2.2-21]
		}
	}
	c.maxOut = 0
	if c.v == packet.V5 && p.Props.Present.Has(packet.PropMaximumPacketSize) {
		c.maxOut = p.Props.MaximumPacketSize // [MQTT-3.2.2-15] bounds what the client sends on this connection
	}
	c.out.resetQuota(quota) // the quota is per connection [MQTT-4.9.0-1]
	c.keepAlive = Duration(ka) * Second
	c.lastSend = c.now
	c.pingOut = false
	if c.keepAlive > 0 {
		c.setTimer(ctKeepAlive, c.now+Time(c.keepAlive))
	}
}

// storeMarker persists the "session" record once, when a durable policy is
// on, so a rebooted client knows it holds a session ([MQTT-3.2.2-4]).
func (c *Client) storeMarker() {
	if c.marker || !c.durable() {
		return
	}
	c.marker = true
	c.persistPut(clientKeySession, clientEncodeSession())
}

// durable reports whether any client state is persisted.
func (c *Client) durable() bool {
	return c.cfg.Policy.Retransmit == RetransmitDurable || c.cfg.Policy.IncomingQoS2 == QoS2Durable
}

// hasState reports whether the client holds session state of its own.
func (c *Client) hasState() bool {
	return len(c.out.order) > 0 || c.in.hasState()
}

// handleConnClosed forgets the connection the world saw close. While the
// client is dialling, a ConnClosed for any connection but the last one it
// knew is the world's answer to the Dial (see Dial): the dial failed, the
// pending Connect fails and the client is idle, free to Connect again. The
// world gives every dial a fresh ConnID, so a late ConnClosed for the
// previous connection (which the client closed itself) is told apart.
func (c *Client) handleConnClosed(e ConnClosed) {
	switch {
	case c.state == csDialing && e.Conn != c.conn:
		c.connLost(fmt.Errorf("%w: connection %d closed before it opened (dial failed)", ErrClientConnLost, e.Conn))
	case e.Conn != c.conn || c.state < csConnecting:
		return // stale, or already forgotten
	default:
		c.connLost(ErrClientConnLost)
	}
}

// connLost forgets the current connection. Outbound messages stay (or, with
// LegacyRetransmitNone, the unacknowledged PUBLISHes are dropped); pending
// SUBSCRIBE/UNSUBSCRIBE fail; a pending Connect fails.
func (c *Client) connLost(err error) {
	if err == nil {
		err = ErrClientConnLost
	}
	if c.connectPending {
		c.complete(c.connectCmd, Failed, err)
		c.connectPending = false
	}
	c.cancelTimer(ctKeepAlive)
	c.cancelTimer(ctPing)
	c.cancelTimer(ctConnack)
	c.state = csIdle
	c.dec = nil
	c.pingOut = false
	c.maxOut = 0 // the next connection's CONNACK says
	c.failRequests(err)
	c.dropOnConnLoss()
	c.in.connLost()
}

// setTimer arms (or moves) one of the client's timers.
func (c *Client) setTimer(id TimerID, at Time) {
	c.timers |= 1 << id
	c.emit(c.boxes.timer.box(SetTimer{Timer: id, At: at}))
}

// cancelTimer cancels an armed timer; an unarmed one needs no action.
func (c *Client) cancelTimer(id TimerID) {
	if c.timers&(1<<id) != 0 {
		c.timers &^= 1 << id
		c.emit(CancelTimer{Timer: id})
	}
}

// handleTimer dispatches a fired timer.
func (c *Client) handleTimer(e TimerFired) {
	if e.Timer < 8 {
		c.timers &^= 1 << e.Timer
	}
	switch e.Timer {
	case ctKeepAlive:
		c.keepAliveFired()
	case ctPing:
		if c.state == csConnected && c.pingOut {
			c.closeConn(ErrClientPingTimeout)
		}
	case ctConnack:
		if c.state == csConnecting {
			c.closeConn(ErrClientConnackTimeout)
		}
	}
}

// keepAliveFired sends PINGREQ when nothing was sent for a keep-alive
// interval [MQTT-3.1.2-23] (v5 [MQTT-3.1.2-20]) and re-arms the timer.
func (c *Client) keepAliveFired() {
	if c.state != csConnected || c.keepAlive == 0 {
		return
	}
	due := c.lastSend + Time(c.keepAlive)
	if c.now < due {
		c.setTimer(ctKeepAlive, due)
		return
	}
	if !c.pingOut {
		if !c.send(&packet.Pingreq{}) {
			return
		}
		c.pingOut = true
		// The wait for PINGRESP ends by the next keep-alive deadline: a
		// client still silent then would exceed its Keep Alive
		// [MQTT-3.1.2-23], so it closes instead (§3.1.2.10: "within a reasonable amount of time").
		c.setTimer(ctPing, c.now+Time(min(c.cfg.PingTimeout, c.keepAlive)))
	}
	c.setTimer(ctKeepAlive, c.now+Time(c.keepAlive))
}

// handlePingresp ends the PINGRESP wait.
func (c *Client) handlePingresp() {
	if c.pingOut {
		c.pingOut = false
		c.cancelTimer(ctPing)
	}
}

// handleDisconnect: the broker ends the connection (v5 only; 3.1.1 servers
// never send DISCONNECT). Nothing is sent back [MQTT-3.14.4-1].
func (c *Client) handleDisconnect(p *packet.Disconnect) {
	if c.v != packet.V5 {
		c.protocolError(clientErr(packet.ProtocolError, "§3.14", "3.1.1 server sent DISCONNECT"))
		return
	}
	c.closeConn(fmt.Errorf("%w: reason %#02x", ErrClientServerDisconnect, byte(p.Reason)))
}

// handleDisconnectCmd sends DISCONNECT and closes [MQTT-3.14.4-1]
// [MQTT-3.14.4-2]. The session stays for a later Connect.
func (c *Client) handleDisconnectCmd(e Disconnect) {
	if e.Reason != packet.NormalDisconnection && (c.v != packet.V5 || e.Abnormal || !ClientDisconnectReason(e.Reason)) {
		c.complete(e.Cmd, Failed, fmt.Errorf("%w: DISCONNECT reason 0x%02x is not one a %s client sends", ErrClientBadCommand, byte(e.Reason), c.v))
		return
	}
	switch c.state {
	case csIdle:
		c.complete(e.Cmd, Failed, ErrClientNotConnected)
		return
	case csDialing:
		c.connLost(ErrClientConnLost)
	case csConnecting:
		c.closeConn(nil)
	case csConnected:
		if e.Abnormal {
			c.closeConn(nil) // no DISCONNECT: the broker publishes the will [MQTT-3.1.2-8]
		} else if c.send(&packet.Disconnect{Reason: e.Reason}) {
			c.closeConn(nil) // [MQTT-3.14.4-3] the broker discards the will after 0x00 only
		}
	}
	c.complete(e.Cmd, Accepted, nil)
}

// handleShutdown answers a clean stop of the node: a connected client sends
// DISCONNECT 0x00 and closes [MQTT-3.14.4-1]; nothing else, since whatever
// the policy keeps durable was written when it changed.
func (c *Client) handleShutdown() {
	if c.state == csConnected && c.send(&packet.Disconnect{Reason: packet.NormalDisconnection}) {
		c.closeConn(nil)
	}
}

// ClientDisconnectReason reports whether a v5 client may send DISCONNECT
// with reason r besides 0x00: 0x04 Disconnect with Will Message and the
// errors the table of MQTT 5.0 §3.14.2.1 lets a client send.
func ClientDisconnectReason(r packet.ReasonCode) bool {
	switch r {
	case packet.DisconnectWithWill, packet.UnspecifiedError, packet.MalformedPacket, packet.ProtocolError,
		packet.ImplementationSpecificError, packet.TopicNameInvalid, packet.ReceiveMaximumExceeded,
		packet.TopicAliasInvalid, packet.PacketTooLarge, packet.MessageRateTooHigh, packet.QuotaExceeded,
		packet.AdministrativeAction, packet.PayloadFormatInvalid:
		return true
	}
	return false
}
