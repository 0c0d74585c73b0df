// Command paho-go is the live tester's adapter for Eclipse Paho Go
// (github.com/eclipse/paho.mqtt.golang): one client for the whole life of
// the process, speaking the long-running subject protocol of docs/live.md
// (commands on stdin, events on stdout, one JSON object a line).
//
// The client keeps its session in a file store under the connect command's
// dir (mqtt.NewFileStore), connects with the given Clean Session flag,
// reconnects by itself (AutoReconnect, ConnectRetry), and delivers in order
// (OrderMatters, the default), so the library acknowledges a message after
// the handler returned: the handler writes the delivered event first.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// command is one line of stdin.
type command struct {
	Cmd       string `json:"cmd"`
	ID        string `json:"id"`
	Host      string `json:"host"`
	Port      int    `json:"port"`
	Clean     bool   `json:"clean"`
	KeepAlive int    `json:"keepalive"`
	Dir       string `json:"dir"`
	Topic     string `json:"topic"`
	QoS       byte   `json:"qos"`
	Msg       string `json:"msg"`
}

// out writes events, one JSON object a line, each stamped.
type out struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (o *out) emit(ev map[string]any) {
	ev["time"] = time.Now().UnixMicro()
	b, _ := json.Marshal(ev)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Write(append(b, '\n'))
	o.w.Flush()
}

func main() {
	o := &out{w: bufio.NewWriter(os.Stdout)}
	var c mqtt.Client
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	for in.Scan() {
		var cmd command
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			o.emit(map[string]any{"event": "error", "error": "bad command: " + err.Error()})
			continue
		}
		switch cmd.Cmd {
		case "connect":
			c = connect(o, cmd)
		case "subscribe":
			subscribe(o, c, cmd)
		case "publish":
			publish(o, c, cmd)
		case "disconnect":
			if c != nil {
				c.Disconnect(1000)
			}
		case "exit":
			return
		default:
			o.emit(map[string]any{"event": "error", "error": "unknown command " + cmd.Cmd})
		}
	}
}

// connect creates the client and waits until its first connection is up
// (ConnectRetry: the token completes only then).
func connect(o *out, cmd command) mqtt.Client {
	opts := mqtt.NewClientOptions().
		AddBroker(fmt.Sprintf("tcp://%s:%d", cmd.Host, cmd.Port)).
		SetClientID(cmd.ID).
		SetCleanSession(cmd.Clean).
		SetProtocolVersion(4).
		SetKeepAlive(time.Duration(cmd.KeepAlive) * time.Second).
		SetStore(mqtt.NewFileStore(filepath.Join(cmd.Dir, "paho-store"))).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(200 * time.Millisecond).
		SetMaxReconnectInterval(time.Second).
		SetConnectTimeout(5 * time.Second).
		SetResumeSubs(true).
		SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) { delivered(o, m) }).
		SetConnectionLostHandler(func(_ mqtt.Client, err error) {
			o.emit(map[string]any{"event": "connection_lost", "error": err.Error()})
		})
	var first atomic.Bool
	first.Store(true)
	opts.SetOnConnectHandler(func(mqtt.Client) {
		if !first.Load() { // the first connection's event comes with its Session Present below
			o.emit(map[string]any{"event": "connected"})
		}
	})
	c := mqtt.NewClient(opts)
	tok := c.Connect()
	tok.Wait()
	first.Store(false)
	if err := tok.Error(); err != nil {
		o.emit(map[string]any{"event": "error", "error": "connect: " + err.Error()})
		return c
	}
	ct := tok.(*mqtt.ConnectToken)
	o.emit(map[string]any{"event": "connected", "session_present": ct.SessionPresent()})
	return c
}

// delivered is the message handler: the library acknowledges once it
// returns (OrderMatters), so the application owns the message here.
func delivered(o *out, m mqtt.Message) {
	o.emit(map[string]any{"event": "delivered", "msg": string(m.Payload()), "qos": m.Qos(), "dup": m.Duplicate()})
}

func subscribe(o *out, c mqtt.Client, cmd command) {
	if c == nil {
		o.emit(map[string]any{"event": "error", "error": "subscribe before connect"})
		return
	}
	tok := c.Subscribe(cmd.Topic, cmd.QoS, func(_ mqtt.Client, m mqtt.Message) { delivered(o, m) })
	go func() {
		tok.Wait()
		if err := tok.Error(); err != nil {
			o.emit(map[string]any{"event": "error", "error": "subscribe: " + err.Error()})
			return
		}
		st := tok.(*mqtt.SubscribeToken)
		o.emit(map[string]any{"event": "subscribed", "topic": cmd.Topic, "qos": st.Result()[cmd.Topic]})
	}()
}

// publish hands the message to the library (which writes it to its store
// before returning: accepted) and reports when its token completes.
func publish(o *out, c mqtt.Client, cmd command) {
	if c == nil {
		o.emit(map[string]any{"event": "error", "msg": cmd.Msg, "error": "publish before connect"})
		return
	}
	tok := c.Publish(cmd.Topic, cmd.QoS, false, cmd.Msg)
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			o.emit(map[string]any{"event": "error", "msg": cmd.Msg, "error": "publish: " + err.Error()})
			return
		}
	default:
	}
	o.emit(map[string]any{"event": "accepted", "msg": cmd.Msg})
	go func() {
		tok.Wait()
		if err := tok.Error(); err != nil {
			o.emit(map[string]any{"event": "error", "msg": cmd.Msg, "error": "publish: " + err.Error()})
			return
		}
		o.emit(map[string]any{"event": "published", "msg": cmd.Msg})
	}()
}
