package engine

import (
	"errors"
	"fmt"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// Errors a client reports in Complete.Err and CloseConn.Reason. Codec
// refusals are the codec's *packet.Error.
var (
	// ErrClientNotConnected: the command needs a connection and there is none.
	ErrClientNotConnected = errors.New("engine: client: not connected")
	// ErrClientBusy: Connect while a connection is open or being opened.
	ErrClientBusy = errors.New("engine: client: already connected or connecting")
	// ErrClientConnLost: the connection closed before the command finished.
	ErrClientConnLost = errors.New("engine: client: connection lost")
	// ErrClientConnackTimeout: no CONNACK within ConnackTimeout.
	ErrClientConnackTimeout = errors.New("engine: client: no CONNACK in time")
	// ErrClientPingTimeout: no PINGRESP within PingTimeout.
	ErrClientPingTimeout = errors.New("engine: client: no PINGRESP in time")
	// ErrClientRefused: the broker refused the connection (CONNACK >= 0x80,
	// or a non-zero 3.1.1 return code).
	ErrClientRefused = errors.New("engine: client: connection refused")
	// ErrClientProtocol: the broker broke a protocol rule the codec cannot see.
	ErrClientProtocol = errors.New("engine: client: broker protocol error")
	// ErrClientServerDisconnect: the broker sent DISCONNECT.
	ErrClientServerDisconnect = errors.New("engine: client: broker sent DISCONNECT")
	// ErrClientSessionDiscarded: the session state that held the command was
	// discarded (clean start, or Session Present 0).
	ErrClientSessionDiscarded = errors.New("engine: client: session state discarded")
	// ErrClientPublishRefused: PUBACK/PUBREC/PUBCOMP with a reason >= 0x80.
	ErrClientPublishRefused = errors.New("engine: client: broker refused the publish")
	// ErrClientBadCommand: the command itself is invalid.
	ErrClientBadCommand = errors.New("engine: client: invalid command")
	// ErrClientStuck: the legacy unknown-ack policy failed the session
	// (coreMQTT #271); every later Step fails with it.
	ErrClientStuck = errors.New("engine: client: stuck after an acknowledgement for an unknown packet identifier")
	// ErrClientRecord: a durable record could not be decoded; NewClient names
	// its key.
	ErrClientRecord = errors.New("engine: client: corrupt record")
	// ErrClientInternal: the codec refused a packet the client built (a
	// broken invariant, reported instead of a panic).
	ErrClientInternal = errors.New("engine: client: internal error")
	// ErrClientPacketTooLarge: the packet exceeds the Maximum Packet Size
	// of the broker's CONNACK, so the client did not send it
	// [MQTT-3.2.2-15]. The error is a *PacketTooLargeError.
	ErrClientPacketTooLarge = errors.New("engine: client: packet exceeds the broker's Maximum Packet Size")
)

// PacketTooLargeError is why the client did not send a packet: its encoded
// Size exceeds the Maximum Packet Size Max of the broker's CONNACK on the
// current connection [MQTT-3.2.2-15]. It matches ErrClientPacketTooLarge
// and, with errors.As, a *packet.Error citing that rule with reason 0x95.
type PacketTooLargeError struct {
	Type      packet.Type
	Size, Max uint32
}

func (e *PacketTooLargeError) Error() string { return e.codec().Error() }

// Unwrap returns ErrClientPacketTooLarge and the refusal as the codec
// states one (rule, reason 0x95 Packet too large).
func (e *PacketTooLargeError) Unwrap() []error {
	return []error{ErrClientPacketTooLarge, e.codec()}
}

func (e *PacketTooLargeError) codec() *packet.Error {
	return &packet.Error{Rule: "MQTT-3.2.2-15", Reason: packet.PacketTooLarge,
		Msg: fmt.Sprintf("%s of %d bytes exceeds the broker's Maximum Packet Size %d: not sent", e.Type, e.Size, e.Max)}
}

// tooLarge returns the refusal of a packet of type t encoded in size bytes
// when it exceeds the broker's Maximum Packet Size on this connection, else
// nil. MutIgnoreBrokerMaxSize (a canary) never refuses.
func (c *Client) tooLarge(t packet.Type, size int) error {
	if c.maxOut == 0 || size <= int(c.maxOut) || c.cfg.Policy.Mutations&MutIgnoreBrokerMaxSize != 0 {
		return nil
	}
	return &PacketTooLargeError{Type: t, Size: uint32(size), Max: c.maxOut}
}

// clientConnState is where the client is in its connection's life.
type clientConnState uint8

const (
	csIdle       clientConnState = iota // no connection
	csDialing                           // Dial emitted, waiting for ConnOpened
	csConnecting                        // CONNECT sent, waiting for CONNACK
	csConnected                         // CONNACK accepted
)

// The client's timers.
const (
	ctKeepAlive TimerID = iota + 1
	ctPing
	ctConnack
)

// Client is the sans-IO MQTT client (3.1.1 and 5.0). Create it with
// NewClient and drive it with Step; it is not safe for concurrent use.
//
// Design choices, where the standards leave room or the lab needs one:
//
//   - Send quota: v5 takes the broker's Receive Maximum from CONNACK, 3.1.1
//     uses InflightWindow. QoS 1/2 PUBLISHes over the quota wait in a FIFO
//     and leave in order as PUBACK/PUBCOMP/PUBREC>=0x80 free slots; nothing
//     else ever waits [MQTT-3.3.4-8]. On a session-present resend the
//     excess is held back the same way (libmosquitto's choice) and resent
//     PUBRELs count in the quota.
//   - Resend happens only after a session-present CONNACK [MQTT-4.4.0-1]:
//     PUBRELs in PUBREC order, then PUBLISHes (DUP=1) in acceptance order.
//   - Session Present 1 when the client holds no session (never connected
//     and nothing restored): close [MQTT-3.2.2-4] and force Clean Start on
//     the next Connect, so the client cannot loop. In 3.1.1 that clean
//     session only discards the broker's: see wipeDone.
//   - Session Present 0 with Clean Start 0 while holding state
//     [MQTT-3.2.2-5]: see sessionLost; QoS 2 messages already sent fail
//     (the broker may have had them: sent again they would be new, a
//     duplicate), the other unacknowledged messages are republished as new
//     messages rather than dropped.
//   - Clean Start 1: see discardSession; started flows fail explicitly.
//   - Acks for ids not in flight (PUBACK, PUBCOMP, SUBACK, UNSUBACK) are
//     ignored; unknown PUBREL/PUBREC follow the UnknownPubrel/UnknownPubrec
//     policy.
//   - The legacy stuck state (coreMQTT #271) lasts until the client is
//     rebuilt with NewClient.
//   - Delivery ids restart at 1 after NewClient: an application Ack from
//     before a reboot must not be replayed into the rebuilt client.
//   - Topic aliases are never sent; the broker's are accepted up to
//     ClientConfig.TopicAliasMaximum (default 0: none) and kept only for
//     the connection (client_alias_in.go).
//   - The broker's Maximum Packet Size (v5 CONNACK) bounds every packet
//     the client sends on that connection [MQTT-3.2.2-15]; it is unknown,
//     so nothing is refused, before the CONNACK and between connections.
//     A PUBLISH, SUBSCRIBE or UNSUBSCRIBE command whose packet exceeds it
//     fails at once (never Accepted) with a *PacketTooLargeError; a QoS
//     1/2 message accepted while disconnected and found too large when a
//     CONNACK starts or resumes its flow fails the same way instead of
//     being sent (its record deleted). The client sends no Reason String
//     or User Property, so nothing could be dropped to fit. Its other
//     packets are at most 5 bytes: a CONNACK announcing less is refused
//     (the connection closed, the Connect failed). Choice: a QoS 2
//     message that left on an earlier connection and no longer fits a
//     smaller limit fails too, and its id is free again, though the
//     broker may still hold it awaiting PUBREL (only a broker whose
//     limit shrinks between connections does that).
//   - Not implemented: Will messages, username/password, enhanced AUTH,
//     enforcement of the client's own Receive Maximum on incoming
//     PUBLISHes, and the broker's Maximum QoS and Retain Available (a
//     publish the broker refuses fails through its ack, or the broker
//     closes the connection).
type Client struct {
	cfg  ClientConfig
	v    packet.Version
	now  Time
	acts []Action
	// The client's garbage-free hot path (see client_box.go): actions boxed
	// from slabs, packets, messages and deliveries carved from slabs, bytes
	// from an arena. None of them is ever reused.
	boxes clientActions
	arena clientArena
	acks  ackSlabs
	pubs  clientSlab[packet.Publish]
	msgs  clientSlab[clientOutMsg]
	dels  clientSlab[clientDelivery]

	state          clientConnState
	conn           ConnID
	dec            *packet.Decoder // the current connection's stream decoder; nil without one
	spareDec       *packet.Decoder // the decoder every connection reuses, reset
	connectCmd     CmdID
	connectPending bool  // connectCmd awaits its Complete
	timers         uint8 // bit n: timer n is armed
	clean          bool  // Clean Start of the current attempt
	forceClean     bool  // the next Connect must start clean ([MQTT-3.2.2-4] close)
	hasSession     bool  // the client holds a session (connected before, or restored)
	marker         bool  // the durable "session" record is stored
	will           *Will // the will of the current connection attempt

	keepAlive Duration // effective keep alive, 0 = off
	maxOut    uint32   // the broker's Maximum Packet Size on this connection (CONNACK), 0 = none known [MQTT-3.2.2-15]
	lastSend  Time
	pingOut   bool

	out   clientOutbound
	reqs  []*clientRequest // SUBSCRIBE/UNSUBSCRIBE awaiting SUBACK/UNSUBACK, in send order
	in    clientInbound
	stuck error

	aliasIn []string // this connection's Topic Alias mappings from the broker, alias-1 (client_alias_in.go)
}

// NewClient validates cfg and builds a client, restoring its durable state
// from the records that survived a reboot (nil for a fresh client). A record
// that cannot be decoded is an error naming its key.
func NewClient(cfg ClientConfig, restored []Record) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, v: cfg.Version}
	c.acts = make([]Action, 0, stepActions)
	c.out.init(cfg.Policy.Mutations)
	c.out.ids.SetLast(cfg.StartPacketID)
	c.in.init()
	if err := c.restore(restored); err != nil {
		return nil, err
	}
	return c, nil
}

// stepActions is room for the actions of a typical Step, so the reused
// result slice does not grow from nothing in every new engine.
const stepActions = 8

// Stuck reports the error that stopped the client under the legacy
// unknown-ack policy, or nil.
func (c *Client) Stuck() error { return c.stuck }

// Connected reports whether a CONNACK accepted the current connection.
func (c *Client) Connected() bool { return c.state == csConnected }

// Step feeds one event and returns the actions to carry out, in order.
//
// The returned slice is reused by the next Step: carry the actions out (or
// copy the slice) before calling Step again. The actions themselves (unless
// ClientConfig.ReuseActions: then their boxes serve the next Step), the
// packets and byte slices inside them (Send.Data, Send.Packet,
// Persist.Value) and the delivered Message are never reused or written again
// by the client and may be kept; Send.Data, Send.Packet and Persist.Value
// must not be modified: a first PUBLISH's Send.Data is also the client's
// retransmit copy. (Deliver's Message is the application's own copy.)
func (c *Client) Step(now Time, ev Event) []Action {
	c.now = now
	if c.cfg.ReuseActions {
		c.boxes.rewind()
	}
	prev := len(c.acts)
	c.acts = c.acts[:0]
	c.step(ev)
	if n := len(c.acts); n < prev {
		// Drop the last Step's references that this Step did not overwrite
		// (clearing them all first would cost two write barriers per slot
		// while the GC runs). Usually a slot or two: stored one by one,
		// inline, rather than by a bulk clear call.
		all := c.acts[:prev]
		for i := n; i < len(all); i++ {
			all[i] = nil
		}
	}
	return c.acts
}

// step handles one event, appending to c.acts.
func (c *Client) step(ev Event) {
	if c.stuck != nil {
		c.stepStuck(ev)
		return
	}
	switch e := ev.(type) {
	case Connect:
		c.handleConnectCmd(e)
	case ConnOpened:
		c.handleConnOpened(e)
	case ConnClosed:
		c.handleConnClosed(e)
	case BytesReceived:
		c.handleBytes(e)
	case TimerFired:
		c.handleTimer(e)
	case Publish:
		c.handlePublishCmd(e)
	case Subscribe:
		c.handleSubscribeCmd(e)
	case Unsubscribe:
		c.handleUnsubscribeCmd(e)
	case Disconnect:
		c.handleDisconnectCmd(e)
	case Ack:
		c.handleAck(e)
	case Shutdown:
		c.handleShutdown()
	}
}

// handleBytes feeds the decoder and dispatches every whole packet.
func (c *Client) handleBytes(e BytesReceived) {
	if e.Conn != c.conn || c.state < csConnecting || c.dec == nil {
		return // a stale connection's bytes
	}
	c.dec.Feed(e.Data)
	for c.state >= csConnecting && c.stuck == nil {
		p, err := c.dec.Next()
		if err != nil {
			c.protocolError(err)
			return
		}
		if p == nil {
			return
		}
		c.dispatch(p)
	}
}

// dispatch hands one decoded packet to its handler.
func (c *Client) dispatch(p packet.Packet) {
	if c.state == csConnecting && p.Type() != packet.CONNACK {
		// [MQTT-3.2.0-1] the first packet from the server is CONNACK.
		c.protocolError(clientErr(packet.ProtocolError, "MQTT-3.2.0-1", "%s before CONNACK", p.Type()))
		return
	}
	if c.cfg.Policy.Mutations&MutKeepAliveOnReceive != 0 {
		c.lastSend = c.now // canary: receiving counts as activity [MQTT-3.1.2-23]
	}
	switch p := p.(type) {
	case *packet.Connack:
		c.handleConnack(p)
	case *packet.Publish:
		c.handlePublish(p)
	case *packet.Puback:
		c.handlePuback(p)
	case *packet.Pubrec:
		c.handlePubrec(p)
	case *packet.Pubrel:
		c.handlePubrel(p)
	case *packet.Pubcomp:
		c.handlePubcomp(p)
	case *packet.Suback:
		c.handleSuback(p)
	case *packet.Unsuback:
		c.handleUnsuback(p)
	case *packet.Pingresp:
		c.handlePingresp()
	case *packet.Disconnect:
		c.handleDisconnect(p)
	default:
		c.protocolError(clientErr(packet.ProtocolError, "§2.1.2", "a client never receives %s", p.Type()))
	}
}

// stepStuck is the legacy failed state (coreMQTT #271): received bytes fail
// with the stuck error, commands fail, nothing is sent ever again.
func (c *Client) stepStuck(ev Event) {
	switch e := ev.(type) {
	case BytesReceived:
		if e.Conn == c.conn {
			c.complete(0, Failed, c.stuck)
		}
	case ConnClosed:
		if e.Conn == c.conn {
			c.state = csIdle
		}
	case Connect:
		c.complete(e.Cmd, Failed, c.stuck)
	case Publish:
		c.complete(e.Cmd, Failed, c.stuck)
	case Subscribe:
		c.complete(e.Cmd, Failed, c.stuck)
	case Unsubscribe:
		c.complete(e.Cmd, Failed, c.stuck)
	case Disconnect:
		c.complete(e.Cmd, Failed, c.stuck)
	}
}

// becomeStuck enters the legacy failed state.
func (c *Client) becomeStuck(err error) {
	c.stuck = err
	c.complete(0, Failed, err)
}

// emit appends an action.
func (c *Client) emit(a Action) { c.acts = append(c.acts, a) }

// complete emits a Complete.
func (c *Client) complete(cmd CmdID, r Result, err error) {
	w, a := c.boxes.complete.slot()
	w.Cmd, w.Result, w.Err = cmd, r, err
	c.emit(a)
}

// send encodes p into the byte arena and emits it on the current
// connection. A codec refusal is a broken invariant: the connection is
// closed with ErrClientInternal instead of a panic.
func (c *Client) send(p packet.Packet) bool {
	data, err := c.encode(p)
	if err != nil {
		c.closeConn(fmt.Errorf("%w: encoding %s: %w", ErrClientInternal, p.Type(), err))
		return false
	}
	c.sendBytes(data, p)
	return true
}

// encode encodes p into the byte arena and returns its bytes, capped so
// that nobody appending to them can overwrite the next packet; a shared ack
// (box.go) is not encoded, its read-only bytes are returned. The bytes are
// never written again: Send.Data may be kept.
func (c *Client) encode(p packet.Packet) ([]byte, error) {
	if w := sharedAckWire(c.v, p); w != nil {
		return w[:len(w):len(w)], nil // encoded once for all, read-only (box.go)
	}
	c.arena.reserve(arenaSmall)
	buf, err := packet.Append(c.arena.free, c.v, p)
	if err != nil {
		return nil, err
	}
	return c.arena.take(buf), nil
}

// sendBytes emits already-encoded bytes.
func (c *Client) sendBytes(data []byte, p packet.Packet) {
	snd, a := c.boxes.send.slot()
	snd.Conn, snd.Data, snd.Packet = c.conn, data, p
	c.emit(a)
	c.lastSend = c.now
}

// persistPut emits a synced Put.
func (c *Client) persistPut(key string, value []byte) {
	w, a := c.boxes.persist.slot()
	w.Op, w.Key, w.Value, w.Sync = Put, key, value, true
	c.emit(a)
}

// persistDelete emits a synced Delete.
func (c *Client) persistDelete(key string) {
	if a := clientSharedDelete(key); a != nil {
		c.emit(a)
		return
	}
	c.emit(c.boxes.persist.box(Persist{Op: Delete, Key: key, Sync: true}))
}

// clientError is a client-detected violation by the broker: a rule id, the
// v5 reason code to answer with, and a message.
type clientError struct {
	reason packet.ReasonCode
	rule   string
	msg    string
}

func (e *clientError) Error() string {
	return ErrClientProtocol.Error() + ": [" + e.rule + "] " + e.msg
}

func (e *clientError) Unwrap() error { return ErrClientProtocol }

// clientErr builds a clientError.
func clientErr(reason packet.ReasonCode, rule, format string, args ...any) error {
	return &clientError{reason: reason, rule: rule, msg: fmt.Sprintf(format, args...)}
}

// clientReason is the v5 reason code to answer an error with.
func clientReason(err error) packet.ReasonCode {
	var pe *packet.Error
	if errors.As(err, &pe) {
		return pe.Reason
	}
	var ce *clientError
	if errors.As(err, &ce) {
		return ce.reason
	}
	return packet.UnspecifiedError
}

// protocolError answers a malformed packet or protocol violation: a v5
// DISCONNECT with the reason code, then close [MQTT-4.13.1-1].
func (c *Client) protocolError(err error) {
	if c.v == packet.V5 && c.state == csConnected {
		c.send(&packet.Disconnect{Reason: answerReason(packet.DISCONNECT, clientReason(err))})
	}
	c.closeConn(err)
}

// closeConn closes the current connection and forgets it.
func (c *Client) closeConn(err error) {
	if c.state < csConnecting {
		return
	}
	c.emit(CloseConn{Conn: c.conn, Reason: err})
	c.connLost(err)
}

// sendAck sends a PUBACK, PUBREC, PUBREL or PUBCOMP with reason rc (v5 only;
// 0 is omitted on the wire).
func (c *Client) sendAck(t packet.Type, id uint16, rc packet.ReasonCode) bool {
	if p, data := sharedAck(c.v, t, id, rc); p != nil {
		c.sendBytes(data, p) // encoded once for all, read-only (box.go)
		return true
	}
	p := c.acks.ack(t, id, rc)
	data, err := c.encode(p)
	if err != nil {
		c.closeConn(fmt.Errorf("%w: encoding %s: %w", ErrClientInternal, t, err))
		return false
	}
	c.sendBytes(data, p)
	return true
}
