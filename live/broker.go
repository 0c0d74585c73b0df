package live

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// BrokerOptions configures a broker driver.
type BrokerOptions struct {
	// Config is the engine broker's configuration.
	Config engine.BrokerConfig
	// Store keeps the broker's durable records; the driver restores the
	// engine from it at start. Nil keeps nothing.
	Store *Store
	// Recorder receives the history (node "broker"); nil makes a new one.
	Recorder *Recorder
	// MsgID extracts the model's message id from a payload (default: the
	// whole payload).
	MsgID MsgIDFunc
	// ConnLog, if set, gets one line per connection event (accepted, its
	// CONNECT's client id, closed), called on the event loop.
	ConnLog func(line string)
	// ConnectTimeout closes a connection that has not sent a whole CONNECT
	// this long after it opened (the spec's SHOULD of MQTT 5.0 §4.2 and
	// 3.1.1 §3.1.4: "a reasonable amount of time"). Zero: DefaultConnectTimeout;
	// negative: no limit.
	ConnectTimeout time.Duration
	// MaxConnections bounds the connections open at once; one over it is
	// closed at accept, before a byte is read. Zero: DefaultMaxConnections();
	// negative: no limit.
	MaxConnections int
	// Canary, if set, names a deliberate bug for the wire fuzzer's canary
	// tests (see Canaries). Never set it to serve clients.
	Canary string
}

// DefaultConnectTimeout is how long a connection may stay open without a
// CONNECT: 10 s, as HiveMQ's default; EMQX closes after 15 s.
const DefaultConnectTimeout = 10 * time.Second

// DefaultMaxConnections is the connection limit when none is set: the
// process's open-file soft limit less 64 descriptors kept for the store and
// the listener, so a flood of connections is refused one by one instead of
// failing every accept with EMFILE (mosquitto's own max_connections default
// is the same soft limit).
func DefaultMaxConnections() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<20 {
		return 1 << 20
	}
	if n := int(lim.Cur) - 64; n > 0 {
		return n
	}
	return 1
}

// Broker serves an engine.Broker on a net.Listener: one event loop goroutine
// owns the engine; one goroutine accepts connections and one per connection
// reads bytes into the loop.
type Broker struct {
	opts BrokerOptions
	rec  *Recorder
	l    *loop
	ln   net.Listener

	// Owned by the loop goroutine.
	eng    *engine.Broker
	conns  map[engine.ConnID]*brokerConn
	nextID engine.ConnID
	failed error
	leaked []*os.File // CanaryLeakFD's copies, never closed

	// unhang releases CanaryHang's blocked loop at Close.
	unhang     chan struct{}
	unhangOnce sync.Once
}

// brokerConn is one client connection as the driver sees it.
type brokerConn struct {
	c      net.Conn
	shadow *packet.Decoder // decodes received bytes for the history only
	peer   string          // client id, once its CONNECT was decoded
	remote string          // the peer's address, for ConnLog
	id     engine.ConnID
	// closing: the engine closed the connection; what still arrives is
	// read and dropped until the peer closes or CloseLinger passes.
	closing bool
	framer  *canaryFramer // the framing canaries' state
}

// CloseLinger bounds how long a connection the broker closed keeps draining
// what the peer still sends (see closeGracefully).
const CloseLinger = 2 * time.Second

// closeGracefully ends a connection the engine closed, so that a peer that
// is still writing reads what the broker sent last (a DISCONNECT with its
// reason) instead of a reset: no new work is read from it, the write side is
// shut (the peer reads the DISCONNECT, then the end of the stream), and the
// read side drains until the peer closes or CloseLinger passes. A plain close
// with unread bytes in the socket makes the kernel answer with RST, which
// discards the peer's unread data, DISCONNECT included.
func (bc *brokerConn) closeGracefully() {
	if bc.closing {
		return
	}
	bc.closing = true
	if cw, ok := bc.c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = bc.c.SetReadDeadline(time.Now().Add(CloseLinger)) // the pump then closes it
		return
	}
	bc.c.Close()
}

// ServeBroker restores a broker from opts.Store and serves it on ln until
// Close. The broker owns ln from here on.
func ServeBroker(ln net.Listener, opts BrokerOptions) (*Broker, error) {
	if ln == nil {
		return nil, fmt.Errorf("%w: nil listener", ErrConfig)
	}
	if opts.MsgID == nil {
		opts.MsgID = PayloadMsgID
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MaxConnections == 0 {
		opts.MaxConnections = DefaultMaxConnections()
	}
	if _, ok := Canaries[opts.Canary]; opts.Canary != "" && !ok {
		return nil, fmt.Errorf("%w: unknown canary %q", ErrConfig, opts.Canary)
	}
	rec := opts.Recorder
	if rec == nil {
		rec = NewRecorder()
	}
	var restored []engine.Record
	if opts.Store != nil {
		var err error
		if restored, err = opts.Store.Records(); err != nil {
			return nil, fmt.Errorf("live: restore broker: %w", err)
		}
	}
	eng, err := engine.NewBroker(opts.Config, restored)
	if err != nil {
		return nil, err
	}
	b := &Broker{opts: opts, rec: rec, l: newLoop(), ln: ln, eng: eng, conns: map[engine.ConnID]*brokerConn{}, unhang: make(chan struct{})}
	if len(restored) > 0 {
		rec.Add(model.Event{Kind: model.Restart, Time: int64(b.l.now()), Node: model.BrokerNode})
	}
	go b.l.run()
	go b.accept()
	return b, nil
}

// Addr is the listener's address.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// Recorder returns the recorder of the broker's history.
func (b *Broker) Recorder() *Recorder { return b.rec }

// Err reports the error that stopped the broker (a store failure), or nil.
func (b *Broker) Err() error {
	var err error
	if !b.l.call(func() { err = b.failed }) {
		return b.failed
	}
	return err
}

// Stats returns the engine's counters.
func (b *Broker) Stats() engine.BrokerStats {
	var s engine.BrokerStats
	b.l.call(func() { s = b.eng.Stats() })
	return s
}

// Close stops accepting, closes every connection and stops the loop. The
// store keeps what the engine persisted: a new ServeBroker on the same store
// is a reboot.
func (b *Broker) Close() error { return b.close(false) }

// Shutdown stops the broker cleanly: the engine closes every connection as
// a server shutting down and writes out what it persists at all (a
// periodic store's snapshot), then the broker closes as Close does.
func (b *Broker) Shutdown() error { return b.close(true) }

func (b *Broker) close(clean bool) error {
	b.unhangOnce.Do(func() { close(b.unhang) })
	err := b.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	b.l.call(func() {
		if clean {
			b.step(engine.Shutdown{})
		}
		b.closeAll()
		b.l.stopAsync()
	})
	b.l.stop()
	return err
}

func (b *Broker) closeAll() {
	ids := make([]engine.ConnID, 0, len(b.conns))
	for id := range b.conns {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		b.conns[id].c.Close()
		delete(b.conns, id)
	}
}

// accept hands every new connection to the loop.
func (b *Broker) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return // closed
		}
		if !b.l.post(func() { b.opened(c) }) {
			c.Close()
			return
		}
	}
}

func (b *Broker) opened(c net.Conn) {
	if b.failed != nil {
		c.Close()
		return
	}
	if b.opts.MaxConnections > 0 && len(b.conns) >= b.opts.MaxConnections {
		b.logf("conn from %s refused: %d connections open, max_connections %d", c.RemoteAddr(), len(b.conns), b.opts.MaxConnections)
		c.Close()
		return
	}
	b.nextID++
	id := b.nextID
	b.conns[id] = &brokerConn{c: c, shadow: packet.NewDecoder(0, 1<<28), remote: c.RemoteAddr().String(), id: id}
	b.logf("conn %d opened from %s", id, c.RemoteAddr())
	b.canaryOpened(c)
	if b.opts.ConnectTimeout > 0 {
		b.l.afterFunc(b.opts.ConnectTimeout, func() { b.connectTimedOut(id) })
	}
	b.step(engine.ConnOpened{Conn: id})
	go b.l.pump(c, func(data []byte) { b.received(id, data) }, func() { b.closed(id) })
}

// connectTimedOut closes connection id if its CONNECT has not come yet.
func (b *Broker) connectTimedOut(id engine.ConnID) {
	bc := b.conns[id]
	if bc == nil || bc.peer != "" || bc.closing {
		return
	}
	b.logf("conn from %s closed: no CONNECT within %v", bc.remote, b.opts.ConnectTimeout)
	bc.c.Close() // the pump reports ConnClosed
}

func (b *Broker) received(id engine.ConnID, data []byte) {
	bc := b.conns[id]
	if bc == nil || bc.closing {
		return // a closing connection is drained, not read
	}
	if framedCanary(b.opts.Canary) {
		if data = b.canaryReceived(bc, data); len(data) == 0 {
			return
		}
	}
	b.recordReceived(bc, data)
	b.step(engine.BytesReceived{Conn: id, Data: data})
}

// recordReceived decodes a copy of the stream for the history; the peer is
// named by its CONNECT's client id, or "anonymous-N" (N the connection's
// number) when the id is empty, so two anonymous clients stay apart.
func (b *Broker) recordReceived(bc *brokerConn, data []byte) {
	if bc.shadow == nil {
		return
	}
	bc.shadow.Feed(data)
	for {
		p, err := bc.shadow.Next()
		if err != nil || p == nil {
			if err != nil {
				bc.shadow = nil
			}
			return
		}
		now := int64(b.l.now())
		if cp, ok := p.(*packet.Connect); ok && bc.peer == "" {
			bc.peer = cp.ClientID
			if bc.peer == "" {
				bc.peer = fmt.Sprintf("anonymous-%d", bc.id)
			}
			b.logf("conn from %s: CONNECT client id %q clean start %v", bc.remote, cp.ClientID, cp.CleanStart)
			b.rec.Add(model.Event{Kind: model.ConnOpened, Time: now, Node: model.BrokerNode, Peer: bc.peer})
		}
		b.rec.Add(model.Event{Kind: model.Received, Time: now, Node: model.BrokerNode, Peer: bc.peer, Packet: sized(modelPacket(p, b.opts.MsgID), bc.shadow.LastSize())})
	}
}

func (b *Broker) closed(id engine.ConnID) {
	bc := b.conns[id]
	if bc == nil {
		return
	}
	delete(b.conns, id)
	b.logf("conn from %s closed (client id %q)", bc.remote, bc.peer)
	if bc.peer != "" {
		b.rec.Add(model.Event{Kind: model.ConnClosed, Time: int64(b.l.now()), Node: model.BrokerNode, Peer: bc.peer})
	}
	b.step(engine.ConnClosed{Conn: id})
}

func (b *Broker) fire(id engine.TimerID) { b.step(engine.TimerFired{Timer: id}) }

// step feeds one event and carries its actions out in order.
func (b *Broker) step(ev engine.Event) {
	if b.failed != nil {
		return
	}
	for _, a := range b.canaryActions(b.eng.Step(b.l.now(), ev)) {
		if b.failed != nil {
			return // a store failure: nothing after it may take effect
		}
		b.do(a)
	}
}

func (b *Broker) do(a engine.Action) {
	switch a := a.(type) {
	case engine.Send:
		b.handleSend(a)
	case engine.CloseConn:
		if b.opts.Canary == CanaryKeepOpen && codecRefusal(a.Reason) {
			return // the canary's bug: the connection stays open
		}
		if bc := b.conns[a.Conn]; bc != nil {
			bc.closeGracefully() // the reader reports ConnClosed
		}
	case engine.Persist:
		if b.opts.Store != nil {
			if err := b.opts.Store.Apply(a); err != nil {
				b.fail(err)
			}
		}
	case engine.SetTimer:
		b.l.setTimer(a.Timer, a.At, b.fire)
	case engine.CancelTimer:
		b.l.cancelTimer(a.Timer)
	}
}

func (b *Broker) handleSend(a engine.Send) {
	bc := b.conns[a.Conn]
	if bc == nil {
		return
	}
	a = b.canarySend(a)
	peer := bc.peer
	if cp, ok := a.Packet.(*packet.Connack); ok && cp.Props.Present.Has(packet.PropAssignedClientID) && peer == "" {
		peer = cp.Props.AssignedClientID
	}
	// Recorded before the write, so the peer's receipt never precedes it
	// in a shared history; a failed write loses the packet with the
	// connection.
	b.rec.Add(model.Event{Kind: model.Sent, Time: int64(b.l.now()), Node: model.BrokerNode, Peer: peer, Packet: sized(modelPacket(a.Packet, b.opts.MsgID), len(a.Data))})
	_ = bc.c.SetWriteDeadline(time.Now().Add(IOTimeout))
	if _, err := bc.c.Write(a.Data); err != nil {
		bc.c.Close()
	}
}

// fail stops the broker after a store failure, as a crashed process would.
func (b *Broker) fail(err error) {
	b.failed = err
	b.rec.Add(model.Event{Kind: model.Failed, Time: int64(b.l.now()), Node: model.BrokerNode, Reason: err.Error()})
	b.ln.Close()
	b.closeAll()
}

// codecRefusal reports whether err is the codec's refusal of a packet (a
// malformed packet or a protocol error it names a rule for).
func codecRefusal(err error) bool {
	var pe *packet.Error
	return errors.As(err, &pe)
}

// logf writes one ConnLog line, if logging is on.
func (b *Broker) logf(format string, args ...any) {
	if b.opts.ConnLog != nil {
		b.opts.ConnLog(fmt.Sprintf(format, args...))
	}
}
