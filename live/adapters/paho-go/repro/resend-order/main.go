// Command resend-order reproduces, without fault injection, the second
// finding of docs/analyses/paho-go.md: Eclipse Paho Go (v1.5.1, as go.mod
// pins it) with Clean Session 0 and its FileStore resends unacknowledged
// PUBLISH packets on reconnection in another order than it first sent
// them, where MQTT 3.1.1 §4.6 says a client re-sending PUBLISH packets
// "MUST re-send them in the order in which the original PUBLISH packets
// were sent" [MQTT-4.6.0-1].
//
// The cause: resume (client.go) resends in the order of the store's All(),
// and FileStore.all (filestore.go) lists the directory (file names, so
// "o.10" before "o.2") and sorts it with sort.Sort, which is not stable, by
// each file's ModTime; files written within one tick of the file system's
// timestamps compare equal.
//
// A scripted broker on a loopback port answers CONNECT with CONNACK, reads
// the client's QoS 2 PUBLISH packets without acknowledging them, and closes
// the connection. The client reconnects by itself; the broker answers with
// Session Present 1 and compares the order of the resent PUBLISH packets
// with the first. Exit status 1: the order differs (the finding holds); 0:
// the same order; 3: the client did not get that far.
//
//	go run ./live/adapters/paho-go/repro/resend-order
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// n is the number of messages published while the broker acknowledges none.
const n = 100

func read(r *bufio.Reader) (head byte, body []byte, err error) {
	h, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	size, mul := 0, 1
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		size += int(b&127) * mul
		mul *= 128
		if b&128 == 0 {
			break
		}
	}
	body = make([]byte, size)
	_, err = io.ReadFull(r, body)
	return h, body, err
}

// publishes reads the first CONNECT, answers it with a CONNACK of Session
// Present sp, and returns the packet ids of the next n PUBLISH packets.
func publishes(conn net.Conn, sp byte) ([]int, error) {
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	var ids []int
	for len(ids) < n {
		h, body, err := read(r)
		if err != nil {
			return ids, err
		}
		switch h >> 4 {
		case 1:
			conn.Write([]byte{0x20, 2, sp, 0}) // CONNACK
		case 3:
			tl := int(body[0])<<8 | int(body[1])
			ids = append(ids, int(body[2+tl])<<8|int(body[3+tl]))
		}
	}
	return ids, nil
}

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	dir, _ := os.MkdirTemp("", "paho-store-")
	defer os.RemoveAll(dir)
	os.Exit(run(l, dir))
}

func run(l net.Listener, dir string) int {
	opts := mqtt.NewClientOptions().AddBroker("tcp://" + l.Addr().String()).SetClientID("repro-order").
		SetCleanSession(false).SetStore(mqtt.NewFileStore(dir)).SetAutoReconnect(true).
		SetConnectRetryInterval(100 * time.Millisecond).SetMaxReconnectInterval(200 * time.Millisecond).
		SetKeepAlive(30 * time.Second)
	c := mqtt.NewClient(opts)
	go func() {
		if t := c.Connect(); t.Wait() && t.Error() != nil {
			fmt.Fprintln(os.Stderr, t.Error())
			os.Exit(3)
		}
		for i := 1; i <= n; i++ {
			c.Publish("repro/topic", 2, false, fmt.Sprintf("m%d", i))
		}
	}()

	conn, err := l.Accept()
	if err != nil {
		return 3
	}
	first, err := publishes(conn, 0)
	if err != nil {
		fmt.Printf("connection 1: %d of %d PUBLISH packets, then %v\n", len(first), n, err)
		return 3
	}
	fmt.Printf("connection 1: the client sent %d QoS 2 PUBLISH packets, ids %s; none acknowledged; the broker closes the connection\n", n, span(first))
	stored := storeOrder(dir)
	conn.Close()

	conn, err = l.Accept()
	if err != nil {
		return 3
	}
	defer conn.Close()
	again, err := publishes(conn, 1)
	if err != nil {
		fmt.Printf("connection 2: %d of %d resent PUBLISH packets, then %v\n", len(again), n, err)
		return 3
	}
	pos := map[int]int{}
	for i, id := range first {
		pos[id] = i
	}
	inversions := 0
	for i := 1; i < len(again); i++ {
		if pos[again[i]] < pos[again[i-1]] {
			if inversions == 0 {
				fmt.Printf("connection 2: the client resent id %d right after id %d, which it first sent later\n", again[i], again[i-1])
			}
			inversions++
		}
	}
	fmt.Printf("the store's files by modification time: %s\n", stored)
	if inversions > 0 {
		fmt.Printf("FINDING: %d of %d resent PUBLISH packets came before one first sent earlier (MQTT 3.1.1 §4.6: MUST re-send them in the order in which the original PUBLISH packets were sent)\n", inversions, n)
		fmt.Printf("resend order: %v\n", again)
		return 1
	}
	fmt.Println("connection 2: the client resent every PUBLISH in its original order")
	return 0
}

// span describes ids as a range when they are consecutive.
func span(ids []int) string {
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			return fmt.Sprint(ids)
		}
	}
	return fmt.Sprintf("%d..%d in order", ids[0], ids[len(ids)-1])
}

// storeOrder tells how many distinct modification times the store's files
// have: files written within one tick of the file system's timestamps
// compare equal in FileStore.all's sort.
func storeOrder(dir string) string {
	entries, _ := os.ReadDir(dir)
	times := map[time.Time]int{}
	files := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".msg") {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		files++
		times[info.ModTime()]++
	}
	return fmt.Sprintf("%d files, %d distinct modification times", files, len(times))
}
