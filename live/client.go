package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// ErrConfig reports driver options that cannot work.
var ErrConfig = errors.New("live: invalid options")

// ClientOptions configures a client driver.
type ClientOptions struct {
	// Addr is the broker's TCP address, dialed on every engine.Dial.
	Addr string
	// Config is the engine client's configuration.
	Config engine.ClientConfig
	// Store keeps the engine's durable records; the driver restores the
	// engine from it at start (a reboot when it holds records). Nil keeps
	// nothing: every Persist is dropped, as on a diskless device.
	Store *Store
	// OnMessage is the application's delivery callback, run on the event
	// loop. Returning nil means the application owns the message: the driver
	// then records Delivered and issues engine.Ack. Returning an error keeps
	// the message unacknowledged. Nil acknowledges every message.
	OnMessage func(engine.Message) error
	// Recorder receives the history; nil makes a new one (see Recorder()).
	Recorder *Recorder
	// MsgID extracts the model's message id from a payload (default: the
	// whole payload).
	MsgID MsgIDFunc
}

func (o *ClientOptions) validate() error {
	if o.Addr == "" {
		return fmt.Errorf("%w: Addr is empty", ErrConfig)
	}
	return o.Config.Validate()
}

// Client drives an engine.Client over TCP: one event loop goroutine owns the
// engine and feeds it socket bytes, timers, and the application's commands;
// one goroutine per connection reads the socket.
type Client struct {
	opts ClientOptions
	rec  *Recorder
	node string
	l    *loop

	// Owned by the loop goroutine.
	eng        *engine.Client
	conn       net.Conn
	connID     engine.ConnID
	lastConn   engine.ConnID
	shadow     *packet.Decoder // decodes received bytes for the history only
	nextCmd    engine.CmdID
	cmds       map[engine.CmdID]*Token
	queued     []engine.Event // Acks to step once the current actions are done
	clean      bool           // Clean Start of the current connection attempt
	hasSession bool           // the client holds a session (restored, or connected persistently)
	receiveMax uint16         // broker's Receive Maximum from the last CONNACK
	stuck      bool           // the engine's permanent failure was recorded
	failed     error
}

// RunClient restores an engine client from opts.Store and starts its event
// loop. It does not connect: call Connect.
func RunClient(opts ClientOptions) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.MsgID == nil {
		opts.MsgID = PayloadMsgID
	}
	rec := opts.Recorder
	if rec == nil {
		rec = NewRecorder()
	}
	var restored []engine.Record
	if opts.Store != nil {
		var err error
		if restored, err = opts.Store.Records(); err != nil {
			return nil, fmt.Errorf("live: restore client %s: %w", opts.Config.ClientID, err)
		}
	}
	eng, err := engine.NewClient(opts.Config, restored)
	if err != nil {
		return nil, err
	}
	c := &Client{opts: opts, rec: rec, node: opts.Config.ClientID, l: newLoop(), eng: eng,
		cmds: map[engine.CmdID]*Token{}, hasSession: len(restored) > 0}
	if len(restored) > 0 {
		rec.Add(model.Event{Kind: model.Restart, Time: int64(c.l.now()), Node: c.node})
	}
	go c.l.run()
	return c, nil
}

// Recorder returns the recorder of this client's history.
func (c *Client) Recorder() *Recorder { return c.rec }

// Token follows one command to its end.
type Token struct {
	qos      packet.QoS
	kind     cmdKind
	topic    string
	payload  []byte
	retain   bool
	subs     []packet.Subscription
	filters  []string
	accepted chan struct{}
	done     chan struct{}
	stopped  <-chan struct{} // the driver's loop ended
	complete engine.Complete
	err      error
}

type cmdKind uint8

const (
	cmdConnect cmdKind = iota + 1
	cmdPublish
	cmdSubscribe
	cmdUnsubscribe
	cmdDisconnect
)

func newToken(k cmdKind) *Token {
	return &Token{kind: k, accepted: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{})}
}

// Accepted is closed once the engine owns the command (a Publish stored as
// the policy requires), or once it ended.
func (t *Token) Accepted() <-chan struct{} { return t.accepted }

// Done is closed when the command ended: acknowledged or failed.
func (t *Token) Done() <-chan struct{} { return t.done }

// Wait waits for the command's end and returns its error.
func (t *Token) Wait(ctx context.Context) (engine.Complete, error) {
	select {
	case <-t.done:
		return t.complete, t.err
	case <-t.stopped:
		select {
		case <-t.done: // finished as the loop ended
			return t.complete, t.err
		default:
			return engine.Complete{}, ErrClosed
		}
	case <-ctx.Done():
		return engine.Complete{}, fmt.Errorf("live: waiting for command: %w", ctx.Err())
	}
}

// WaitAccepted waits until the engine owns the command.
func (t *Token) WaitAccepted(ctx context.Context) error {
	select {
	case <-t.accepted:
		select {
		case <-t.done:
			return t.err
		default:
			return nil
		}
	case <-t.stopped:
		select {
		case <-t.accepted:
			return nil
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		return fmt.Errorf("live: waiting for acceptance: %w", ctx.Err())
	}
}

func (t *Token) accept() {
	select {
	case <-t.accepted:
	default:
		close(t.accepted)
	}
}

func (t *Token) finish(c engine.Complete, err error) {
	t.complete, t.err = c, err
	t.accept()
	close(t.done)
}

// issue posts a command to the loop and returns its token.
func (c *Client) issue(t *Token, build func(engine.CmdID) engine.Event) *Token {
	t.stopped = c.l.done
	if !c.l.post(func() {
		if c.failed != nil {
			t.finish(engine.Complete{}, c.failed)
			return
		}
		c.nextCmd++
		id := c.nextCmd
		c.cmds[id] = t
		c.step(build(id))
	}) {
		t.finish(engine.Complete{}, ErrClosed)
	}
	return t
}

// Connect opens the session (Clean Start as given) and waits for CONNACK.
// It returns the Session Present flag.
func (c *Client) Connect(ctx context.Context, cleanStart bool) (bool, error) {
	t := c.issue(newToken(cmdConnect), func(id engine.CmdID) engine.Event {
		c.clean = cleanStart || c.opts.Config.CleanStart
		return engine.Connect{Cmd: id, CleanStart: cleanStart}
	})
	res, err := t.Wait(ctx)
	return res.Session, err
}

// PublishAsync hands a message to the engine and returns at once.
func (c *Client) PublishAsync(topic string, payload []byte, qos packet.QoS, retain bool) *Token {
	t := newToken(cmdPublish)
	t.topic, t.payload, t.qos, t.retain = topic, append([]byte(nil), payload...), qos, retain
	return c.issue(t, func(id engine.CmdID) engine.Event {
		return engine.Publish{Cmd: id, Topic: topic, Payload: t.payload, QoS: qos, Retain: retain}
	})
}

// Publish publishes and waits until it completes: acknowledged by the
// broker for QoS 1 and 2, accepted by the engine for QoS 0.
func (c *Client) Publish(ctx context.Context, topic string, payload []byte, qos packet.QoS, retain bool) error {
	_, err := c.PublishAsync(topic, payload, qos, retain).Wait(ctx)
	return err
}

// Subscribe subscribes and returns the SUBACK reason codes.
func (c *Client) Subscribe(ctx context.Context, subs ...packet.Subscription) ([]packet.ReasonCode, error) {
	t := newToken(cmdSubscribe)
	t.subs = append([]packet.Subscription(nil), subs...)
	c.issue(t, func(id engine.CmdID) engine.Event { return engine.Subscribe{Cmd: id, Subs: t.subs} })
	res, err := t.Wait(ctx)
	return res.Reasons, err
}

// Unsubscribe unsubscribes and waits for UNSUBACK.
func (c *Client) Unsubscribe(ctx context.Context, filters ...string) error {
	t := newToken(cmdUnsubscribe)
	t.filters = append([]string(nil), filters...)
	c.issue(t, func(id engine.CmdID) engine.Event { return engine.Unsubscribe{Cmd: id, Filters: t.filters} })
	_, err := t.Wait(ctx)
	return err
}

// Disconnect sends DISCONNECT and closes the connection.
func (c *Client) Disconnect(ctx context.Context) error {
	t := c.issue(newToken(cmdDisconnect), func(id engine.CmdID) engine.Event { return engine.Disconnect{Cmd: id} })
	_, err := t.Wait(ctx)
	return err
}

// CutConnection closes the socket under the engine, as a network failure
// would, and waits (at most IOTimeout) until the engine has seen
// ConnClosed; the engine keeps its session state.
func (c *Client) CutConnection() error {
	var conn net.Conn
	from := c.rec.Len()
	c.l.call(func() { conn = c.conn })
	if conn == nil {
		return nil
	}
	conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), IOTimeout)
	defer cancel()
	_, err := c.rec.Wait(ctx, from, func(e model.Event) bool { return e.Kind == model.ConnClosed && e.Node == c.node })
	if err != nil {
		return fmt.Errorf("live: cut connection: engine did not see the close: %w", err)
	}
	return nil
}

// Connected reports whether the engine holds an accepted connection.
func (c *Client) Connected() bool {
	var ok bool
	c.l.call(func() { ok = c.eng.Connected() })
	return ok
}

// Crash stops the driver as a process crash would: no DISCONNECT, the
// socket closed, memory lost; only what the store holds survives. It
// records a Crash event, and the loop stops in the same step: nothing the
// loop still had queued (bytes read, commands, timers) runs after it, so
// the history shows no packet sent or received, and no message accepted
// or acknowledged, by a node after its Crash. (Recording the Crash in one
// step and stopping in the next let a loaded machine run queued work in
// between: 'simrun live -seed 2 -faults client-kill,cut,blackhole
// -duration 3m' at 85dfb19, load 43, recorded a publisher's DUP=1 resends
// after its Crash, which the model read as sent on a new connection with
// no session-present CONNACK: Retransmit 18.)
func (c *Client) Crash() {
	c.l.call(func() {
		c.rec.Add(model.Event{Kind: model.Crash, Time: int64(c.l.now()), Node: c.node, Point: model.CrashBetweenSteps})
		c.shut()
	})
	c.l.stop()
}

// Close stops the event loop and closes the socket. Pending commands fail
// with ErrClosed.
func (c *Client) Close() {
	c.l.call(c.shut)
	c.l.stop()
}

// shut closes the socket, fails the pending commands with ErrClosed and
// asks the loop to end after the closure running it.
func (c *Client) shut() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	c.failAll(ErrClosed)
	c.l.stopAsync()
}

// failAll ends every pending command with err.
func (c *Client) failAll(err error) {
	for id, t := range c.cmds {
		delete(c.cmds, id)
		t.finish(engine.Complete{Cmd: id, Result: engine.Failed, Err: err}, err)
	}
}

// step feeds one event, carries its actions out, then feeds the Acks the
// application issued meanwhile.
func (c *Client) step(ev engine.Event) {
	c.queued = append(c.queued, ev)
	for len(c.queued) > 0 && !c.l.stopped() {
		ev := c.queued[0]
		c.queued = c.queued[1:]
		for _, a := range c.eng.Step(c.l.now(), ev) {
			c.do(a)
		}
	}
	if err := c.eng.Stuck(); err != nil && !c.stuck {
		c.stuck = true // recorded once, as the simulator does
		c.rec.Add(model.Event{Kind: model.Failed, Time: int64(c.l.now()), Node: c.node, Reason: err.Error()})
	}
}

// do carries out one action.
func (c *Client) do(a engine.Action) {
	switch a := a.(type) {
	case engine.Dial:
		c.handleDial()
	case engine.Send:
		c.handleSend(a)
	case engine.CloseConn:
		if a.Conn == c.connID && c.conn != nil {
			c.conn.Close() // the reader reports ConnClosed
		}
	case engine.Persist:
		c.handlePersist(a)
	case engine.SetTimer:
		c.l.setTimer(a.Timer, a.At, c.fire)
	case engine.CancelTimer:
		c.l.cancelTimer(a.Timer)
	case engine.Deliver:
		c.handleDeliver(a)
	case engine.Complete:
		c.handleComplete(a)
	}
}

func (c *Client) fire(id engine.TimerID) { c.step(engine.TimerFired{Timer: id}) }

// handleDial dials in the background; the result comes back as ConnOpened
// or ConnClosed.
func (c *Client) handleDial() {
	c.lastConn++
	id := c.lastConn
	go func() {
		conn, err := net.DialTimeout("tcp", c.opts.Addr, IOTimeout)
		if !c.l.post(func() { c.dialed(id, conn, err) }) && conn != nil {
			conn.Close()
		}
	}()
}

func (c *Client) dialed(id engine.ConnID, conn net.Conn, err error) {
	if err != nil {
		c.step(engine.ConnClosed{Conn: id})
		return
	}
	c.conn, c.connID = conn, id
	c.shadow = packet.NewDecoder(c.opts.Config.Version, 1<<28)
	c.rec.Add(model.Event{Kind: model.ConnOpened, Time: int64(c.l.now()), Node: c.node, Peer: model.BrokerNode})
	go c.l.pump(conn, func(data []byte) { c.received(id, data) }, func() { c.closed(id) })
	c.step(engine.ConnOpened{Conn: id})
}

func (c *Client) received(id engine.ConnID, data []byte) {
	if id != c.connID || c.conn == nil {
		return
	}
	c.recordReceived(data)
	c.step(engine.BytesReceived{Conn: id, Data: data})
}

// recordReceived decodes a copy of the stream for the history.
func (c *Client) recordReceived(data []byte) {
	if c.shadow == nil {
		return
	}
	c.shadow.Feed(data)
	for {
		p, err := c.shadow.Next()
		if err != nil || p == nil {
			if err != nil {
				c.shadow = nil // the engine reports the error; stop recording this stream
			}
			return
		}
		if ack, ok := p.(*packet.Connack); ok {
			c.receiveMax = 0
			if ack.Props.Present.Has(packet.PropReceiveMaximum) {
				c.receiveMax = ack.Props.ReceiveMaximum
			}
		}
		c.rec.Add(model.Event{Kind: model.Received, Time: int64(c.l.now()), Node: c.node, Peer: model.BrokerNode, Packet: sized(modelPacket(p, c.opts.MsgID), c.shadow.LastSize())})
	}
}

func (c *Client) closed(id engine.ConnID) {
	if id != c.connID || c.conn == nil {
		return
	}
	c.conn, c.shadow = nil, nil
	c.rec.Add(model.Event{Kind: model.ConnClosed, Time: int64(c.l.now()), Node: c.node, Peer: model.BrokerNode})
	c.step(engine.ConnClosed{Conn: id})
}

func (c *Client) handleSend(a engine.Send) {
	if a.Conn != c.connID || c.conn == nil {
		return // a stale connection's packet
	}
	// Recorded before the write: once written, the peer (or a recording
	// proxy) may record its receipt at once, and the history must show the
	// send first. A failed write is a packet lost with its connection.
	c.rec.Add(model.Event{Kind: model.Sent, Time: int64(c.l.now()), Node: c.node, Peer: model.BrokerNode, Packet: sized(modelPacket(a.Packet, c.opts.MsgID), len(a.Data)),
		ReceiveMax: connectReceiveMax(a.Packet)})
	_ = c.conn.SetWriteDeadline(time.Now().Add(IOTimeout))
	if _, err := c.conn.Write(a.Data); err != nil {
		c.conn.Close() // the reader reports ConnClosed
	}
}

// handlePersist writes to the store. A store failure is fatal: the driver
// stops as a crashed process would, and every command fails with the error.
func (c *Client) handlePersist(a engine.Persist) {
	if c.opts.Store == nil {
		return
	}
	if err := c.opts.Store.Apply(a); err != nil {
		c.fail(err)
	}
}

func (c *Client) fail(err error) {
	c.failed = err
	c.rec.Add(model.Event{Kind: model.Failed, Time: int64(c.l.now()), Node: c.node, Reason: err.Error()})
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	c.failAll(err)
	c.l.stopAsync()
}

// handleDeliver runs the application callback; on success it records the
// delivery and queues the Ack, which is stepped after this Step's actions.
func (c *Client) handleDeliver(a engine.Deliver) {
	if c.opts.OnMessage != nil {
		if err := c.opts.OnMessage(a.Msg); err != nil {
			return
		}
	}
	c.rec.Add(model.Event{Kind: model.Delivered, Time: int64(c.l.now()), Node: c.node,
		Msg: c.opts.MsgID(a.Msg.Payload), Topic: a.Msg.Topic, QoS: uint8(a.Msg.QoS), Retain: a.Msg.Retain,
		Packet: model.Packet{Type: model.PUBLISH, ID: a.Msg.PacketID, QoS: uint8(a.Msg.QoS), Dup: a.Msg.Dup, Retain: a.Msg.Retain, Topic: a.Msg.Topic, Payload: string(a.Msg.Payload), Msg: c.opts.MsgID(a.Msg.Payload)}})
	c.queued = append(c.queued, engine.Ack{Delivery: a.Delivery})
}

// handleComplete records the outcome in the history and wakes the caller.
func (c *Client) handleComplete(a engine.Complete) {
	t := c.cmds[a.Cmd]
	if t == nil {
		// A command of an earlier incarnation (a message resent from the
		// store): nobody waits for it, and its failure (a PUBCOMP 0x92 for
		// a PUBREL the broker already completed) is no engine failure. A
		// permanent failure is what engine.Client.Stuck reports (step).
		return
	}
	if a.Result == engine.Failed {
		delete(c.cmds, a.Cmd)
		t.finish(a, fmt.Errorf("live: command failed: %w", a.Err))
		return
	}
	c.record(t, a)
	final := a.Result == engine.Acknowledged || t.kind == cmdDisconnect || t.kind == cmdPublish && t.qos == 0
	if !final {
		t.accept()
		return
	}
	delete(c.cmds, a.Cmd)
	t.finish(a, nil)
}

// record adds the history events of a successful completion.
func (c *Client) record(t *Token, a engine.Complete) {
	now := int64(c.l.now())
	switch {
	case t.kind == cmdPublish && a.Result == engine.Accepted:
		c.rec.Add(model.Event{Kind: model.Accepted, Time: now, Node: c.node, Msg: c.opts.MsgID(t.payload), Topic: t.topic, QoS: uint8(t.qos), Retain: t.retain})
	case t.kind == cmdPublish:
		c.rec.Add(model.Event{Kind: model.Acknowledged, Time: now, Node: c.node, Msg: c.opts.MsgID(t.payload)})
	case t.kind == cmdConnect:
		had := c.hasSession && !c.clean
		c.hasSession = c.persistent()
		c.rec.Add(model.Event{Kind: model.Connected, Time: now, Node: c.node, CleanStart: c.clean,
			SessionPresent: a.Session, HadState: had, Version: uint8(c.opts.Config.Version), ReceiveMax: c.receiveMax})
	case t.kind == cmdSubscribe:
		for i, s := range t.subs {
			if i < len(a.Reasons) && !a.Reasons[i].IsError() {
				c.rec.Add(model.Event{Kind: model.Subscribed, Time: now, Node: c.node, Filter: s.Filter, QoS: uint8(a.Reasons[i]), Persistent: c.persistent()})
			}
		}
	case t.kind == cmdUnsubscribe:
		for _, f := range t.filters {
			c.rec.Add(model.Event{Kind: model.Unsubscribed, Time: now, Node: c.node, Filter: f})
		}
	}
}

// persistent reports whether the current session outlives its connection.
func (c *Client) persistent() bool {
	if c.opts.Config.Version == packet.V5 {
		return c.opts.Config.SessionExpiry > 0
	}
	return !c.clean
}
