// Command resend-after-pubrel reproduces, without fault injection, the
// finding of docs/analyses/paho-go.md: Eclipse Paho Go (v1.5.1, as go.mod
// pins it) with Clean Session 0 resends a QoS 2 PUBLISH, DUP=1, on
// reconnection after it had sent that message's PUBREL, where MQTT 3.1.1
// §4.3.3 says the sender "MUST NOT re-send the PUBLISH once it has sent the
// corresponding PUBREL packet" and §4.4 that it re-sends "any
// unacknowledged PUBLISH Packets (where QoS > 0) and PUBREL Packets".
//
// A scripted broker on a loopback port answers CONNECT with CONNACK and
// the PUBLISH with PUBREC, reads the PUBREL, and closes the connection
// before its PUBCOMP (as a lost connection does). The client reconnects by
// itself; the broker prints what the second connection carries and
// answers it in full. Exit status 1: the finding holds (a PUBLISH came
// again); 0: the client resent the PUBREL as the spec asks.
//
//	go run ./live/adapters/paho-go/repro/resend-after-pubrel
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// packet is one MQTT control packet: its first byte and its body.
type packet struct {
	head byte
	body []byte
}

func (p packet) kind() string {
	names := map[byte]string{1: "CONNECT", 3: "PUBLISH", 6: "PUBREL", 12: "PINGREQ", 14: "DISCONNECT", 8: "SUBSCRIBE"}
	if n, ok := names[p.head>>4]; ok {
		return n
	}
	return fmt.Sprintf("type %d", p.head>>4)
}

func read(r *bufio.Reader) (packet, error) {
	h, err := r.ReadByte()
	if err != nil {
		return packet{}, err
	}
	n, mul := 0, 1
	for {
		b, err := r.ReadByte()
		if err != nil {
			return packet{}, err
		}
		n += int(b&127) * mul
		mul *= 128
		if b&128 == 0 {
			break
		}
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return packet{h, body}, err
}

// publishID is a PUBLISH's packet id (QoS > 0).
func publishID(p packet) []byte {
	tl := int(p.body[0])<<8 | int(p.body[1])
	return p.body[2+tl : 4+tl]
}

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	dir, _ := os.MkdirTemp("", "paho-store-")
	defer os.RemoveAll(dir)
	result := make(chan int, 1)
	go broker(l, result)

	opts := mqtt.NewClientOptions().AddBroker("tcp://" + l.Addr().String()).SetClientID("repro").
		SetCleanSession(false).SetStore(mqtt.NewFileStore(dir)).SetAutoReconnect(true).
		SetConnectRetryInterval(100 * time.Millisecond).SetMaxReconnectInterval(200 * time.Millisecond).
		SetKeepAlive(30 * time.Second)
	c := mqtt.NewClient(opts)
	if t := c.Connect(); t.Wait() && t.Error() != nil {
		fmt.Fprintln(os.Stderr, t.Error())
		os.Exit(3)
	}
	c.Publish("repro/topic", 2, false, "m1")
	select {
	case code := <-result:
		os.Exit(code)
	case <-time.After(10 * time.Second):
		fmt.Println("no second connection within 10 s")
		os.Exit(3)
	}
}

// broker scripts the two connections.
func broker(l net.Listener, result chan<- int) {
	// First connection: CONNACK, PUBREC for the PUBLISH, then close after the PUBREL.
	conn, err := l.Accept()
	if err != nil {
		return
	}
	r := bufio.NewReader(conn)
	for {
		p, err := read(r)
		if err != nil {
			return
		}
		fmt.Printf("connection 1: client sent %s\n", p.kind())
		switch p.head >> 4 {
		case 1:
			conn.Write([]byte{0x20, 2, 0, 0}) // CONNACK, Session Present 0, accepted
		case 3:
			id := publishID(p)
			conn.Write([]byte{0x50, 2, id[0], id[1]}) // PUBREC
		case 6:
			fmt.Println("connection 1: broker closes the connection before its PUBCOMP")
			conn.Close()
			second(l, result)
			return
		}
	}
}

// second reads the reconnection and judges it.
func second(l net.Listener, result chan<- int) {
	conn, err := l.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		p, err := read(r)
		if err != nil {
			return
		}
		fmt.Printf("connection 2: client sent %s", p.kind())
		switch p.head >> 4 {
		case 1:
			fmt.Println()
			conn.Write([]byte{0x20, 2, 1, 0}) // CONNACK, Session Present 1: the broker kept the session
		case 3:
			fmt.Printf(" (DUP=%d) of a message whose PUBREL it sent on connection 1\n", p.head>>3&1)
			fmt.Println("FINDING: the client re-sent the PUBLISH after its PUBREL (MQTT 3.1.1 §4.3.3: MUST NOT)")
			result <- 1
			return
		case 6:
			fmt.Println()
			fmt.Println("the client re-sent the PUBREL, as MQTT 3.1.1 §4.4 asks")
			result <- 0
			return
		default:
			fmt.Println()
		}
	}
}
