package packet_test

import (
	"bytes"
	"testing"

	paho "github.com/eclipse/paho.golang/packets"

	"github.com/mqttlab/mqttlab/engine/packet"
)

// The benchmarks compare this codec with paho.golang's packets package on the
// same MQTT 5.0 packets (paho's codec is v5 only). Sub-benchmarks are named
// mqttlab/... and paho/... so the two sit side by side.

const benchTopic = "sensors/building-7/floor-3/room-12/temperature"

var payloadSizes = []struct {
	name string
	n    int
}{{"16B", 16}, {"4KiB", 4096}}

func benchPublish(n int) *packet.Publish {
	return &packet.Publish{QoS: 1, PacketID: 4242, Topic: []byte(benchTopic), Payload: bytes.Repeat([]byte{'x'}, n)}
}

func pahoPublish(n int) *paho.Publish {
	return &paho.Publish{QoS: 1, PacketID: 4242, Topic: benchTopic, Payload: bytes.Repeat([]byte{'x'}, n),
		Properties: &paho.Properties{}}
}

func BenchmarkPublishEncode(b *testing.B) {
	for _, sz := range payloadSizes {
		b.Run("mqttlab/"+sz.name, func(b *testing.B) {
			p := benchPublish(sz.n)
			buf := make([]byte, 0, sz.n+256)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = packet.Append(buf[:0], packet.V5, p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("paho/"+sz.name, func(b *testing.B) {
			p := pahoPublish(sz.n)
			var buf bytes.Buffer
			buf.Grow(sz.n + 256)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if _, err := p.WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPublishDecode(b *testing.B) {
	for _, sz := range payloadSizes {
		wire, err := packet.Append(nil, packet.V5, benchPublish(sz.n))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("mqttlab/"+sz.name, func(b *testing.B) {
			var p packet.Publish
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := packet.DecodePublish(packet.V5, wire, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("paho/"+sz.name, func(b *testing.B) {
			r := bytes.NewReader(wire)
			b.SetBytes(int64(sz.n))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(wire)
				if _, err := paho.ReadPacket(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkConnect encodes and decodes a CONNECT with credentials and two
// properties.
func BenchmarkConnect(b *testing.B) {
	b.Run("mqttlab", func(b *testing.B) {
		c := &packet.Connect{Version: packet.V5, ClientID: "bench-client-0001", CleanStart: true, KeepAlive: 30,
			HasUsername: true, Username: "user", HasPassword: true, Password: []byte("pass"),
			Props: packet.Properties{Present: packet.PropSet(0).With(packet.PropSessionExpiry).With(packet.PropReceiveMaximum),
				SessionExpiry: 3600, ReceiveMaximum: 100}}
		buf := make([]byte, 0, 256)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = packet.Append(buf[:0], packet.V5, c); err != nil {
				b.Fatal(err)
			}
			if _, _, err := packet.Decode(packet.V5, buf, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("paho", func(b *testing.B) {
		se, rm := uint32(3600), uint16(100)
		c := &paho.Connect{ProtocolName: "MQTT", ProtocolVersion: 5, ClientID: "bench-client-0001", CleanStart: true,
			KeepAlive: 30, UsernameFlag: true, Username: "user", PasswordFlag: true, Password: []byte("pass"),
			Properties: &paho.Properties{SessionExpiryInterval: &se, ReceiveMaximum: &rm}}
		var buf bytes.Buffer
		r := bytes.NewReader(nil)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if _, err := c.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			r.Reset(buf.Bytes())
			if _, err := paho.ReadPacket(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSuback encodes and decodes a SUBACK with four reason codes.
func BenchmarkSuback(b *testing.B) {
	codes := []byte{0, 1, 2, 0x80}
	b.Run("mqttlab", func(b *testing.B) {
		s := &packet.Suback{PacketID: 77, Reasons: []packet.ReasonCode{0, 1, 2, 0x80}}
		buf := make([]byte, 0, 64)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = packet.Append(buf[:0], packet.V5, s); err != nil {
				b.Fatal(err)
			}
			if _, _, err := packet.Decode(packet.V5, buf, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("paho", func(b *testing.B) {
		s := &paho.Suback{PacketID: 77, Reasons: codes, Properties: &paho.Properties{}}
		var buf bytes.Buffer
		r := bytes.NewReader(nil)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if _, err := s.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			r.Reset(buf.Bytes())
			if _, err := paho.ReadPacket(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBenchPacketsAgree checks that both codecs put the same bytes on the
// wire for the benchmarked packets, so the comparison is like for like.
func TestBenchPacketsAgree(t *testing.T) {
	for _, sz := range payloadSizes {
		ours, err := packet.Append(nil, packet.V5, benchPublish(sz.n))
		if err != nil {
			t.Fatal(err)
		}
		var theirs bytes.Buffer
		if _, err := pahoPublish(sz.n).WriteTo(&theirs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs.Bytes()) {
			t.Errorf("%s PUBLISH differs:\n ours % x\npaho % x", sz.name, ours[:40], theirs.Bytes()[:40])
		}
	}
	ours, _ := packet.Append(nil, packet.V5, &packet.Suback{PacketID: 77, Reasons: []packet.ReasonCode{0, 1, 2, 0x80}})
	var theirs bytes.Buffer
	if _, err := (&paho.Suback{PacketID: 77, Reasons: []byte{0, 1, 2, 0x80}, Properties: &paho.Properties{}}).WriteTo(&theirs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs.Bytes()) {
		t.Errorf("SUBACK differs: % x vs % x", ours, theirs.Bytes())
	}
}
