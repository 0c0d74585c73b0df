package live

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/engine/packet"
)

// TestGracefulClose: a client that is still writing when the broker ends its
// connection with a reason (here DISCONNECT 0x93, Receive Maximum exceeded)
// reads that DISCONNECT and then the end of the stream, not a connection
// reset: the broker stops reading new work, half-closes, and drains what the
// client still sends before it closes (issue #16). A plain close with unread
// bytes in the socket makes the kernel answer RST, and the client often loses
// the DISCONNECT.
func TestGracefulClose(t *testing.T) {
	fixed, _ := engine.PresetByName("fixed")
	cfg := engine.DefaultBrokerConfig(fixed.Broker)
	cfg.ReceiveMaximum = 2
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ServeBroker(ln, BrokerOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for round := 0; round < 5; round++ {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		must := func(p packet.Packet) []byte {
			buf, err := packet.Append(nil, packet.V5, p)
			if err != nil {
				t.Fatal(err)
			}
			return buf
		}
		var burst []byte
		burst = append(burst, must(&packet.Connect{Version: packet.V5, ClientID: "w", CleanStart: true})...)
		for id := uint16(1); id <= 2000; id++ { // far past Receive Maximum 2: no PUBREL is sent
			burst = append(burst, must(&packet.Publish{QoS: 2, PacketID: id, Topic: []byte("t"), Payload: make([]byte, 2048)})...)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		// The client writes 4 MB while the broker decides to close after the
		// third PUBLISH: most of it is still unread in the broker's socket.
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Write(burst) // fails once the broker has closed; that is the point
		}()
		got, err := readAll(c)
		<-done
		c.Close()
		if err != nil {
			t.Fatalf("round %d: reading the broker's answer: %v (want its DISCONNECT, then EOF)", round, err)
		}
		d := packet.NewDecoder(packet.V5, 0)
		d.Feed(got)
		var last packet.Packet
		for {
			p, err := d.Next()
			if err != nil {
				t.Fatalf("round %d: decoding the broker's stream: %v", round, err)
			}
			if p == nil {
				break
			}
			last = p
		}
		if dp, ok := last.(*packet.Disconnect); !ok || dp.Reason != packet.ReceiveMaximumExceeded {
			t.Fatalf("round %d: last packet %#v, want DISCONNECT 0x93", round, last)
		}
	}
}

// readAll reads until EOF; a reset is an error.
func readAll(c net.Conn) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
