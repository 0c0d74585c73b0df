package live

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeBroker listens on a kernel-chosen port and answers every connection
// with answer (after reading its first bytes), then closes it: a broker
// that refuses whatever the client says.
func fakeBroker(t *testing.T, answer []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				if _, err := c.Read(buf); err != nil && err != io.EOF {
					return
				}
				_, _ = c.Write(answer)
			}()
		}
	}()
	return ln.Addr().String()
}

// startFails runs a live test that must not start, and returns its error
// and how long it took to give up.
func startFails(t *testing.T, cfg TestConfig) (error, time.Duration) {
	t.Helper()
	cfg.Seed, cfg.Dir, cfg.Faults = 1, t.TempDir(), nil
	start := time.Now()
	rep, err := RunTest(t.Context(), cfg)
	took := time.Since(start)
	if rep != nil || !errors.Is(err, ErrNotStarted) {
		t.Fatalf("want no report and ErrNotStarted, got report %v, error %v", rep != nil, err)
	}
	return err, took
}

// startBound is how long a start that cannot succeed may take to say so
// (the start timeout is 10 s: a diagnosis must come well before it). Not a
// timing assertion on the machine's speed: a failure names the reason.
const startBound = 5 * time.Second

// TestStartRefusedVersion: a 3.1.1-only broker that answers our 5.0
// CONNECT with CONNACK 0x01 is named as a version refusal, with the flag
// that changes it, within seconds.
func TestStartRefusedVersion(t *testing.T) {
	cfg := DefaultTestConfig()
	cfg.Broker = BrokerSubject{Name: "fake 3.1.1-only broker", Addr: fakeBroker(t, []byte{0x20, 0x02, 0x00, 0x01})}
	err, took := startFails(t, cfg)
	for _, want := range []string{"CONNACK 0x1", "unacceptable protocol version", "MQTT 5.0", "-version 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if took > startBound {
		t.Errorf("took %v to say why (bound %v): %v", took, startBound, err)
	}
}

// TestStartClosedOnConnect: a broker that closes the connection on a
// CONNECT it does not understand gets the same version hint.
func TestStartClosedOnConnect(t *testing.T) {
	cfg := DefaultTestConfig()
	cfg.Broker = BrokerSubject{Name: "fake closing broker", Addr: fakeBroker(t, nil)}
	err, took := startFails(t, cfg)
	if !strings.Contains(err.Error(), "without a CONNACK") || !strings.Contains(err.Error(), "-version 3") {
		t.Errorf("error lacks the closed connections and the version hint: %v", err)
	}
	if took > startBound {
		t.Errorf("took %v to say why: %v", took, err)
	}
}

// TestStartUnreachableBrokerAddr: a -broker-addr nothing listens on is a
// connection error at once.
func TestStartUnreachableBrokerAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := DefaultTestConfig()
	cfg.Broker = BrokerSubject{Name: "nothing", Addr: addr}
	err, _ = startFails(t, cfg)
	if !strings.Contains(err.Error(), "cannot connect to the broker at "+addr) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error lacks the connection error: %v", err)
	}
}

// TestStartMissingSubscriberCommand: a subscriber command that does not
// exist is named as an exec error with the shell's words, within seconds.
func TestStartMissingSubscriberCommand(t *testing.T) {
	cfg := DefaultTestConfig()
	cfg.Broker = BrokerSubject{Name: "fake", Addr: fakeBroker(t, []byte{0x20, 0x03, 0x00, 0x00, 0x00})}
	cfg.Subscriber = "mqttlab-no-such-command {port} {id} {topic} {qos}"
	err, took := startFails(t, cfg)
	for _, want := range []string{"status 127", "exec error", "mqttlab-no-such-command"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if took > startBound {
		t.Errorf("took %v to say why: %v", took, err)
	}
}
