package live

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/model"
)

// Direction is one direction of a proxied connection.
type Direction uint8

// Directions.
const (
	Up   Direction = iota // client -> broker
	Down                  // broker -> client
)

// String names the direction.
func (d Direction) String() string {
	if d == Up {
		return "up"
	}
	return "down"
}

// ProxyOptions configures a recording proxy.
type ProxyOptions struct {
	// Target is the broker's address, dialed for every accepted connection.
	Target string
	// Recorder receives the history.
	Recorder *Recorder
	// MsgID extracts the model's message id from a payload (default: the
	// whole payload).
	MsgID MsgIDFunc
	// Observe reports whether the proxy records the client's own view of
	// the connection of the client with this id (an external program,
	// which records nothing itself): ConnOpened, Sent, Received, ConnClosed
	// under the client id, plus Connected at each CONNACK and Subscribed at
	// each SUBACK. Nil observes no client.
	Observe func(clientID string) bool
	// HadState reports whether the client holds session state as it
	// connects (its Connected event's HadState); nil says no.
	HadState func(clientID string) bool
	// RecordBroker records the broker's view (node model.BrokerNode, peer
	// the client id) of every connection: for a broker that records
	// nothing itself (a child process, mosquitto).
	RecordBroker bool

	// onReceive, if set, sees every packet an observed client receives
	// (the tester's link from a stdout line to the PUBLISH it delivered).
	onReceive func(clientID string, p model.Packet)
}

// Proxy is the tester's recording TCP proxy: every client connects to it,
// it dials the broker for each connection and forwards both directions,
// decoding them with engine/packet's stream decoder to record the history
// in the model's vocabulary (see ProxyOptions). A packet is recorded as
// Sent when its last byte is read from its sender, and as Received just
// before it is written to its receiver (never, if a black hole swallows
// it), so the history never shows an effect before its cause; faults act
// between chunks, so a Cut never falls between a recorded arrival and its
// write (a receiver that dies before reading it is a crash before it
// processed the packet, as in the simulator).
//
// Faults: Cut closes connections, BlackHole drops one direction's bytes
// (the connection looks alive: a stalled network), Slow forwards in small
// chunks with a delay between them; Heal ends them all (a black-holed
// connection cannot resume its byte stream, so Heal cuts it).
type Proxy struct {
	opts ProxyOptions
	ln   net.Listener
	wg   sync.WaitGroup

	mu     sync.Mutex
	conns  map[int]*proxyConn
	nextID int
	delay  time.Duration // Slow: pause between chunks
	chunk  int           // Slow: bytes per chunk (0: no chunking)
	closed bool
	down   bool // the broker is down (SetBrokerDown): nothing reaches it
	// dialErr is the last failure to reach the broker for a client
	// (a start that never subscribes says it).
	dialErr error
}

// proxyConn is one client connection and its broker leg.
type proxyConn struct {
	id             int
	client, broker net.Conn
	flow           sync.Mutex // held by a direction from decoding a chunk to writing it

	// Guarded by Proxy.mu.
	clientID   string // from its CONNECT
	observed   bool   // Observe(clientID)
	version    packet.Version
	clean      bool
	persistent bool
	subs       map[uint16][]packet.Subscription // SUBSCRIBEs awaiting SUBACK
	hole       [2]bool                          // black-holed directions
	holed      bool                             // some bytes were dropped: Heal cuts it
	closing    bool                             // shutdown began: nothing more is forwarded
	pipes      int                              // directions still running
	ended      bool
}

// ErrProxy reports proxy options that cannot work.
var ErrProxy = errors.New("live: proxy")

// StartProxy listens on a kernel-chosen loopback port and forwards to
// opts.Target until Close.
func StartProxy(opts ProxyOptions) (*Proxy, error) {
	if opts.Target == "" || opts.Recorder == nil {
		return nil, fmt.Errorf("%w: Target and Recorder are required", ErrProxy)
	}
	if opts.MsgID == nil {
		opts.MsgID = PayloadMsgID
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%w: listen: %w", ErrProxy, err)
	}
	p := &Proxy{opts: opts, ln: ln, conns: map[int]*proxyConn{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is Addr's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Close stops accepting, closes every connection and waits for the
// forwarding goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.Cut(nil)
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		b, err := net.DialTimeout("tcp", p.opts.Target, IOTimeout)
		if err != nil {
			p.mu.Lock()
			p.dialErr = err
			p.mu.Unlock()
			c.Close() // the broker is down: the client sees a refused session
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			b.Close()
			return
		}
		p.nextID++
		pc := &proxyConn{id: p.nextID, client: c, broker: b, subs: map[uint16][]packet.Subscription{}, pipes: 2}
		p.conns[pc.id] = pc
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(pc, Up)
		go p.pipe(pc, Down)
	}
}

// SetBrokerDown marks the broker as down (about to be killed, or not yet
// restarted): from then on the proxy forwards and records nothing in either
// direction and refuses new connections, so the history shows no packet
// received by, or sent by, a dead broker (bytes in flight are lost, as in
// a crash). SetBrokerDown(false) ends that.
func (p *Proxy) SetBrokerDown(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

// Cut closes the connections of the clients match accepts (nil: all) and
// returns how many it closed.
func (p *Proxy) Cut(match func(clientID string) bool) int {
	n := 0
	for _, pc := range p.matching(match) {
		p.shutdown(pc, false) // between chunks: what was recorded as arriving was written
		n++
	}
	return n
}

// BlackHole drops, from now on, the bytes of direction d of the current
// connections of the clients match accepts (nil: all), and returns how many
// connections it affects. Heal ends it by cutting them.
func (p *Proxy) BlackHole(match func(clientID string) bool, d Direction) int {
	conns := p.matching(match)
	for _, pc := range conns {
		pc.flow.Lock() // between chunks
		p.mu.Lock()
		pc.hole[d] = true
		pc.holed = true
		p.mu.Unlock()
		pc.flow.Unlock()
	}
	return len(conns)
}

// Slow makes every connection forward in chunks of at most chunk bytes,
// pausing delay before each; chunk 0 turns it off.
func (p *Proxy) Slow(chunk int, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chunk, p.delay = max(chunk, 0), delay
}

// Heal ends every fault: forwarding is fast again, and the connections that
// were black-holed are cut (their streams lost bytes). It returns how many
// it cut.
func (p *Proxy) Heal() int {
	p.Slow(0, 0)
	return p.Cut(holedMatcher(p))
}

// holedMatcher returns a matcher of the black-holed connections.
func holedMatcher(p *Proxy) func(string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	holed := map[string]bool{}
	for _, pc := range p.conns {
		if pc.holed {
			holed[pc.clientID] = true
		}
	}
	return func(id string) bool { return holed[id] }
}

// WaitClosed waits (at most timeout) until no connection of the clients
// match accepts is open, and reports whether that happened.
func (p *Proxy) WaitClosed(match func(clientID string) bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for len(p.matching(match)) > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// Conns returns the client ids of the open connections, sorted ("" for one
// whose CONNECT has not arrived).
func (p *Proxy) Conns() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, pc := range p.conns {
		ids = append(ids, pc.clientID)
	}
	sort.Strings(ids)
	return ids
}

// matching returns the open connections match accepts, in id order.
func (p *Proxy) matching(match func(string) bool) []*proxyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*proxyConn
	for _, pc := range p.conns {
		if match == nil || match(pc.clientID) {
			out = append(out, pc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// pipe forwards direction d of pc until either side ends, recording the
// packets it carries; then it closes both sides and records the end.
func (p *Proxy) pipe(pc *proxyConn, d Direction) {
	defer p.wg.Done()
	src, dst := pc.client, pc.broker
	if d == Down {
		src, dst = pc.broker, pc.client
	}
	defer p.pipeDone(pc)
	var dec *packet.Decoder
	if d == Up {
		dec = packet.NewDecoder(0, 0)
	}
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d == Down && dec == nil {
				dec = packet.NewDecoder(answerVersion(p.version(pc), buf[:n]), 0)
			}
			// From decoding a chunk to writing it, the connection is
			// held: a fault (Cut, BlackHole) acts between chunks, never
			// between recording a chunk's arrival and writing it.
			pc.flow.Lock()
			holed := p.holed(pc, d) // also once the connection is closing
			var a arrival
			dec, a = p.record(pc, d, dec, buf[:n])
			if !holed {
				holed = !p.arrived(pc, d, a) // before the write: the receiver reacts after
			}
			ok := holed || p.write(dst, buf[:n])
			pc.flow.Unlock()
			if !ok {
				p.shutdown(pc, false) // keep reading: what the sender still sends is recorded
			}
		}
		if err != nil {
			p.shutdown(pc, false)
			return
		}
	}
}

// answerVersion is the version to decode a broker's first bytes in: that
// of the client's CONNECT, but 3.1.1 for a 3.1.1 refusal of a 5.0 CONNECT
// (a 2-byte CONNACK with return code 1 to 5), which a 3.1.1-only broker
// sends and 5.0's decoder would take for a malformed packet: recorded, it
// tells the start diagnosis the broker refused the version.
func answerVersion(v packet.Version, first []byte) packet.Version {
	if v == packet.V5 && len(first) >= 4 && first[0] == 0x20 && first[1] == 0x02 && first[3] >= 1 && first[3] <= 5 {
		return packet.V311
	}
	return v
}

// version is the protocol level of pc's CONNECT (0 if none was decoded).
func (p *Proxy) version(pc *proxyConn) packet.Version {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pc.version
}

// holed reports whether direction d of pc drops its bytes: black-holed, or
// the broker is down.
func (p *Proxy) holed(pc *proxyConn, d Direction) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pc.hole[d] || p.down || pc.closing
}

// DrainTimeout bounds how long a closing connection waits for its peers to
// close their side after the proxy's FIN.
const DrainTimeout = 2 * time.Second

// shutdown starts closing pc gracefully, once: nothing more is forwarded
// (or recorded as arriving), both peers get a FIN after every byte already
// written, so what the history says arrived is read by them before the end
// of the stream (an abrupt close with unread data would send a reset, and
// the peer's kernel could drop bytes the history says arrived); the pipes
// read on, recording what the peers still send, until both peers closed or
// DrainTimeout passed. locked says the caller holds pc.flow.
func (p *Proxy) shutdown(pc *proxyConn, locked bool) {
	if !locked {
		pc.flow.Lock()
		defer pc.flow.Unlock()
	}
	p.mu.Lock()
	already := pc.closing
	pc.closing = true
	p.mu.Unlock()
	if already {
		return
	}
	deadline := time.Now().Add(DrainTimeout)
	for _, c := range []net.Conn{pc.client, pc.broker} {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			c.Close()
		}
		_ = c.SetReadDeadline(deadline)
	}
}

// pipeDone ends one direction; the second to end closes pc for good.
func (p *Proxy) pipeDone(pc *proxyConn) {
	p.mu.Lock()
	pc.pipes--
	last := pc.pipes == 0
	p.mu.Unlock()
	if last {
		p.end(pc)
	}
}

// write writes data to dst, in chunks with pauses while Slow is on. It
// reports false when the write failed.
func (p *Proxy) write(dst net.Conn, data []byte) bool {
	p.mu.Lock()
	chunk, delay := p.chunk, p.delay
	p.mu.Unlock()
	for len(data) > 0 {
		part := data
		if chunk > 0 {
			part = data[:min(chunk, len(data))]
			time.Sleep(delay)
		}
		_ = dst.SetWriteDeadline(time.Now().Add(IOTimeout))
		if _, err := dst.Write(part); err != nil {
			return false
		}
		data = data[len(part):]
	}
	return true
}

// end closes both sides of pc once and records the connection's end.
func (p *Proxy) end(pc *proxyConn) {
	pc.client.Close()
	pc.broker.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if pc.ended {
		return
	}
	pc.ended = true
	delete(p.conns, pc.id)
	if pc.clientID == "" {
		return
	}
	now := time.Now().UnixNano()
	if pc.observed {
		p.opts.Recorder.Add(model.Event{Kind: model.ConnClosed, Time: now, Node: pc.clientID, Peer: model.BrokerNode})
	}
	if p.opts.RecordBroker {
		p.opts.Recorder.Add(model.Event{Kind: model.ConnClosed, Time: now, Node: model.BrokerNode, Peer: pc.clientID})
	}
}

// DialErr is the last error the proxy met dialling the broker for a
// client, or nil.
func (p *Proxy) DialErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dialErr
}
