// Command qos2-redeliver shows, without fault injection, what the paho-go
// promise profile declares with client-no-dedup (docs/live.md, promise
// profiles): Eclipse Paho Go (v1.5.1, as go.mod pins it) passes every QoS 2
// PUBLISH it receives to the application, a resent one (DUP=1, same packet
// id, its PUBREL not yet received) too: it keeps no record of the incoming
// QoS 2 packet ids it has delivered (net.go, startIncomingComms, hands every
// PUBLISH to the router; router.go, matchAndDispatch, calls the handler
// with no look at the id). MQTT 3.1.1 §4.3.3 asks the receiver not to
// "cause duplicate messages to be delivered to any onward recipients"
// before the PUBREL.
//
// A scripted broker on a loopback port sends a QoS 2 PUBLISH, reads the
// client's PUBREC and closes the connection before its PUBREL (as if the
// PUBREC had been lost on the way); on the client's reconnection it answers
// Session Present 1 and resends the PUBLISH with DUP=1, as MQTT 3.1.1 §4.4
// has a broker do with a PUBLISH whose PUBREC it did not receive, then
// completes the flow. Exit status 1: the handler ran twice (no duplicate
// suppression); 0: once.
//
//	go run ./live/adapters/paho-go/repro/qos2-redeliver
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

func read(r *bufio.Reader) (byte, []byte, error) {
	h, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, mul := 0, 1
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		n += int(b&127) * mul
		mul *= 128
		if b&128 == 0 {
			break
		}
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return h, body, err
}

// publish is a QoS 2 PUBLISH of "m1" on repro/topic with packet id 1.
func publish(dup bool) []byte {
	h := byte(0x34) // PUBLISH, QoS 2
	if dup {
		h |= 0x08
	}
	topic := "repro/topic"
	body := append([]byte{0, byte(len(topic))}, topic...)
	body = append(body, 0, 1, 'm', '1')
	return append([]byte{h, byte(len(body))}, body...)
}

// until reads packets, answering CONNECT and SUBSCRIBE, until one of type want.
func until(conn net.Conn, r *bufio.Reader, want byte, sp byte) error {
	for {
		h, body, err := read(r)
		if err != nil {
			return err
		}
		switch h >> 4 {
		case 1:
			conn.Write([]byte{0x20, 2, sp, 0}) // CONNACK
		case 8:
			conn.Write([]byte{0x90, 3, body[0], body[1], 2}) // SUBACK, QoS 2
		}
		if h>>4 == want {
			return nil
		}
	}
}

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var calls atomic.Int32
	opts := mqtt.NewClientOptions().AddBroker("tcp://" + l.Addr().String()).SetClientID("repro-dedup").
		SetCleanSession(false).SetAutoReconnect(true).SetResumeSubs(true).
		SetConnectRetryInterval(100 * time.Millisecond).SetMaxReconnectInterval(200 * time.Millisecond).
		SetKeepAlive(30 * time.Second).
		SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) {
			n := calls.Add(1)
			fmt.Printf("handler call %d: %q id %d DUP=%v\n", n, m.Payload(), m.MessageID(), m.Duplicate())
		})
	c := mqtt.NewClient(opts)
	go func() {
		if t := c.Connect(); t.Wait() && t.Error() != nil {
			fmt.Fprintln(os.Stderr, t.Error())
			os.Exit(3)
		}
		c.Subscribe("repro/topic", 2, nil)
	}()
	os.Exit(broker(l, &calls))
}

func broker(l net.Listener, calls *atomic.Int32) int {
	conn, err := l.Accept()
	if err != nil {
		return 3
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	if until(conn, r, 8, 0) != nil { // CONNECT, SUBSCRIBE
		return 3
	}
	conn.Write(publish(false))
	if until(conn, r, 5, 0) != nil { // PUBREC
		return 3
	}
	fmt.Println("connection 1: the broker sent PUBLISH id 1 (QoS 2), the client sent PUBREC; the broker closes the connection before its PUBREL")
	conn.Close()

	conn, err = l.Accept()
	if err != nil {
		return 3
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r = bufio.NewReader(conn)
	if until(conn, r, 1, 1) != nil { // CONNECT, answered with Session Present 1
		return 3
	}
	conn.Write(publish(true))
	fmt.Println("connection 2: the broker resent PUBLISH id 1 with DUP=1 (its PUBREC never reached the broker)")
	if until(conn, r, 5, 1) != nil { // PUBREC
		return 3
	}
	conn.Write([]byte{0x62, 2, 0, 1}) // PUBREL
	if until(conn, r, 7, 1) != nil {  // PUBCOMP
		return 3
	}
	time.Sleep(200 * time.Millisecond) // let a late handler call show
	if n := calls.Load(); n > 1 {
		fmt.Printf("the application got the message %d times: the resent PUBLISH reached the handler again (no QoS 2 duplicate suppression)\n", n)
		return 1
	}
	fmt.Println("the application got the message once")
	return 0
}
