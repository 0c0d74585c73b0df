package fuzz

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	fuzzheaders "github.com/AdaLogics/go-fuzz-headers"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// This file is the part of the engine byte fuzzers that both the client and
// the broker target use. It is not a _test.go file on purpose: OSS-Fuzz's
// compile_native_go_fuzzer builds each target from its own _test.go file
// alone (renamed to a non-test file), so shared helpers must live in the
// package proper.

// wireChecker checks the actions an engine emits against the invariants it
// keeps on every connection, whatever its peer sends:
//
//   - every Send encodes exactly one packet that decodes with the codec and
//     equals Send.Packet;
//   - nothing is sent on, or closed twice, a connection the engine closed or
//     the world reported closed;
//   - a protocol error or a malformed packet from the peer ends in CloseConn
//     with a non-nil reason, in v5 right after a DISCONNECT (a CONNACK
//     before the session exists) whose reason code is >= 0x80
//     [MQTT-4.13.1-1];
//   - bytes a shadow decoder refuses close the connection in the same Step;
//   - no Internal error is ever reported, and Deliver ids are unique.
type wireChecker struct {
	server     bool // the engine is a broker: it answers CONNECT with CONNACK
	conns      map[engine.ConnID]*wireConn
	deliveries map[engine.DeliveryID]bool
}

// wireConn is what the checker knows of one connection.
type wireConn struct {
	version   packet.Version  // the client's fixed version; 0 for a broker (read from the shadow)
	shadow    *packet.Decoder // decodes the peer's bytes exactly as the engine must
	connected bool            // the session is established (CONNACK 0 accepted or sent)
	closed    bool            // closed by the engine or reported closed by the world
}

// newWireChecker returns a checker for a client (server=false) or a broker.
func newWireChecker(server bool) *wireChecker {
	return &wireChecker{server: server, conns: make(map[engine.ConnID]*wireConn), deliveries: make(map[engine.DeliveryID]bool)}
}

// opened registers a connection the world opened. v is the client's
// version, 0 for a broker; maxSize is the engine's maximum packet size.
func (w *wireChecker) opened(id engine.ConnID, v packet.Version, maxSize uint32) {
	w.conns[id] = &wireConn{version: v, shadow: packet.NewDecoder(v, maxSize)}
}

// isOpen reports whether the connection is open as far as the checker knows.
func (w *wireChecker) isOpen(id engine.ConnID) bool {
	c := w.conns[id]
	return c != nil && !c.closed
}

// setConnected marks the session of a client connection established.
func (w *wireChecker) setConnected(id engine.ConnID) {
	if c := w.conns[id]; c != nil {
		c.connected = true
	}
}

// worldClosed records a ConnClosed the world delivers.
func (w *wireChecker) worldClosed(id engine.ConnID) {
	if c := w.conns[id]; c != nil {
		c.closed = true
	}
}

// version is the protocol version of a connection's packets (3.1.1 while a
// broker does not know it yet: its refusals then use the 3.1.1 form).
func (c *wireConn) versionOrDefault() packet.Version {
	if c.version != 0 {
		return c.version
	}
	if v := c.shadow.Version(); v != 0 {
		return v
	}
	return packet.V311
}

// peerBytes feeds the shadow decoder the bytes the engine is about to
// receive on id and calls each for every whole packet. It returns the
// decoder's refusal, if the bytes hold one.
func (w *wireChecker) peerBytes(id engine.ConnID, data []byte, each func(packet.Packet)) error {
	c := w.conns[id]
	if c == nil || c.closed {
		return nil
	}
	c.shadow.Feed(data)
	for {
		p, err := c.shadow.Next()
		if err != nil || p == nil {
			return err
		}
		if each != nil {
			each(p)
		}
	}
}

// check verifies the actions of one Step. badConn/bad name the connection
// whose received bytes the shadow decoder refused in this Step (bad nil when
// none); exempt says the engine may legitimately ignore them (the legacy
// stuck client reads nothing any more).
func (w *wireChecker) check(acts []engine.Action, badConn engine.ConnID, bad error, exempt bool) error {
	for i, a := range acts {
		var err error
		switch a := a.(type) {
		case engine.Send:
			err = w.checkSend(a)
		case engine.CloseConn:
			err = w.checkClose(acts[:i], a)
		case engine.Deliver:
			if w.deliveries[a.Delivery] {
				err = fmt.Errorf("Deliver id %d given twice", a.Delivery)
			}
			w.deliveries[a.Delivery] = true
		case engine.Complete:
			if isInternal(a.Err) {
				err = fmt.Errorf("Complete of command %d reports an internal error: %v", a.Cmd, a.Err)
			}
		}
		if err != nil {
			return fmt.Errorf("action %d %s: %w", i, describeAction(a), err)
		}
	}
	if bad != nil && !exempt && w.isOpen(badConn) {
		return fmt.Errorf("connection %d received bytes the codec refuses (%v) and is still open", badConn, bad)
	}
	return nil
}

// checkSend verifies one Send: an open connection, one whole packet that
// decodes to Send.Packet. A CONNACK of a broker marks the session.
func (w *wireChecker) checkSend(s engine.Send) error {
	c := w.conns[s.Conn]
	switch {
	case c == nil:
		return fmt.Errorf("Send on connection %d that never opened", s.Conn)
	case c.closed:
		return fmt.Errorf("Send on connection %d after it closed", s.Conn)
	case len(s.Data) == 0:
		return errors.New("Send of no bytes")
	}
	v := c.versionOrDefault()
	if packet.Type(s.Data[0]>>4) == packet.CONNECT {
		v = 0 // CONNECT carries its own protocol level
	}
	p, n, err := packet.Decode(v, s.Data, 0)
	switch {
	case err != nil:
		return fmt.Errorf("sent bytes % x do not decode (v%d): %w", s.Data, v, err)
	case n != len(s.Data):
		return fmt.Errorf("Send holds %d bytes but its first packet is %d", len(s.Data), n)
	case s.Packet == nil || !packet.Equal(p, s.Packet):
		return fmt.Errorf("sent bytes decode to %#v, Send.Packet is %#v", p, s.Packet)
	}
	if ack, ok := p.(*packet.Connack); ok && w.server && ack.Reason == 0 {
		c.connected = true
	}
	return nil
}

// checkClose verifies one CloseConn given the actions before it.
func (w *wireChecker) checkClose(before []engine.Action, cc engine.CloseConn) error {
	c := w.conns[cc.Conn]
	switch {
	case c == nil:
		return fmt.Errorf("CloseConn of connection %d that never opened", cc.Conn)
	case c.closed:
		return fmt.Errorf("CloseConn of connection %d that is already closed", cc.Conn)
	case isInternal(cc.Reason):
		return fmt.Errorf("internal error: %v", cc.Reason)
	}
	c.closed = true
	if !isProtocolError(cc.Reason) || c.versionOrDefault() != packet.V5 {
		return nil
	}
	want := packet.DISCONNECT
	if !c.connected {
		if !w.server || c.shadow.Version() != packet.V5 {
			return nil // no session and no known v5 peer: nothing to answer with
		}
		want = packet.CONNACK
	}
	if len(before) > 0 {
		if s, ok := before[len(before)-1].(engine.Send); ok && s.Conn == cc.Conn && s.Packet != nil && s.Packet.Type() == want {
			if rc := reasonCode(s.Packet); rc >= 0x80 {
				return nil
			}
		}
	}
	return fmt.Errorf("v5 protocol error %q closed without a %s carrying a reason code >= 0x80 right before", cc.Reason, want)
}

// reasonCode returns the reason code of a DISCONNECT or CONNACK.
func reasonCode(p packet.Packet) packet.ReasonCode {
	switch p := p.(type) {
	case *packet.Disconnect:
		return p.Reason
	case *packet.Connack:
		return p.Reason
	}
	return 0
}

// isProtocolError reports whether err is a refusal of the peer's packets:
// the codec's, or a protocol rule the engine checks itself.
func isProtocolError(err error) bool {
	var pe *packet.Error
	return err != nil && (errors.As(err, &pe) || errors.Is(err, engine.ErrClientProtocol) || errors.Is(err, engine.ErrBrokerProtocol))
}

// isInternal reports whether err is an engine's broken-invariant report.
func isInternal(err error) bool {
	return err != nil && (errors.Is(err, engine.ErrClientInternal) || errors.Is(err, engine.ErrBrokerInternal))
}

// describeAction names an action for a failure message.
func describeAction(a engine.Action) string {
	switch a := a.(type) {
	case engine.Send:
		if a.Packet != nil {
			return fmt.Sprintf("Send(conn %d, %s)", a.Conn, a.Packet.Type())
		}
		return fmt.Sprintf("Send(conn %d)", a.Conn)
	case engine.CloseConn:
		return fmt.Sprintf("CloseConn(conn %d, %v)", a.Conn, a.Reason)
	}
	return fmt.Sprintf("%T", a)
}

// wireEvents keeps the last events fed to an engine, for failure messages;
// they are formatted only when a check fails.
type wireEvents struct {
	evs []timedEvent
}

// timedEvent is one event with the virtual time it was fed at.
type timedEvent struct {
	now engine.Time
	ev  engine.Event
}

// add records one event, keeping the last 40.
func (l *wireEvents) add(now engine.Time, ev engine.Event) {
	if len(l.evs) == 40 {
		l.evs = append(l.evs[:0], l.evs[1:]...)
	}
	l.evs = append(l.evs, timedEvent{now, ev})
}

// String lists the recorded events, one per line.
func (l *wireEvents) String() string {
	s := ""
	for _, e := range l.evs {
		if b, ok := e.ev.(engine.BytesReceived); ok {
			s += fmt.Sprintf("\n  t=%d BytesReceived{conn %d, % x}", e.now, b.Conn, b.Data)
			continue
		}
		s += fmt.Sprintf("\n  t=%d %#v", e.now, e.ev)
	}
	return s
}

// fuzzInput reads the decisions of one fuzz run from its input through
// go-fuzz-headers. Once the input is exhausted every read returns zero and
// done is set, so a run simply ends.
type fuzzInput struct {
	c    *fuzzheaders.ConsumeFuzzer
	done bool
}

// newFuzzInput wraps data.
func newFuzzInput(data []byte) *fuzzInput {
	return &fuzzInput{c: fuzzheaders.NewConsumer(data)}
}

// byte reads one byte.
func (in *fuzzInput) byte() byte {
	b, err := in.c.GetByte()
	if err != nil {
		in.done = true
	}
	return b
}

// intn reads a number in [0, n).
func (in *fuzzInput) intn(n int) int {
	i, err := in.c.GetInt()
	if err != nil {
		in.done = true
	}
	return i % n
}

// bool reads a flag (an even byte is true).
func (in *fuzzInput) bool() bool {
	b, err := in.c.GetBool()
	if err != nil {
		in.done = true
	}
	return b
}

// uint16 reads a 16-bit number (two bytes and a byte-order flag).
func (in *fuzzInput) uint16() uint16 {
	u, err := in.c.GetUint16()
	if err != nil {
		in.done = true
	}
	return u
}

// bytes reads a byte string (a four-byte length, then the bytes).
func (in *fuzzInput) bytes() []byte {
	b, err := in.c.GetBytes()
	if err != nil {
		in.done = true
	}
	return b
}

// inputBuilder writes inputs that fuzzInput reads back as the given
// decisions; the seed corpora are built with it.
type inputBuilder struct{ buf []byte }

// byte writes one byte (also what intn reads).
func (b *inputBuilder) byte(v byte) *inputBuilder {
	b.buf = append(b.buf, v)
	return b
}

// bool writes a flag.
func (b *inputBuilder) bool(v bool) *inputBuilder {
	if v {
		return b.byte(0)
	}
	return b.byte(1)
}

// uint16 writes a 16-bit number, big-endian.
func (b *inputBuilder) uint16(v uint16) *inputBuilder {
	b.buf = append(b.buf, byte(v>>8), byte(v))
	return b.bool(false)
}

// bytes writes a non-empty byte string. (GetBytes reads an empty length as
// 30 and takes the length modulo the bytes left, so a non-empty string read
// back in order gets exactly its bytes.)
func (b *inputBuilder) bytes(v []byte) *inputBuilder {
	if len(v) == 0 {
		panic("inputBuilder.bytes: empty strings cannot be encoded")
	}
	n := len(v)
	b.buf = append(b.buf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	b.buf = append(b.buf, v...)
	return b
}

// corpusFile is the content of a `go test fuzz v1` file holding one []byte.
func corpusFile(data []byte) string {
	return "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
}

// checkSeedDir checks that dir holds one corpus file per seed with the
// seed's bytes, or, with update, writes them. Other files in dir (crashers
// kept as regression inputs) are left alone.
func checkSeedDir(t *testing.T, dir string, seeds map[string][]byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range seeds {
		path := filepath.Join(dir, "seed-"+name)
		want := corpusFile(data)
		if update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("seed file %s is missing or stale (%v); rewrite the corpus with the test's -update flag", path, err)
		}
	}
}
