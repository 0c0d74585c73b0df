package live_test

import (
	"net"
	"os"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine/packet"
	"github.com/mqttlab/mqttlab/live"
)

// connectAs is a CONNECT of protocol level v (4 or 5), clean start, keep
// alive 60, client id id.
func connectAs(v byte, id string) []byte {
	body := []byte{0, 4, 'M', 'Q', 'T', 'T', v, 0x02, 0, 60}
	if v == 5 {
		body = append(body, 0) // no properties
	}
	body = append(append(body, 0, byte(len(id))), id...)
	return append([]byte{0x10, byte(len(body))}, body...)
}

// seen is what a client read from the broker until it closed or a bound
// passed.
type seen struct {
	pkts   []packet.Packet
	closed bool
}

// has returns the first packet of type t (nil if none).
func (s seen) has(t packet.Type) packet.Packet {
	for _, p := range s.pkts {
		if p.Type() == t {
			return p
		}
	}
	return nil
}

// readFor decodes what the broker sends on c in version v until it closes
// c or d passes.
func readFor(c net.Conn, v byte, d time.Duration) seen {
	var s seen
	dec := packet.NewDecoder(packet.Version(v), 0)
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		dec.Feed(buf[:n])
		for {
			p, derr := dec.Next()
			if derr != nil || p == nil {
				break
			}
			s.pkts = append(s.pkts, p)
		}
		if err != nil {
			ne, ok := err.(net.Error)
			s.closed = !ok || !ne.Timeout()
			return s
		}
	}
}

// dialSend connects to b and writes the packets.
func dialSend(t *testing.T, b *live.Broker, pkts ...[]byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, p := range pkts {
		if _, err := c.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Packets of the canary tests.
var (
	subAll4  = []byte{0x82, 6, 0, 1, 0, 1, '#', 0}                  // SUBSCRIBE id 1 "#" QoS 0
	subA4    = []byte{0x82, 9, 0, 1, 0, 4, 'f', 'z', '/', 'a', 1}   // SUBSCRIBE id 1 "fz/a" QoS 1
	pubA4q1  = []byte{0x32, 9, 0, 4, 'f', 'z', '/', 'a', 0, 2, 'x'} // PUBLISH QoS 1 id 2 "fz/a"
	pubWild4 = []byte{0x32, 9, 0, 4, 'f', 'z', '/', '#', 0, 9, 'x'} // PUBLISH QoS 1 id 9 "fz/#" [MQTT-3.3.2-2]
	pubWild5 = []byte{0x30, 8, 0, 4, 'f', 'z', '/', '#', 0, 'x'}    // 5.0 PUBLISH QoS 0 "fz/#"
	pubrel5  = []byte{0x62, 2, 0, 5}                                // PUBREL id 5, never received
)

// TestBrokerCanaries: each canary shows its bug on a hand-written exchange
// and the broker without it does not (the crash canary's walker is tested
// inside the package: its panic would end this test's process).
func TestBrokerCanaries(t *testing.T) {
	wait := 2 * time.Second
	for _, c := range []struct {
		canary string
		// bug reports whether the exchange showed the canary's bug.
		bug func(t *testing.T, b *live.Broker) bool
	}{
		{live.CanaryKeepOpen, func(t *testing.T, b *live.Broker) bool {
			return !readFor(dialSend(t, b, connectAs(4, "k"), pubWild4), 4, wait).closed
		}},
		{live.CanaryAckFirst, func(t *testing.T, b *live.Broker) bool {
			s := readFor(dialSend(t, b, connectAs(4, "a"), pubWild4), 4, wait)
			ack, _ := s.has(packet.PUBACK).(*packet.Puback)
			return ack != nil && ack.PacketID == 9
		}},
		{live.CanaryWildcard, func(t *testing.T, b *live.Broker) bool {
			sub := dialSend(t, b, connectAs(4, "s"), subAll4)
			if s := readFor(sub, 4, 300*time.Millisecond); s.has(packet.SUBACK) == nil {
				t.Fatalf("no SUBACK: %v", s.pkts)
			}
			dialSend(t, b, connectAs(4, "p"), pubWild4)
			return readFor(sub, 4, 500*time.Millisecond).has(packet.PUBLISH) != nil
		}},
		{live.CanaryWillReason, func(t *testing.T, b *live.Broker) bool {
			d, _ := readFor(dialSend(t, b, connectAs(5, "w"), pubWild5), 5, wait).has(packet.DISCONNECT).(*packet.Disconnect)
			if d == nil {
				t.Fatal("no DISCONNECT")
			}
			return d.Reason == 0x04
		}},
		{live.CanaryDropAck, func(t *testing.T, b *live.Broker) bool {
			c := dialSend(t, b, connectAs(4, "d"), subA4)
			if s := readFor(c, 4, 300*time.Millisecond); s.has(packet.SUBACK) == nil {
				t.Fatalf("no SUBACK: %v", s.pkts)
			}
			if _, err := c.Write(pubA4q1); err != nil {
				t.Fatal(err)
			}
			s := readFor(c, 4, 500*time.Millisecond)
			if s.has(packet.PUBLISH) == nil {
				t.Fatal("the publisher did not get its own message")
			}
			return s.has(packet.PUBACK) == nil
		}},
		{live.CanaryHang, func(t *testing.T, b *live.Broker) bool {
			s := readFor(dialSend(t, b, connectAs(5, "h"), pubrel5), 5, 500*time.Millisecond)
			probe := readFor(dialSend(t, b, connectAs(4, "probe")), 4, 500*time.Millisecond)
			return s.has(packet.PUBCOMP) == nil && probe.has(packet.CONNACK) == nil
		}},
		{live.CanaryLeakFD, func(t *testing.T, b *live.Broker) bool {
			before := openFDs(t)
			for range 20 {
				c, err := net.Dial("tcp", b.Addr())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Write(connectAs(4, "f")); err != nil {
					t.Fatal(err)
				}
				readFor(c, 4, 100*time.Millisecond)
				c.Close()
			}
			// the broker closes its side once it reads each end; a leak
			// stays whatever the wait
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if openFDs(t)-before < 15 { // of 20: room for descriptors other tests were closing
					return false
				}
			}
			return true
		}},
	} {
		t.Run(c.canary, func(t *testing.T) {
			if live.Canaries[c.canary] == "" {
				t.Fatalf("%s is not in live.Canaries", c.canary)
			}
			for _, canary := range []string{"", c.canary} {
				if got := c.bug(t, serveLimited(t, live.BrokerOptions{Canary: canary})); got != (canary != "") {
					t.Errorf("canary %q: the bug shown: %v", canary, got)
				}
			}
		})
	}
	if len(live.Canaries) != 8 {
		t.Errorf("%d canaries, want the 8 tested here and the crash canary's own test", len(live.Canaries))
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
