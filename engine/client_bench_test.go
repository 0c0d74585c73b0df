package engine

import (
	"testing"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// benchClient returns a connected client with the given policy.
func benchClient(b *testing.B, p ClientPolicy) (*Client, ConnID) {
	cfg := DefaultClientConfig("c1", p)
	cfg.KeepAlive = 0
	c, err := NewClient(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	c.Step(0, Connect{Cmd: 1})
	c.Step(0, ConnOpened{Conn: 1})
	ack, _ := packet.Append(nil, packet.V5, &packet.Connack{})
	c.Step(0, BytesReceived{Conn: 1, Data: ack})
	if !c.Connected() {
		b.Fatal("not connected")
	}
	return c, 1
}

// BenchmarkClientPublishQoS1 is one QoS 1 publish and its PUBACK on the
// publisher, with the memory store (no Persist).
func BenchmarkClientPublishQoS1(b *testing.B) {
	p := presetFixedClient
	p.Retransmit = RetransmitMemory
	c, conn := benchClient(b, p)
	payload := []byte("0123456789abcdef")
	puback := make([]byte, 0, 8)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		acts := c.Step(0, Publish{Cmd: CmdID(i), Topic: "bench/topic", Payload: payload, QoS: 1})
		id := acts[len(acts)-1].(Send).Packet.(*packet.Publish).PacketID
		puback, _ = packet.Append(puback[:0], packet.V5, &packet.Puback{PacketID: id})
		c.Step(0, BytesReceived{Conn: conn, Data: puback})
	}
}

// BenchmarkClientReceiveQoS1 is one incoming QoS 1 PUBLISH, delivered and
// acknowledged after the callback.
func BenchmarkClientReceiveQoS1(b *testing.B) {
	c, conn := benchClient(b, presetFixedClient)
	pub, _ := packet.Append(nil, packet.V5, &packet.Publish{QoS: 1, PacketID: 7, Topic: []byte("bench/topic"), Payload: []byte("0123456789abcdef")})
	b.ReportAllocs()
	for b.Loop() {
		acts := c.Step(0, BytesReceived{Conn: conn, Data: pub})
		c.Step(0, Ack{Delivery: acts[0].(Deliver).Delivery})
	}
}
