package live_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mqttlab/mqttlab/engine"
	"github.com/mqttlab/mqttlab/live"
)

// serveLimited serves the fixed preset's broker (no store) with opts' limits.
func serveLimited(t *testing.T, opts live.BrokerOptions) *live.Broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Config = engine.DefaultBrokerConfig(fixed(t).Broker)
	b, err := live.ServeBroker(ln, opts)
	if err != nil {
		ln.Close()
		t.Fatalf("ServeBroker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// closedWithin reports whether the broker ends c within d (a read returns
// EOF or a reset), reading and discarding what it sends.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			ne, ok := err.(net.Error)
			return !ok || !ne.Timeout()
		}
	}
}

// connect4 is a 3.1.1 CONNECT of client id "c", clean session, keep alive 60.
var connect4 = []byte{0x10, 0x0d, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 1, 'c'}

// TestBrokerConnectTimeout: a connection that never sends CONNECT is closed
// after ConnectTimeout; one that sends it in time stays open.
func TestBrokerConnectTimeout(t *testing.T) {
	b := serveLimited(t, live.BrokerOptions{ConnectTimeout: 300 * time.Millisecond})
	idle, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	ok, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer ok.Close()
	if _, err := ok.Write(connect4); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(idle, 5*time.Second) {
		t.Fatal("a connection without CONNECT was still open 5 s after a 300 ms connect timeout")
	}
	if closedWithin(ok, time.Second) {
		t.Fatal("a connection that sent CONNECT in time was closed")
	}
}

// TestBrokerMaxConnections: with MaxConnections 2 a third connection is
// closed at once, and a slot freed by a close is taken again.
func TestBrokerMaxConnections(t *testing.T) {
	b := serveLimited(t, live.BrokerOptions{MaxConnections: 2, ConnectTimeout: -1})
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	// The broker counts a connection once its loop took it: a CONNECT that
	// is answered proves both were taken.
	for _, c := range conns {
		if _, err := c.Write(connect4); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(make([]byte, 4)); err != nil {
			t.Fatalf("CONNACK: %v", err)
		}
	}
	third, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if !closedWithin(third, 5*time.Second) {
		t.Fatal("a third connection over max 2 stayed open")
	}
	conns[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(connect4)
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		_, err = c.Read(make([]byte, 4))
		c.Close()
		if err == nil {
			return // answered: the freed slot was taken
		}
	}
	t.Fatal("no connection was served after one of two closed")
}

// TestBrokerCanaryKeepOpen: the keep-open-on-malformed canary leaves a
// connection open after a malformed packet; the real broker closes it.
func TestBrokerCanaryKeepOpen(t *testing.T) {
	wildcard := []byte{0x30, 0x03, 0, 1, '#'} // PUBLISH to topic "#" [MQTT-3.3.2-2]
	for _, canary := range []string{"", "keep-open-on-malformed"} {
		b := serveLimited(t, live.BrokerOptions{Canary: canary})
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(append(append([]byte(nil), connect4...), wildcard...)); err != nil {
			t.Fatal(err)
		}
		if closed := closedWithin(c, 2*time.Second); closed != (canary == "") {
			t.Errorf("canary %q: closed %v", canary, closed)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := live.ServeBroker(ln, live.BrokerOptions{Canary: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown canary "nope"`) {
		t.Errorf("an unknown canary: err %v", err)
	}
}
