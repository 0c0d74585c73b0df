package packet_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/internal/mosquittotest"
)

// ioTimeout bounds every read and write of the interop test: a missing answer
// fails the test instead of hanging it.
const ioTimeout = 5 * time.Second

// wireConn speaks raw packets of this codec over TCP.
type wireConn struct {
	t    *testing.T
	name string
	c    net.Conn
	v    packet.Version
	dec  *packet.Decoder
	buf  []byte
}

func dialWire(t *testing.T, addr, name string, v packet.Version) *wireConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		t.Fatalf("%s: dial %s: %v", name, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &wireConn{t: t, name: name, c: c, v: v, dec: packet.NewDecoder(v, 1<<20), buf: make([]byte, 4096)}
}

// send encodes p with the codec and writes it.
func (w *wireConn) send(p packet.Packet) {
	w.t.Helper()
	data, err := packet.Append(nil, w.v, p)
	if err != nil {
		w.t.Fatalf("%s: encode %T: %v", w.name, p, err)
	}
	_ = w.c.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := w.c.Write(data); err != nil {
		w.t.Fatalf("%s: write %T: %v", w.name, p, err)
	}
}

// recv reads until the codec yields a whole packet. It returns io.EOF when
// the broker closed the connection.
func (w *wireConn) recv() (packet.Packet, error) {
	for {
		p, err := w.dec.Next()
		if err != nil || p != nil {
			return p, err
		}
		_ = w.c.SetReadDeadline(time.Now().Add(ioTimeout))
		n, err := w.c.Read(w.buf)
		if n > 0 {
			w.dec.Feed(w.buf[:n])
			continue
		}
		if err != nil {
			return nil, err
		}
	}
}

// expect reads the next packet and requires it to be of type T.
func expect[T packet.Packet](w *wireConn) T {
	w.t.Helper()
	p, err := w.recv()
	if err != nil {
		var zero T
		w.t.Fatalf("%s: waiting for %T: %v", w.name, zero, err)
	}
	got, ok := p.(T)
	if !ok {
		w.t.Fatalf("%s: got %T %+v, want %T", w.name, p, p, got)
	}
	return got
}

// message is a received PUBLISH copied out of the decoder's buffer.
type message struct {
	topic, payload string
	qos            packet.QoS
	id             uint16
	dup, retain    bool
}

func expectPublish(w *wireConn) message {
	w.t.Helper()
	p := expect[*packet.Publish](w)
	return message{topic: string(p.Topic), payload: string(p.Payload), qos: p.QoS, id: p.PacketID, dup: p.Dup, retain: p.Retain}
}

// connect sends CONNECT and checks the CONNACK.
func (w *wireConn) connect(clientID string) {
	w.t.Helper()
	w.send(&packet.Connect{Version: w.v, ClientID: clientID, CleanStart: true, KeepAlive: 30})
	ack := expect[*packet.Connack](w)
	if ack.Reason != packet.Success || ack.SessionPresent {
		w.t.Fatalf("%s: CONNACK reason %v session present %v, want success and no session", w.name, ack.Reason, ack.SessionPresent)
	}
}

// disconnect sends DISCONNECT and waits for the broker to close the socket.
func (w *wireConn) disconnect() {
	w.t.Helper()
	w.send(&packet.Disconnect{Reason: packet.NormalDisconnection})
	p, err := w.recv()
	if !errors.Is(err, io.EOF) {
		w.t.Fatalf("%s: after DISCONNECT got %T, %v; want the broker to close (EOF)", w.name, p, err)
	}
}

// TestMosquittoInterop speaks every packet of a session with Debian's
// mosquitto, for 3.1.1 and 5.0: the codec's bytes must be accepted and
// mosquitto's bytes must decode.
func TestMosquittoInterop(t *testing.T) {
	for _, v := range []packet.Version{packet.V311, packet.V5} {
		t.Run("v"+v.String(), func(t *testing.T) {
			b := mosquittotest.Start(t, mosquittotest.Options{})
			interopSession(t, b.Addr, v)
		})
	}
}

func interopSession(t *testing.T, addr string, v packet.Version) {
	sub := dialWire(t, addr, "sub", v)
	sub.connect(fmt.Sprintf("interop-sub-%d", v))
	sub.send(&packet.Subscribe{PacketID: 1, Subs: []packet.Subscription{{Filter: "it/#", QoS: 2}}})
	sa := expect[*packet.Suback](sub)
	if sa.PacketID != 1 || !slices.Equal(sa.Reasons, []packet.ReasonCode{packet.GrantedQoS2}) {
		t.Fatalf("SUBACK id %d reasons %v, want id 1 [granted QoS 2]", sa.PacketID, sa.Reasons)
	}

	pub := dialWire(t, addr, "pub", v)
	pub.connect(fmt.Sprintf("interop-pub-%d", v))

	// The steps share the two connections, so they run in order in this test
	// (the wireConns fail t, not a subtest).
	interopQoS0(t, pub, sub)
	interopQoS1(t, pub, sub)
	interopQoS2(t, pub, sub)
	sub.send(&packet.Pingreq{})
	expect[*packet.Pingresp](sub)
	interopUnsubscribe(t, pub, sub)
	pub.disconnect()
	sub.disconnect()
}

func checkMessage(t *testing.T, got message, topic, payload string, qos packet.QoS) {
	t.Helper()
	if got.topic != topic || got.payload != payload || got.qos != qos || got.dup || got.retain {
		t.Fatalf("delivered %+v, want topic %q payload %q QoS %d, no DUP, no retain", got, topic, payload, qos)
	}
	if (qos == 0) != (got.id == 0) {
		t.Fatalf("delivered QoS %d with packet id %d [MQTT-2.2.1-2]", qos, got.id)
	}
}

func interopQoS0(t *testing.T, pub, sub *wireConn) {
	pub.send(&packet.Publish{Topic: []byte("it/q0"), Payload: []byte("zero")})
	checkMessage(t, expectPublish(sub), "it/q0", "zero", 0)
}

func interopQoS1(t *testing.T, pub, sub *wireConn) {
	pub.send(&packet.Publish{QoS: 1, PacketID: 10, Topic: []byte("it/q1"), Payload: []byte("one")})
	if ack := expect[*packet.Puback](pub); ack.PacketID != 10 || ack.Reason.IsError() {
		t.Fatalf("PUBACK id %d reason %v, want id 10 success", ack.PacketID, ack.Reason)
	}
	m := expectPublish(sub)
	checkMessage(t, m, "it/q1", "one", 1)
	sub.send(&packet.Puback{PacketID: m.id})
}

func interopQoS2(t *testing.T, pub, sub *wireConn) {
	pub.send(&packet.Publish{QoS: 2, PacketID: 11, Topic: []byte("it/q2"), Payload: []byte("two")})
	if rec := expect[*packet.Pubrec](pub); rec.PacketID != 11 || rec.Reason.IsError() {
		t.Fatalf("PUBREC id %d reason %v, want id 11 success", rec.PacketID, rec.Reason)
	}
	pub.send(&packet.Pubrel{PacketID: 11})
	if comp := expect[*packet.Pubcomp](pub); comp.PacketID != 11 || comp.Reason.IsError() {
		t.Fatalf("PUBCOMP id %d reason %v, want id 11 success", comp.PacketID, comp.Reason)
	}
	m := expectPublish(sub)
	checkMessage(t, m, "it/q2", "two", 2)
	sub.send(&packet.Pubrec{PacketID: m.id})
	if rel := expect[*packet.Pubrel](sub); rel.PacketID != m.id || rel.Reason.IsError() {
		t.Fatalf("PUBREL id %d reason %v, want id %d success", rel.PacketID, rel.Reason, m.id)
	}
	sub.send(&packet.Pubcomp{PacketID: m.id})
	// The broker must have completed the flow: a ping round trip shows no
	// PUBREL retry or other packet is pending on the subscriber's side.
	sub.send(&packet.Pingreq{})
	expect[*packet.Pingresp](sub)
}

func interopUnsubscribe(t *testing.T, pub, sub *wireConn) {
	sub.send(&packet.Unsubscribe{PacketID: 2, Filters: []string{"it/#"}})
	ua := expect[*packet.Unsuback](sub)
	if ua.PacketID != 2 {
		t.Fatalf("UNSUBACK id %d, want 2", ua.PacketID)
	}
	if want := []packet.ReasonCode(nil); sub.v == packet.V311 && !slices.Equal(ua.Reasons, want) {
		t.Fatalf("3.1.1 UNSUBACK carries reasons %v", ua.Reasons)
	}
	if sub.v == packet.V5 && !slices.Equal(ua.Reasons, []packet.ReasonCode{packet.Success}) {
		t.Fatalf("v5 UNSUBACK reasons %v, want [success]", ua.Reasons)
	}
	// A message published now must not reach the subscriber: the ping answer
	// comes first and alone.
	pub.send(&packet.Publish{QoS: 1, PacketID: 12, Topic: []byte("it/after"), Payload: []byte("gone")})
	ack := expect[*packet.Puback](pub)
	if ack.PacketID != 12 {
		t.Fatalf("PUBACK id %d, want 12", ack.PacketID)
	}
	if pub.v == packet.V5 && ack.Reason != packet.NoMatchingSubscribers {
		t.Errorf("v5 PUBACK reason %v, want No matching subscribers (0x10)", ack.Reason)
	}
	sub.send(&packet.Pingreq{})
	expect[*packet.Pingresp](sub)
}
